import Foundation
import JSONLedgerTestSupport
import Testing

/// `import --chunk-size` on a replica: a batch per part, each through the remote's head lock.
@Suite("A chunked import through a replica", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicaImportTests {
  /// - Reliability: `import --chunk-size` on a replica: each part through the remote; a rerun on the other
  ///   replica skips every part by its key
  /// - Size: 3 parts
  @Test(.tags(.reliability)) func eachPartIsAWriteThroughTheRemoteAndARerunAnywhereSkipsThePartsApplied() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let file = try directory.write("big.json", ReplicaFixtures.albums("big", count: 7))
    let arguments = ["--entity", "Album", "--chunk-size", "3", "--idempotency-key", "big"]
    let first = try ReplicationTests.run(["import", clone, file] + arguments)
    #expect(first.output.contains("batches 2–4"), "\(first.output)")
    // Each part's key names its number and its text's digest.
    let keys = try cluster.psql(
      "SELECT string_agg(idempotency_key, ',' ORDER BY batch) FROM jsonledger_log WHERE batch > 1"
    ).split(separator: ",")
    #expect(keys.count == 3)
    #expect(keys.enumerated().allSatisfy { $0.element.hasPrefix("big#\($0.offset + 1)@") }, "\(keys)")
    // Again, on the other machine: each part is found by its key under the remote's lock.
    let again = try ReplicationTests.run(["import", leader, file] + arguments)
    #expect(again.output.contains("3 parts were already applied"), "\(again.output)")
    #expect(try cluster.psql("SELECT max(batch) FROM jsonledger_log") == "4")
    try ReplicationTests.expectIdentical([leader, clone])
  }
}
