import Foundation
@_spi(Replication) import JSONLedger
import JSONLedgerTestSupport
import Testing

@testable import JSONLedgerPostgres

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

/// A publish interrupted (a crash, a kill) after it marked the store and before the remote
/// committed leaves a store marked for a remote that holds nothing of it: publishing again
/// must finish it, and a store published whole must stay the replica it is.
@Suite(
  "Publishing again: an interrupted publish finishes",
  .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct PublishAgainTests {
  /// A store of the fixture model with one batch, open, and a remote on a cluster of its own.
  static func store(in directory: TemporaryDirectory, cluster: PostgresCluster) throws -> (Ledger, RemoteLocation) {
    let store = try ReplicaFixtures.plainStore(in: directory)
    let ledger = try Ledger.open(at: store)
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(ReplicaFixtures.albums("first", count: 3).utf8), as: "Album")
    _ = try ledger.applySynchronously(batch)
    return (ledger, try RemoteLocation(url: cluster.url, ledger: "main", environment: [:]))
  }

  @Test func aPublishInterruptedBeforeTheRemoteCommittedIsFinishedByPublishingAgain() async throws {
    let directory = try TemporaryDirectory()
    let cluster = try PostgresCluster()
    let (ledger, remote) = try Self.store(in: directory, cluster: cluster)
    defer { ledger.close() }
    // What an interrupted publish leaves: the mark, set first, and nothing on the remote.
    try ledger.setReplicaSource(remote.remembered)
    let replica = try await Replica.publish(ledger, to: remote)
    #expect(try ledger.replicaSource == remote.remembered)
    #expect(try cluster.psql("SELECT head FROM jsonledger_ledgers WHERE ledger = 'main'") == "\(try ledger.head)")
    #expect(try await replica.sync().applied == 0)
  }

  @Test func publishingAPublishedStoreAgainAnswersTheReplicaItIs() async throws {
    let directory = try TemporaryDirectory()
    let cluster = try PostgresCluster()
    let (ledger, remote) = try Self.store(in: directory, cluster: cluster)
    defer { ledger.close() }
    _ = try await Replica.publish(ledger, to: remote)
    // Also what a publish killed after the remote committed, before it answered, leaves.
    let again = try await Replica.publish(ledger, to: remote)
    #expect(try ledger.replicaSource == remote.remembered)
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log WHERE ledger = 'main'") == "1")
    #expect(try await again.sync().applied == 0)
  }

  @Test func aMarkedStoreWhoseRemoteCannotBeReachedStaysMarked() async throws {
    let directory = try TemporaryDirectory()
    let cluster = try PostgresCluster()
    let (ledger, remote) = try Self.store(in: directory, cluster: cluster)
    defer { ledger.close() }
    _ = try await Replica.publish(ledger, to: remote)
    try cluster.stop()
    // The remote holds this store's log, but cannot say so now: the mark stays.
    await #expect(throws: (any Error).self) { try await Replica.publish(ledger, to: remote) }
    #expect(try ledger.replicaSource == remote.remembered)
  }

  @Test func aStoreMarkedForALedgerTheRemoteHoldsAnotherLogOfIsRefusedAndUnmarked() async throws {
    let directory = try TemporaryDirectory()
    let cluster = try PostgresCluster()
    let (other, remote) = try Self.store(in: directory, cluster: cluster)
    _ = try await Replica.publish(other, to: remote)
    other.close()
    let store = try ReplicaFixtures.plainStore(in: directory)
    let ledger = try Ledger.open(at: store)
    defer { ledger.close() }
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(ReplicaFixtures.albums("second", count: 2).utf8), as: "Album")
    _ = try ledger.applySynchronously(batch)
    try ledger.setReplicaSource(remote.remembered)
    await #expect(throws: RemoteError.self) { try await Replica.publish(ledger, to: remote) }
    #expect(try ledger.replicaSource == nil)
    // A store with no batch yet too: an empty log is every log's start.
    let empty = try Ledger.open(at: try ReplicaFixtures.plainStore(in: directory))
    defer { empty.close() }
    try empty.setReplicaSource(remote.remembered)
    await #expect(throws: RemoteError.self) { try await Replica.publish(empty, to: remote) }
    #expect(try empty.replicaSource == nil)
  }

  /// A real `remote init` killed while it uploads (its mark set, the remote's transaction open)
  /// is finished by running it again: the remote then holds every batch and the store writes
  /// through it. Wherever the kill lands (before the mark, during the upload, after the
  /// commit), the second run ends in the same place.
  ///
  /// - Reliability: A `remote init` killed with SIGKILL while it uploads (400 ms into 1,500 batches: the store
  ///   marked, the remote's transaction open, no tables after): run again, it finishes, and the
  ///   store writes through the remote. Publishing a published store again answers the replica; a
  ///   remote that cannot be reached leaves an unmarked store unmarked and a marked one marked; a
  ///   store marked for a ledger that holds another log is refused and unmarked
  /// - Size: 1 kill, 4 cases
  @Test(.tags(.reliability)) func aRemoteInitKilledWhileItUploadsIsFinishedByRunningItAgain() throws {
    let directory = try TemporaryDirectory()
    let cluster = try PostgresCluster()
    let store = try ReplicaFixtures.plainStore(in: directory)
    let albums = try directory.write("albums.json", ReplicaFixtures.albums("a", count: 1500))
    let imported = try CommandRunner.run(["import", store, albums, "--entity", "Album", "--chunk-size", "1"])
    #expect(imported.status == 0, "\(imported.error)")
    let process = Process()
    process.executableURL = CommandRunner.executable
    process.arguments = ["remote", "init", store, "--remote", cluster.url, "--ledger", "main"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    Thread.sleep(forTimeInterval: 0.4)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let again = try CommandRunner.run(["remote", "init", store, "--remote", cluster.url, "--ledger", "main"])
    #expect(again.status == 0, "\(again.error)")
    #expect(try cluster.psql("SELECT head FROM jsonledger_ledgers WHERE ledger = 'main'") == "1500")
    let more = try directory.write("more.json", ReplicaFixtures.albums("b", count: 2))
    let written = try CommandRunner.run(["import", store, more, "--entity", "Album"])
    #expect(written.status == 0, "\(written.error)")
    #expect(try cluster.psql("SELECT max(batch) FROM jsonledger_log WHERE ledger = 'main'") == "1501")
  }
}
