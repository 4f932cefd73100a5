import Foundation
import JSONLedgerTestSupport
import Testing

/// Compaction on replicated ledgers: a replica compacts its own store and publishes the
/// checkpoint as a snapshot; the remote's log keeps every batch, so no other replica is
/// affected, and a new replica starts from the snapshot and the tail.
@Suite("Compaction of replicas", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicaCompactionTests {
  static func importAlbums(_ store: String, _ name: String, in directory: TemporaryDirectory) throws {
    let file = try directory.write("\(name).json", ReplicaFixtures.albums(name, count: 3))
    try ReplicationTests.run(["import", store, file, "--entity", "Album", "--idempotency-key", name])
  }

  /// - Reliability: A replica compacted (keeping 1 batch, and keeping none): others, a lagging one included, go
  ///   on; a clone from its snapshot and one from batch 1 are identical; a compaction whose
  ///   snapshot could not be published (remote down, tables of version 1) publishes it when run
  ///   again
  /// - Size: 8 batches, 6 stores
  @Test(.tags(.reliability)) func aReplicaCompactsAndANewCloneStartsFromItsSnapshotWhileOthersGoOn() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let writer = directory.path + "/writer"
    try ReplicationTests.run(["clone", cluster.url, writer, "--ledger", "main"])
    let lagging = directory.path + "/lagging"
    try ReplicationTests.run(["clone", cluster.url, lagging, "--ledger", "main"])
    for name in ["two", "three", "four"] { try Self.importAlbums(writer, name, in: directory) }
    try ReplicationTests.run(["follow", leader, "--until-caught-up"])

    let compacted = try ReplicationTests.run(["compact", leader, "--keep-batches", "1", "--discard"])
    #expect(compacted.output.contains("published as the remote's snapshot"), "\(compacted.output)")
    #expect(try cluster.psql("SELECT batch, model_version FROM jsonledger_snapshots") == "3|1")
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log") == "4")
    // Others go on: the writer writes, the lagging one catches up from batch 1, the
    // compacted one follows and writes from its checkpoint.
    try Self.importAlbums(writer, "five", in: directory)
    try Self.importAlbums(leader, "six", in: directory)
    let fresh = directory.path + "/fresh"
    let cloned = try ReplicationTests.run(["clone", cluster.url, fresh, "--ledger", "main"])
    #expect(cloned.output.contains("from the snapshot at batch 3"), "\(cloned.output)")
    let full = directory.path + "/full"
    let replayed = try ReplicationTests.run(["clone", cluster.url, full, "--ledger", "main", "--full-log"])
    #expect(!replayed.output.contains("snapshot"), "\(replayed.output)")
    try ReplicationTests.expectIdentical([writer, leader, lagging, fresh, full])
    // The as-of reads the snapshot covers are refused there, and answered by the full clone.
    #expect(try CommandRunner.run(["get", fresh, "Album", "two-0", "--as-of", "2"]).status != 0)
    #expect(try ReplicationTests.run(["get", full, "Album", "two-0", "--as-of", "2"]).output.contains("two-0"))

    // Compacted to its head, a replica's next record chains to the checkpoint's original.
    try ReplicationTests.run(["compact", fresh, "--keep-batches", "0", "--discard"])
    #expect(try cluster.psql("SELECT string_agg(batch::text, ',' ORDER BY batch) FROM jsonledger_snapshots") == "3,6")
    try Self.importAlbums(writer, "seven", in: directory)
    try Self.importAlbums(fresh, "eight", in: directory)
    let newest = directory.path + "/newest"
    let again = try ReplicationTests.run(["clone", cluster.url, newest, "--ledger", "main"])
    #expect(again.output.contains("from the snapshot at batch 6"), "\(again.output)")
    try ReplicationTests.expectIdentical([writer, leader, lagging, fresh, full, newest])
  }

  /// A clone running while another replica compacts and publishes a snapshot: the clone
  /// reads the log it started from and ends whole; the next clone starts from the snapshot.
  @Test func aCloneRunningWhileAnotherReplicaCompactsEndsWhole() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    for part in 0..<4 {
      let file = try directory.write("p\(part).json", ReplicaFixtures.albums("p\(part)", count: 5_000))
      try ReplicationTests.run(["import", leader, file, "--entity", "Album"])
    }
    let cloning = directory.path + "/cloning"
    let clone = try ReplicationTests.start(
      "exec \"$J\" clone '\(cluster.url)' '\(cloning)' --ledger main --full-log")
    try ReplicationTests.run(["compact", leader, "--keep-batches", "1", "--discard"])
    ReplicationTests.wait(clone, seconds: 120, "the clone")
    #expect(clone.terminationStatus == 0)
    // Past a megabyte, the checkpoint is kept in parts, which the next clone reads in order.
    let parts = try cluster.psql("SELECT chunks FROM jsonledger_snapshots")
    let size = try cluster.psql("SELECT record_bytes FROM jsonledger_snapshots")
    #expect((Int(parts) ?? 0) > 1, "\(parts) part(s) of \(size) bytes")
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_snapshot_chunks") == parts)
    let next = directory.path + "/next"
    let cloned = try ReplicationTests.run(["clone", cluster.url, next, "--ledger", "main"])
    #expect(cloned.output.contains("from the snapshot at batch 4"), "\(cloned.output)")
    try ReplicationTests.expectIdentical([leader, cloning, next])
  }

  /// A snapshot published before snapshots came in parts (tables of version 2: the whole
  /// checkpoint in one row) still starts a clone, before and after the tables move to
  /// version 3; a snapshot whose parts do not add up is refused, naming the batch, and
  /// nothing is left behind.
  @Test func aSnapshotInOneRowStillReadsAndOneWhosePartsDoNotAddUpIsRefused() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    for name in ["two", "three"] { try Self.importAlbums(leader, name, in: directory) }
    try ReplicationTests.run(["compact", leader, "--keep-batches", "1", "--discard"])
    #expect(try cluster.psql("SELECT chunks FROM jsonledger_snapshots") == "1")
    // The tables as an older release left them.
    _ = try cluster.psql(
      """
      UPDATE jsonledger_snapshots s SET record = (SELECT string_agg(bytes, ''::bytea ORDER BY chunk)
        FROM jsonledger_snapshot_chunks c WHERE c.ledger = s.ledger AND c.batch = s.batch);
      DROP TABLE jsonledger_snapshot_chunks;
      ALTER TABLE jsonledger_snapshots DROP COLUMN chunks, DROP COLUMN record_bytes, DROP COLUMN record_sha256;
      UPDATE jsonledger_schema SET version = 2;
      """)
    let old = directory.path + "/old"
    let cloned = try ReplicationTests.run(["clone", cluster.url, old, "--ledger", "main"])
    #expect(cloned.output.contains("from the snapshot at batch 2"), "\(cloned.output)")
    // Published again at the same batch: the tables move to version 3, the row stays as it is.
    try ReplicationTests.run(["compact", leader, "--keep-batches", "1", "--discard"])
    #expect(try cluster.psql("SELECT max(version) FROM jsonledger_schema") == "3")
    #expect(try cluster.psql("SELECT chunks, length(record) > 0 FROM jsonledger_snapshots") == "0|t")
    let upgraded = directory.path + "/upgraded"
    let again = try ReplicationTests.run(["clone", cluster.url, upgraded, "--ledger", "main"])
    #expect(again.output.contains("from the snapshot at batch 2"), "\(again.output)")
    try ReplicationTests.expectIdentical([leader, old, upgraded])

    // A newer snapshot in parts, then one part altered, then one missing.
    try Self.importAlbums(leader, "four", in: directory)
    try ReplicationTests.run(["follow", upgraded, "--until-caught-up"])
    try ReplicationTests.run(["compact", upgraded, "--keep-batches", "0", "--discard"])
    #expect(try cluster.psql("SELECT batch, chunks FROM jsonledger_snapshots ORDER BY batch") == "2|0\n4|1")
    _ = try cluster.psql(
      "UPDATE jsonledger_snapshot_chunks SET bytes = overlay(bytes PLACING '\\x00ff'::bytea FROM 40)")
    let altered = try CommandRunner.run(["clone", cluster.url, directory.path + "/altered", "--ledger", "main"])
    #expect(altered.status != 0)
    #expect(altered.error.contains("batch 4") && altered.error.contains("checksum"), "\(altered.error)")
    _ = try cluster.psql("DELETE FROM jsonledger_snapshot_chunks")
    let missing = try CommandRunner.run(["clone", cluster.url, directory.path + "/missing", "--ledger", "main"])
    #expect(missing.status != 0)
    #expect(missing.error.contains("has 0 of its 1 parts"), "\(missing.error)")
    // A row claiming a petabyte is an error too, with nothing reserved for it.
    _ = try cluster.psql("UPDATE jsonledger_snapshots SET chunks = 2000000000, record_bytes = 1e15 WHERE batch = 4")
    let claimed = try CommandRunner.run(["clone", cluster.url, directory.path + "/claimed", "--ledger", "main"])
    #expect(claimed.status != 0)
    #expect(claimed.error.contains("has 0 of its 2000000000 parts"), "\(claimed.error)")
    for name in ["altered", "missing", "claimed"] {
      #expect(!FileManager.default.fileExists(atPath: directory.path + "/" + name))
      #expect(!FileManager.default.fileExists(atPath: directory.path + "/" + name + ".cloning"))
    }
    // The log is whole: a clone that replays it does not need the snapshot.
    let full = directory.path + "/full"
    try ReplicationTests.run(["clone", cluster.url, full, "--ledger", "main", "--full-log"])
    try ReplicationTests.expectIdentical([leader, upgraded, full])
  }

  /// With the remote down the store is compacted but the snapshot is not published: the
  /// command fails saying so, and run again it publishes it. An older remote (tables of
  /// version 1, before snapshots) is brought to version 3 on the way.
  @Test func aSnapshotThatCouldNotBePublishedIsPublishedByARerun() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    for name in ["two", "three"] { try Self.importAlbums(leader, name, in: directory) }
    _ = try cluster.psql(
      "DROP TABLE jsonledger_snapshot_chunks, jsonledger_snapshots; UPDATE jsonledger_schema SET version = 1")
    try cluster.stop()
    let failed = try CommandRunner.run(["compact", leader, "--keep-batches", "1", "--discard"])
    #expect(failed.status != 0)
    #expect(failed.error.contains("unavailable"), "\(failed.error)")
    try cluster.start()
    let rerun = try ReplicationTests.run(["compact", leader, "--keep-batches", "1", "--discard"])
    #expect(rerun.output.contains("published as the remote's snapshot"), "\(rerun.output)")
    #expect(try cluster.psql("SELECT max(version) FROM jsonledger_schema") == "3")
    #expect(try cluster.psql("SELECT batch FROM jsonledger_snapshots") == "2")
    let fresh = directory.path + "/fresh"
    try ReplicationTests.run(["clone", cluster.url, fresh, "--ledger", "main"])
    try ReplicationTests.expectIdentical([leader, fresh])
  }
}
