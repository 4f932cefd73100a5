import Foundation
@_spi(Replication) import JSONLedger
import JSONLedgerPostgres
import JSONLedgerTestSupport
import Testing

/// Publishing marks the store a replica before it uploads (so that no local write slips in
/// between); a publish that fails must take the mark back, or the store refuses every local
/// write as a replica's.
@Suite("Publishing: a store whose publish failed is the store it was")
struct PublishTests {
  @Test func aRemoteThatCannotBeReachedLeavesTheStoreWritable() async throws {
    let directory = try TemporaryDirectory()
    let store = try ReplicaFixtures.plainStore(in: directory)
    let ledger = try Ledger.open(at: store)
    defer { ledger.close() }
    let port = try PostgresCluster.freePort()
    let remote = try RemoteLocation(
      url: "postgres://nobody@127.0.0.1:\(port)/ledgers", ledger: "main", environment: [:])
    await #expect(throws: (any Error).self) { try await Replica.publish(ledger, to: remote) }
    #expect(try ledger.replicaSource == nil)
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(#"[{"name": "Tago Mago"}]"#.utf8), as: "Album")
    #expect(try ledger.applySynchronously(batch).created == 1)
  }
}
