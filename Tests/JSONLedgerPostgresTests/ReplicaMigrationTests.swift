import Foundation
@_spi(Replication) import JSONLedger
import JSONLedgerPostgres
import JSONLedgerTestSupport
import Testing

/// Migrations through PostgreSQL: a replica migrates through the remote, the record carries
/// the model's new version, and every other replica (a follower, a writer, a new clone, a clone
/// from an old backup) follows it by the same steps its writer took.
@Suite("Migrations through PostgreSQL", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicaMigrationTests {
  /// Version 2: Album gains `year` (in place).
  static let withYear = ReplicaFixtures.model.replacingOccurrences(
    of: #""plays": "int64"}"#, with: #""plays": "int64", "year": "int32"}"#)
  /// Version 3: Album's `label` becomes `publisher` (a rename: the stored states are rewritten).
  static let withPublisher = withYear.replacingOccurrences(
    of: #""label": "string""#, with: #""publisher": {"type": "string", "renamedFrom": "label"}"#)

  /// - Reliability: A migration through one replica (in place), then a rename through another (a rewrite): every
  ///   replica, a clone from batch 1 and a clone from a backup taken at version 1 follow both and
  ///   verify; a writer at the old version catches up under the lock before it stages
  /// - Size: 2 migrations, 5 stores
  @Test(.tags(.reliability)) func aMigrationThroughOneReplicaReachesEveryOtherAndNewClones() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let labelled = try directory.write("labelled.json", #"[{"name": "first-0", "label": "Sire"}]"#)
    try ReplicationTests.run(["import", clone, labelled, "--entity", "Album"])
    let backup = directory.path + "/backup"
    try ReplicationTests.run(["backup", clone, backup])

    // In place, through the leader: the remote's model moves with the record.
    let second = try directory.write("v2.json", Self.withYear)
    try ReplicationTests.run(["migrate", leader, "--model", second])
    #expect(try cluster.psql("SELECT model_version FROM jsonledger_ledgers") == "2")
    #expect(try cluster.psql("SELECT kind, model_version FROM jsonledger_log WHERE batch = 3") == "migration|2")
    // The clone, at version 1, catches up under the head lock before it writes: its import
    // is staged under version 2 and keeps the new attribute.
    let dated = try directory.write("dated.json", #"[{"name": "first-1", "year": 1977}]"#)
    let imported = try ReplicationTests.run(["import", clone, dated, "--entity", "Album", "--json"])
    #expect(imported.output.contains("\"batch\": 4,"), "\(imported.output)")
    // A rename, through the clone: every replica rewrites its stored states under version 3.
    let third = try directory.write("v3.json", Self.withPublisher)
    let migrated = try ReplicationTests.run(["migrate", clone, "--model", third])
    #expect(migrated.output.contains("by rewriting the stored states"), "\(migrated.output)")
    #expect(try cluster.psql("SELECT model_version FROM jsonledger_ledgers") == "3")

    // New replicas: one from batch 1, one from the backup taken at version 1.
    let fresh = directory.path + "/fresh"
    try ReplicationTests.run(["clone", cluster.url, fresh, "--ledger", "main"])
    let restored = directory.path + "/restored"
    try ReplicationTests.run(["clone", cluster.url, restored, "--ledger", "main", "--from-backup", backup])
    try ReplicationTests.expectIdentical([leader, clone, fresh, restored])
    let album = try ReplicationTests.run(["get", fresh, "Album", "first-1"]).output
    #expect(album.contains("1977"), "\(album)")
    let renamed = try ReplicationTests.run(["get", leader, "Album", "first-0"]).output
    #expect(renamed.contains(#"publisher: "Sire""#), "\(renamed)")
    // Each store is at version 3 and took the same steps: a local replay under it is what
    // each holds (verify, in expectIdentical), and the log is the remote's byte for byte.
    let log = try ReplicationTests.run(["log", restored, "--json"]).output
    #expect(log.contains("\"kind\": \"migration\""), "\(log)")
  }

  /// A store migrated before it was published: its log goes up as it is, each migration
  /// moving the remote's model version, and a clone follows the same versions.
  @Test func aMigratedStoreIsPublishedWithItsVersionsAndAClonePassesThroughThem() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let store = try ReplicaFixtures.plainStore(in: directory)
    try ReplicationTests.run([
      "import", store, try directory.write("first.json", ReplicaFixtures.albums("first", count: 3)), "--entity",
      "Album",
    ])
    try ReplicationTests.run(["migrate", store, "--model", try directory.write("v2.json", Self.withYear)])
    let dated = try directory.write("dated.json", #"[{"name": "first-1", "year": 1977}]"#)
    try ReplicationTests.run(["import", store, dated, "--entity", "Album"])
    try ReplicationTests.run(["remote", "init", store, "--remote", cluster.url, "--ledger", "main"])
    #expect(try cluster.psql("SELECT model_version, head FROM jsonledger_ledgers") == "2|3")
    #expect(
      try cluster.psql("SELECT string_agg(model_version::text, ',' ORDER BY batch) FROM jsonledger_log") == "1,2,2")
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    try ReplicationTests.expectIdentical([store, clone])
    #expect(try ReplicationTests.run(["get", clone, "Album", "first-1"]).output.contains("1977"))
  }

  /// `Replica.open(at:model:remote:migration:)`, as apps start: a missing store is cloned, a
  /// new model is migrated to through the remote once (automatic), another app's store
  /// catches that migration up instead of migrating again, and an older model is refused.
  @Test func appsOpeningTheirReplicasCloneMigrateOnceAndFollow() async throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    _ = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let remote = try RemoteLocation(url: cluster.url, ledger: "main")
    let first = try Model(json: try JSONParser.parse(Array(ReplicaFixtures.model.utf8)))
    let second = try Model(json: try JSONParser.parse(Array(Self.withYear.utf8)))
    let one = directory.path + "/app-one"
    let two = directory.path + "/app-two"
    let started = try await Replica.open(at: one, model: first, remote: remote)
    #expect(try started.ledger.head == 1)
    started.ledger.close()
    let migrating = try await Replica.open(at: two, model: second, remote: remote, migration: .automatic)
    #expect(migrating.ledger.modelVersion == 2)
    migrating.ledger.close()
    #expect(try cluster.psql("SELECT model_version, head FROM jsonledger_ledgers") == "2|2")
    // The other app, updated too: it finds the migration in the log and writes nothing.
    let following = try await Replica.open(at: one, model: second, remote: remote, migration: .automatic)
    #expect(following.ledger.modelVersion == 2)
    following.ledger.close()
    #expect(try cluster.psql("SELECT head FROM jsonledger_ledgers") == "2")
    await #expect {
      try await Replica.open(at: one, model: first, remote: remote)
    } throws: { error in
      LedgerError.Code.modelDiffers ~= error
    }
    await #expect {
      try await Replica.open(at: one, model: second, remote: try RemoteLocation(url: cluster.url, ledger: "other"))
    } throws: { error in
      "\(error)".contains("is a replica of")
    }
  }

  /// A follower that cannot take the new version (here: it names a value transformer the
  /// process does not register) stops before the migration with nothing applied; once it can,
  /// it goes on.
  ///
  /// - Reliability: A migration a follower cannot take (a transformer it lacks): it stops before it, nothing
  ///   applied; given the transformer, it follows
  /// - Size: 1 migration
  @Test(.tags(.reliability)) func aFollowerThatCannotTakeTheNewModelStopsBeforeItWithNothingApplied() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let transformed = ReplicaFixtures.model.replacingOccurrences(
      of: #""plays": "int64"}"#, with: #""plays": "int64", "note": {"type": "string", "transformer": "Rot13"}}"#)
    let model = try directory.write("v2.json", transformed)
    try ReplicationTests.run(["migrate", leader, "--model", model, "--pass-through-transformers"])
    let before = try ReplicationTests.run(["export", clone]).output
    let stopped = try CommandRunner.run(["follow", clone, "--until-caught-up"])
    #expect(stopped.status != 0)
    #expect(stopped.error.contains("Rot13"), "\(stopped.error)")
    #expect(try ReplicationTests.run(["export", clone]).output == before)
    let head = try ReplicationTests.run(["log", clone, "--json", "--limit", "1"]).output
    #expect(head.contains("\"batch\": 1,"), "\(head)")
    // Told to pass the transformer's values through, it follows.
    try ReplicationTests.run(["follow", clone, "--until-caught-up", "--pass-through-transformers"])
    try ReplicationTests.run(["remote", "verify", clone, "--pass-through-transformers"])
    #expect(
      try ReplicationTests.run(["export", clone, "--pass-through-transformers"]).output
        == ReplicationTests.run(["export", leader, "--pass-through-transformers"]).output)
  }

  /// A batch staged under the old version, applied after another machine migrated: the
  /// replica catches up (and migrates) under the head lock, then refuses the stale batch with
  /// nothing written; a batch staged under the new version lands.
  ///
  /// - Reliability: A batch staged under the old model after another machine migrated: refused, nothing
  ///   written; the replica is at the new version
  /// - Size: 1 batch
  @Test(.tags(.reliability)) func aBatchStagedUnderTheOldModelIsRefusedOnceAnotherMachineMigrated() async throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let replica = try Replica.open(at: clone)
    defer { replica.ledger.close() }
    var stale = replica.ledger.makeBatch()
    try stale.stage(.array([["name": "stale"]]), as: "Album")
    try ReplicationTests.run(["migrate", leader, "--model", try directory.write("v2.json", Self.withYear)])
    await #expect {
      try await replica.apply(stale, idempotencyKey: "stale")
    } throws: { error in
      LedgerError.Code.invalidBatch ~= error
    }
    #expect(replica.ledger.modelVersion == 2)
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log WHERE idempotency_key = 'stale'") == "0")
    var fresh = replica.ledger.makeBatch()
    try fresh.stage(.array([["name": "fresh", "year": 2001]]), as: "Album")
    let summary = try await replica.apply(fresh, idempotencyKey: "fresh")
    #expect(summary.batchID == 3)
    try ReplicationTests.expectIdentical([leader, clone])
  }
}
