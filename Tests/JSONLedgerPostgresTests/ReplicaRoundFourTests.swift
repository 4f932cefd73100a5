import Foundation
import JSONLedgerTestSupport
import Testing

/// The replica findings of the fourth reliability round, against real clusters: a log whose
/// rows lie, ledger names and folders with URL characters, clones that must not destroy what
/// is not theirs, and TLS.
@Suite("Replicas, round four", .enabled(if: PostgresCluster.isAvailable))
struct ReplicaRoundFourTests {
  typealias Run = ReplicationTests

  /// H4: an old record inserted again as the next batch (its checksum and chain made right,
  /// triggers on) is refused by every replica that meets it, naming it; nothing applied.
  ///
  /// - Reliability: An old record inserted again as the next batch (its chain made right, triggers on): a
  ///   follower stops naming "the record of batch 1, stored again as batch 3", nothing applied; a
  ///   clone fails and leaves nothing (H4)
  /// - Size: 1 record
  @Test(.tags(.reliability)) func anOldRecordInsertedAgainAsTheNextBatchIsRefusedNotAppliedForever() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try Run.run(["clone", cluster.url, clone, "--ledger", "main"])
    let second = try directory.write("second.json", ReplicaFixtures.albums("second", count: 2))
    try Run.run(["import", leader, second, "--entity", "Album"])
    _ = try cluster.psql(
      """
      INSERT INTO jsonledger_log (ledger, batch, kind, model_version, prev_sha256, sha256, writer, record)
      SELECT ledger, 3, kind, model_version, (SELECT sha256 FROM jsonledger_log WHERE batch = 2), sha256, 'x', record
      FROM jsonledger_log WHERE batch = 1
      """)
    let follow = try CommandRunner.run(["follow", clone, "--until-caught-up"])
    #expect(follow.status != 0)
    #expect(follow.error.contains("record of batch 1, stored again as batch 3"), "\(follow.error)")
    #expect(try Run.head(of: clone) == 2)
    let fresh = try CommandRunner.run(["clone", cluster.url, directory.path + "/fresh", "--ledger", "main"])
    #expect(fresh.status != 0)
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/fresh"))
  }

  /// H5 and H6: `remote verify` reads every record's bytes, and a head row that says more than
  /// the log holds is named, by verify, clone and follow alike (no clone one short, no wait
  /// forever).
  ///
  /// - Reliability: A remote record's bytes damaged with its checksum column left alone: `remote verify` names
  ///   the batch; a head row ahead of the log end: clone and `follow --until-caught-up` fail
  ///   naming both (H5, H6)
  /// - Size: 2 cases
  @Test(.tags(.reliability)) func damagedBytesAndAHeadRowAheadOfTheLogAreFound() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let second = try directory.write("second.json", ReplicaFixtures.albums("second", count: 2))
    try Run.run(["import", leader, second, "--entity", "Album"])
    #expect(try CommandRunner.run(["remote", "verify", leader]).status == 0)
    _ = try cluster.psql(
      """
      ALTER TABLE jsonledger_log DISABLE TRIGGER ALL;
      UPDATE jsonledger_log SET record = overlay(record placing '\\xff'::bytea from 30 for 1) WHERE batch = 2;
      ALTER TABLE jsonledger_log ENABLE TRIGGER ALL;
      """)
    let damaged = try CommandRunner.run(["remote", "verify", leader])
    #expect(damaged.status != 0)
    #expect(damaged.error.contains("batch 2"), "\(damaged.error)")
    _ = try cluster.psql(
      """
      ALTER TABLE jsonledger_log DISABLE TRIGGER ALL;
      DELETE FROM jsonledger_log WHERE batch = 2;
      ALTER TABLE jsonledger_log ENABLE TRIGGER ALL;
      """)
    let verify = try CommandRunner.run(["remote", "verify", leader])
    #expect(verify.error.contains("head row says batch 2, but its log ends at batch 1"), "\(verify.error)")
    let clone = try CommandRunner.run(["clone", cluster.url, directory.path + "/clone", "--ledger", "main"])
    #expect(clone.status != 0)
    #expect(clone.error.contains("its log ends at batch 1"), "\(clone.error)")
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/clone"))
  }

  /// H2: a ledger name with `#` and a socket folder with `&` and `#` are stored escaped: the
  /// replica follows its own ledger, not another whose name is a prefix of its own.
  ///
  /// - Reliability: A ledger `team#a` beside a ledger `team` on one cluster: published, cloned, written and
  ///   followed as itself, `team` untouched (H2); URLs that do not parse and `?password=` never
  ///   print the password (H10, unit tests)
  /// - Size: 2 ledgers
  @Test(.tags(.reliability)) func ledgerNamesAndFoldersWithURLCharactersReadBackAsThemselves() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let ours = try ReplicaFixtures.published(in: directory, cluster: cluster, ledger: "team#a")
    let theirsDirectory = try TemporaryDirectory()
    _ = try ReplicaFixtures.published(in: theirsDirectory, cluster: cluster, ledger: "team")
    let clone = directory.path + "/clone"
    try Run.run(["clone", cluster.url, clone, "--ledger", "team#a"])
    let more = try directory.write("more.json", ReplicaFixtures.albums("more", count: 2))
    try Run.run(["import", clone, more, "--entity", "Album"])
    try Run.run(["follow", ours, "--until-caught-up"])
    #expect(try Run.head(of: ours) == 2)
    #expect(try cluster.psql("SELECT head FROM jsonledger_ledgers WHERE ledger = 'team'") == "1")
    try Run.expectIdentical([ours, clone])
  }

  /// H8: a clone replaces a store only; what is at the path, or at the folders it builds in,
  /// that is not a store is left as it is.
  ///
  /// - Reliability: A clone never removes what is not a store: `--reset` onto a folder of notes, and a user's
  ///   `PATH.cloning`, are refused and left as they were; a store at the path is what `--reset`
  ///   replaces (H8)
  /// - Size: 3 cases
  @Test(.tags(.reliability)) func aCloneNeverRemovesWhatIsNotAStore() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    _ = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let notes = directory.path + "/notes"
    try FileManager.default.createDirectory(atPath: notes, withIntermediateDirectories: true)
    _ = try directory.write("notes/todo.txt", "keep me")
    let reset = try CommandRunner.run(["clone", cluster.url, notes, "--ledger", "main", "--reset"])
    #expect(reset.status != 0)
    #expect(reset.error.contains("not a store"), "\(reset.error)")
    #expect(FileManager.default.fileExists(atPath: notes + "/todo.txt"))
    let target = directory.path + "/replica"
    try FileManager.default.createDirectory(atPath: target + ".cloning", withIntermediateDirectories: true)
    _ = try directory.write("replica.cloning/mine.txt", "mine")
    let building = try CommandRunner.run(["clone", cluster.url, target, "--ledger", "main"])
    #expect(building.status != 0)
    #expect(FileManager.default.fileExists(atPath: target + ".cloning/mine.txt"))
    try FileManager.default.removeItem(atPath: target + ".cloning")
    try Run.run(["clone", cluster.url, target, "--ledger", "main"])
    // A store at the path is what a reset replaces.
    try Run.run(["clone", cluster.url, target, "--ledger", "main", "--reset"])
  }

  /// H11: a cluster that takes only TLS: `sslmode=require` and `verify-full` (with the
  /// certificate) connect, `disable` is refused, `verify-full` without a root that signs it
  /// is refused.
  ///
  /// - Reliability: A cluster that takes only TLS (a certificate made by the test with openssl): the default
  ///   `prefer` and `require` connect, `verify-full` with `sslrootcert` connects and follows,
  ///   `disable`, and `verify-full` with no root that signs it, fail (H11)
  /// - Size: 4 modes
  @Test(.tags(.reliability)) func aClusterThatTakesOnlyTLSIsReachedAsSSLModeSays() throws {
    let cluster = try PostgresCluster(tlsOnly: true)
    let directory = try TemporaryDirectory()
    // The default, `prefer`, encrypts when the server offers it.
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let plain = try CommandRunner.run([
      "clone", cluster.url + "?sslmode=disable", directory.path + "/plain", "--ledger", "main",
    ])
    #expect(plain.status != 0)
    try Run.run(["clone", cluster.url + "?sslmode=require", directory.path + "/required", "--ledger", "main"])
    let verified = cluster.url + "?sslmode=verify-full&sslrootcert=" + cluster.certificate
    try Run.run(["clone", verified, directory.path + "/verified", "--ledger", "main"])
    let unverified = try CommandRunner.run([
      "clone", cluster.url + "?sslmode=verify-full", directory.path + "/unverified", "--ledger", "main",
    ])
    #expect(unverified.status != 0)
    let more = try directory.write("more.json", ReplicaFixtures.albums("more", count: 2))
    try Run.run(["import", directory.path + "/verified", more, "--entity", "Album"])
    try Run.run(["follow", leader, "--until-caught-up"])
    try Run.expectIdentical([leader, directory.path + "/verified"])
  }

  /// The triggers bind every role but the tables' owner (and superusers), who may disable
  /// them: writers connect as a role given only the privileges the README lists, and that
  /// role clones, writes, follows and verifies, but cannot lift the log's guard.
  ///
  /// - Reliability: A writer role that owns none of the tables, given only the README's privileges: it clones,
  ///   imports through the remote, compacts and verifies; `DISABLE TRIGGER`, `DROP TRIGGER`,
  ///   `UPDATE`, `DELETE` and `TRUNCATE` of the log are refused to it
  /// - Size: 5 statements
  @Test(.tags(.reliability)) func aWriterRoleThatDoesNotOwnTheTablesCannotLiftTheLogsGuard() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    _ = try cluster.psql(
      """
      CREATE ROLE app LOGIN;
      GRANT SELECT ON jsonledger_schema TO app;
      GRANT SELECT, INSERT ON jsonledger_log, jsonledger_snapshots, jsonledger_snapshot_chunks TO app;
      GRANT SELECT, INSERT, UPDATE ON jsonledger_ledgers, jsonledger_followers TO app;
      """)
    let app = "postgres://app@127.0.0.1:\(cluster.port)/postgres"
    let clone = directory.path + "/clone"
    try Run.run(["clone", app, clone, "--ledger", "main"])
    let second = try directory.write("second.json", ReplicaFixtures.albums("second", count: 2))
    try Run.run(["import", clone, second, "--entity", "Album"])
    try Run.run(["compact", clone, "--keep-batches", "1", "--discard"])
    try Run.run(["remote", "verify", clone])
    try Run.run(["follow", leader, "--until-caught-up"])
    #expect(try Run.head(of: leader) == 2)
    for statement in [
      "ALTER TABLE jsonledger_log DISABLE TRIGGER jsonledger_log_append_only", "DELETE FROM jsonledger_log",
      "UPDATE jsonledger_log SET writer = 'x'", "TRUNCATE jsonledger_log",
      "DROP TRIGGER jsonledger_append ON jsonledger_log",
    ] {
      #expect(throws: ClusterFailure.self, "\(statement)") { try cluster.psql("SET ROLE app; \(statement)") }
    }
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log") == "2")
  }

  /// Regression: a replica whose compaction made its first batch a checkpoint (the log still
  /// starts at 1) was said to have diverged at batch 1 by `remote verify`, and so by `follow`.
  ///
  /// - Reliability: A replica whose compaction made batch 1 a checkpoint (found by the row above): `remote
  ///   verify` said it had diverged at batch 1; now it verifies, writes on, and a clone of it is
  ///   identical
  /// - Size: 1 case
  @Test(.tags(.reliability)) func aReplicaWhoseFirstBatchIsACheckpointStillMatchesItsRemote() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let second = try directory.write("second.json", ReplicaFixtures.albums("second", count: 2))
    try Run.run(["import", leader, second, "--entity", "Album"])
    try Run.run(["compact", leader, "--keep-batches", "1", "--discard"])
    try Run.run(["remote", "verify", leader])
    let third = try directory.write("third.json", ReplicaFixtures.albums("third", count: 2))
    try Run.run(["import", leader, third, "--entity", "Album"])
    try Run.run(["remote", "verify", leader])
    let clone = directory.path + "/clone"
    try Run.run(["clone", cluster.url, clone, "--ledger", "main"])
    try Run.expectIdentical([leader, clone])
  }
}
