import Foundation
@_spi(Replication) import JSONLedger
import JSONLedgerPostgres
import JSONLedgerTestSupport
import Testing

/// Replicas through a real PostgreSQL server that each test starts; each "machine" is a
/// process of its own with its own store folder.
@Suite("Replicas through PostgreSQL", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicationTests {
  /// Runs `jsonledger` with `arguments` and expects it to succeed.
  @discardableResult
  static func run(_ arguments: [String]) throws -> CommandRunner.Result {
    let result = try CommandRunner.run(arguments)
    #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.error)")
    return result
  }

  /// Starts `/bin/sh -c script` with the executable as `$J`.
  static func start(_ script: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    process.environment = ProcessInfo.processInfo.environment.merging(["J": CommandRunner.executable.path]) { $1 }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }

  /// Waits for `process`; one still running after `seconds` is killed and recorded as hung.
  static func wait(_ process: Process, seconds: Double, _ what: String) {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning, Date() < deadline { usleep(20_000) }
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      Issue.record("\(what) hung (killed after \(Int(seconds)) s)")
    }
    process.waitUntilExit()
  }

  /// The store's head, read by opening it (another process is writing it).
  static func head(of store: String) throws -> UInt64 {
    let ledger = try Ledger.open(at: store)
    defer { ledger.close() }
    return try ledger.head
  }

  /// Whether the store's head reaches `batch` within `seconds`, looking every 100 ms.
  static func waitForHead(_ batch: UInt64, of store: String, seconds: Int) throws -> Bool {
    for _ in 0..<(seconds * 10) {
      if try head(of: store) >= batch { return true }
      usleep(100_000)
    }
    return false
  }

  /// Every store caught up, verified against the remote, and exporting what the first does.
  static func expectIdentical(_ stores: [String]) throws {
    for store in stores {
      try run(["follow", store, "--until-caught-up"])
      try run(["remote", "verify", store])
    }
    let exports = try stores.map { try run(["export", $0]).output }
    for (store, export) in zip(stores, exports).dropFirst() {
      #expect(export == exports[0], "\(store) exports other objects than \(stores[0])")
    }
  }

  /// Writes of one process through one replica, at once: each waits its turn at the head
  /// lock, and one write's end never takes the next one's gate away. Applies that waited for
  /// the lock together are appended in one PostgreSQL transaction.
  @Test func concurrentWritesThroughOneReplicaAllLandAndThoseThatWaitedTogetherCommitTogether() async throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let replica = try Replica.open(at: try ReplicaFixtures.published(in: directory, cluster: cluster))
    // Another session holds the head's lock while the writers start, so that they wait for
    // it together (on a thread of its own: the test runner's shared threads stay free).
    let released = DispatchSemaphore(value: 0)
    Thread {
      _ = try? cluster.psql("BEGIN; SELECT 1 FROM jsonledger_ledgers FOR UPDATE; SELECT pg_sleep(3); COMMIT;")
      released.signal()
    }.start()
    try await Task.sleep(for: .milliseconds(300))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<16 {
        group.addTask {
          for round in 0..<3 {
            var batch = replica.ledger.makeBatch()
            try batch.stage(.array([["name": .string("c\(writer)-\(round)")]]), as: "Album")
            _ = try await replica.apply(batch, idempotencyKey: "\(writer)-\(round)")
          }
        }
      }
      try await group.waitForAll()
    }
    released.wait()
    #expect(try replica.ledger.head == 49)
    #expect(
      try cluster.psql("SELECT count(*), max(batch), count(DISTINCT idempotency_key) FROM jsonledger_log") == "49|49|48"
    )
    let shared = try cluster.psql(
      "SELECT count(*) FROM (SELECT xmin::text FROM jsonledger_log GROUP BY xmin::text HAVING count(*) > 1) AS g")
    #expect((Int(shared) ?? 0) >= 1, "no two batches were appended in one transaction")
    _ = try await replica.verifyAgainstRemote()
    replica.ledger.close()
  }

  /// - Reliability: Update, delete and truncate of the log, and an insert that does not follow the head or its
  ///   checksum, refused by the server
  /// - Size: —
  @Test(.tags(.reliability)) func aPublishedStoreAndItsCloneWriteThroughTheRemoteAndFollowEachOther() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try Self.run(["clone", cluster.url, clone, "--ledger", "main"])
    let second = try directory.write("second.json", ReplicaFixtures.albums("second", count: 4))
    try Self.run(["import", clone, second, "--entity", "Album", "--idempotency-key", "second"])
    // The leader catches up before it writes: its batch 3 follows the clone's batch 2.
    let third = try directory.write("third.json", ReplicaFixtures.albums("first", count: 2, plays: 9))
    let applied = try Self.run(["import", leader, third, "--entity", "Album", "--json"])
    #expect(applied.output.contains("\"batch\": 3,"), "\(applied.output)")
    let status = try Self.run(["remote", "status", clone, "--json"])
    #expect(status.output.contains("\"lag\": 1,"), "\(status.output)")
    try Self.expectIdentical([leader, clone])
    // The same key again is the batch already applied, on any machine.
    let again = try Self.run(["import", leader, second, "--entity", "Album", "--idempotency-key", "second"])
    #expect(again.output.contains("already applied as batch 2"), "\(again.output)")
    #expect(try cluster.psql("SELECT max(batch), count(*) FROM jsonledger_log") == "3|3")
    // The log is append-only, whoever asks.
    #expect(throws: ClusterFailure.self) { try cluster.psql("DELETE FROM jsonledger_log WHERE batch = 3") }
    #expect(throws: ClusterFailure.self) { try cluster.psql("UPDATE jsonledger_log SET kind = 'x'") }
    // An insert that skips a batch, or does not chain to the head's checksum, is refused too.
    for (batch, previous, words) in [
      (9, "(SELECT head_sha256 FROM jsonledger_ledgers)", "does not follow the head"),
      (4, "'\\x00'::bytea", "does not chain"),
    ] {
      #expect {
        try cluster.psql(
          """
          INSERT INTO jsonledger_log (ledger, batch, kind, model_version, prev_sha256, sha256, writer, record)
          VALUES ('main', \(batch), 'import', 1, \(previous), sha256('\\x01'::bytea), 'test', '\\x01'::bytea)
          """)
      } throws: { error in
        "\(error)".contains(words)
      }
    }
    #expect(try cluster.psql("SELECT head FROM jsonledger_ledgers") == "3")
  }

  @Test func aReplicaRefusesWritesThatDoNotGoThroughItsRemote() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let ledger = try Ledger.open(at: leader)
    var batch = ledger.makeBatch()
    try batch.stage(.array([["name": "local"]]), as: "Album")
    #expect {
      try ledger.applySynchronously(batch)
    } throws: { error in
      guard LedgerError.Code.replicaWrite ~= error else { return false }
      return "\(error)".contains("is a replica of postgres://postgres@127.0.0.1")
    }
    // Compaction too: a replica compacts through `Replica.compact`, which publishes the
    // checkpoint and keeps what it stands for.
    #expect {
      try ledger.compact(keepingBatches: 0, archive: nil, discarding: true)
    } throws: { error in
      LedgerError.Code.replicaWrite ~= error
    }
    #expect(try ledger.head == 1)
    ledger.close()
    #expect(try cluster.psql("SELECT head FROM jsonledger_ledgers") == "1")
  }

  /// - Reliability: The remote stopped: writes fail naming it, reads go on, no password printed; restarted: the
  ///   same key lands
  /// - Size: 1 batch
  @Test(.tags(.reliability)) func withTheRemoteDownWritesFailPlainlyAndReadsGoOn() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let before = try Self.run(["export", leader]).output
    try cluster.stop()
    let file = try directory.write("down.json", ReplicaFixtures.albums("down", count: 2))
    let refused = try CommandRunner.run(["import", leader, file, "--entity", "Album", "--idempotency-key", "down"])
    #expect(refused.status == 1)
    #expect(refused.error.contains("the remote log is unavailable"), "\(refused.error)")
    #expect(!refused.error.contains("password"), "\(refused.error)")
    #expect(try Self.run(["export", leader]).output == before)
    try cluster.start()
    try Self.run(["import", leader, file, "--entity", "Album", "--idempotency-key", "down"])
    #expect(try cluster.psql("SELECT max(batch) FROM jsonledger_log") == "2")
  }

  /// A writer stopped (SIGSTOP: as good as a cut network) while it holds the head lock: the
  /// server ends its idle transaction and frees the lock, the other writer goes on, and the
  /// stopped one, resumed, fails without writing; run again with its key, it lands once.
  ///
  /// - Reliability: A writer stopped (SIGSTOP) while it holds the head lock: the server ends its transaction,
  ///   the other writer goes on; resumed, it fails and writes nothing; run again with its key, it
  ///   lands once
  /// - Size: 20,000-object batch
  @Test(.tags(.reliability)) func aWriterCutOffWhileHoldingTheLockLosesItAndTheOthersGoOn() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try Self.run(["clone", cluster.url, clone, "--ledger", "main"])
    let big = try directory.write("big.json", ReplicaFixtures.albums("big", count: 20_000))
    let stalled = try Self.start("exec \"$J\" import '\(leader)' '\(big)' --entity Album --idempotency-key big")
    // Stopped once its session has taken the head's row lock (its SELECT … FOR UPDATE left a
    // RowShareLock on the table) and idles in its transaction, resolving locally. Idling alone
    // is not enough: between BEGIN and the lock the session idles too, and a writer stopped
    // there, resumed before the server's timeout, goes on to write.
    let lockHeld = """
      SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
      WHERE a.state = 'idle in transaction' AND l.relation = 'jsonledger_ledgers'::regclass
        AND l.mode = 'RowShareLock'
      """
    var holding = false
    for _ in 0..<1_000 where !holding {
      holding = (try? cluster.psql(lockHeld)) == "1"
      if !holding { usleep(5_000) }
    }
    kill(stalled.processIdentifier, SIGSTOP)
    #expect(holding, "the writer was never seen holding the lock")
    #expect(try cluster.psql(lockHeld) == "1", "the stopped writer no longer holds the lock")
    let small = try directory.write("small.json", ReplicaFixtures.albums("small", count: 2))
    let started = Date()
    try Self.run(["import", clone, small, "--entity", "Album", "--idempotency-key", "small"])
    #expect(Date().timeIntervalSince(started) < 60)
    kill(stalled.processIdentifier, SIGCONT)
    Self.wait(stalled, seconds: 120, "the resumed writer")
    #expect(stalled.terminationStatus != 0)
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log WHERE idempotency_key = 'big'") == "0")
    try Self.run(["import", leader, big, "--entity", "Album", "--idempotency-key", "big"])
    let again = try Self.run(["import", clone, big, "--entity", "Album", "--idempotency-key", "big"])
    #expect(again.output.contains("already applied"), "\(again.output)")
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log WHERE idempotency_key = 'big'") == "1")
    try Self.expectIdentical([leader, clone])
  }

  /// - Reliability: A clone from a backup plus the tail; a backup that went its own way is refused, nothing
  ///   left behind
  /// - Size: 3 batches
  @Test(.tags(.reliability)) func aCloneFromABackupAppliesOnlyTheTailAndABackupWithOtherBatchesIsRefused() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let file = try directory.write("more.json", ReplicaFixtures.albums("more", count: 3))
    try Self.run(["import", leader, file, "--entity", "Album", "--idempotency-key", "more-1"])
    let backup = directory.path + "/backup"
    try Self.run(["backup", leader, backup])
    // Other albums: the same ones again would change nothing and write no batch.
    let more = try directory.write("more-2.json", ReplicaFixtures.albums("more-2", count: 3))
    try Self.run(["import", leader, more, "--entity", "Album", "--idempotency-key", "more-2"])
    let restored = directory.path + "/restored"
    let cloned = try Self.run(["clone", cluster.url, restored, "--ledger", "main", "--from-backup", backup])
    #expect(cloned.output.contains("cloned 3 batches"), "\(cloned.output)")
    try Self.expectIdentical([leader, restored])
    // A backup of a store that went its own way after batch 1.
    let other = directory.path + "/other"
    let model = try directory.write("model.json", ReplicaFixtures.model)
    try Self.run(["init", other, "--model", model])
    try Self.run([
      "import", other, try directory.write("x.json", ReplicaFixtures.albums("x", count: 1)), "--entity", "Album",
    ])
    let refused = try CommandRunner.run([
      "clone", cluster.url, directory.path + "/never", "--ledger", "main", "--from-backup", other,
    ])
    #expect(refused.status == 2)
    #expect(refused.error.contains("diverged from the remote log at batch 1"), "\(refused.error)")
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/never"))
  }

  /// The commit reaches PostgreSQL but its acknowledgement does not reach the writer: a proxy
  /// between them drops the connection after COMMIT passed. The writer reports a failure and
  /// its store stays behind; the same import again, with its key, answers the batch that
  /// landed and writes nothing twice.
  ///
  /// - Reliability: The COMMIT reaching the server with its acknowledgement lost (a TCP proxy between writer
  ///   and server passes the COMMIT and drops the connection before the answer): the writer fails,
  ///   its store stays one batch behind; the same key again answers "already applied"
  /// - Size: 1 batch
  @Test(.tags(.reliability)) func aLostCommitAcknowledgementIsResolvedByTheIdempotencyKey() throws {
    let cluster = try PostgresCluster()
    let proxy = try TCPProxy(to: cluster.port)
    defer { proxy.close() }
    let directory = try TemporaryDirectory()
    let leader = directory.path + "/leader"
    try Self.run(["init", leader, "--model", try directory.write("model.json", ReplicaFixtures.model)])
    // Published through the proxy, the store remembers the proxy as its remote.
    try Self.run(["remote", "init", leader, "--remote", proxy.url, "--ledger", "main"])
    let file = try directory.write("lost.json", ReplicaFixtures.albums("lost", count: 3))
    proxy.set(.loseCommitAcknowledgement)
    let lost = try CommandRunner.run(["import", leader, file, "--entity", "Album", "--idempotency-key", "lost"])
    #expect(lost.status == 1, "\(lost.output)")
    #expect(proxy.dropped == 1)
    #expect(try cluster.psql("SELECT batch FROM jsonledger_log WHERE idempotency_key = 'lost'") == "1")
    let behind = try Ledger.open(at: leader)
    #expect(try behind.head == 0)
    behind.close()
    proxy.set(.pass)
    let again = try Self.run(["import", leader, file, "--entity", "Album", "--idempotency-key", "lost"])
    #expect(again.output.contains("already applied as batch 1"), "\(again.output)")
    #expect(try cluster.psql("SELECT count(*) FROM jsonledger_log") == "1")
    let fresh = directory.path + "/fresh"
    try Self.run(["clone", cluster.url, fresh, "--ledger", "main"])
    try Self.expectIdentical([leader, fresh])
  }

  /// A network that swallows every byte while the connections stay open (no error, no
  /// close): the follower's stuck call is abandoned at its deadline, the supervisor starts a
  /// new session, and once bytes pass again the follower catches up, each record once.
  ///
  /// - Reliability: A network that swallows every byte while connections stay open (the tests' proxy stalls):
  ///   the follower's stuck call is abandoned at its deadline, a new session catches up once bytes
  ///   pass, each record once
  /// - Size: 1 batch during the stall
  @Test(.tags(.reliability)) func aFollowerBehindAStalledNetworkAbandonsTheStuckCallAndCatchesUp() throws {
    let cluster = try PostgresCluster()
    let proxy = try TCPProxy(to: cluster.port)
    defer { proxy.close() }
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let follower = directory.path + "/follower"
    // Cloned through the proxy, the follower remembers the proxy as its remote.
    try Self.run(["clone", proxy.url, follower, "--ledger", "main"])
    let following = try Self.start("exec \"$J\" follow '\(follower)' --poll-interval 200")
    defer {
      kill(following.processIdentifier, SIGKILL)
      following.waitUntilExit()
    }
    try Self.run([
      "import", leader, try directory.write("a.json", ReplicaFixtures.albums("a", count: 3)), "--entity", "Album",
    ])
    #expect(try Self.waitForHead(2, of: follower, seconds: 30))
    proxy.set(.stall)
    try Self.run([
      "import", leader, try directory.write("b.json", ReplicaFixtures.albums("b", count: 3)), "--entity", "Album",
    ])
    sleep(2)
    #expect(try Self.head(of: follower) == 2, "bytes passed through a stalled proxy")
    proxy.set(.pass)
    let resumed = Date()
    #expect(try Self.waitForHead(3, of: follower, seconds: 120), "the follower never came back from the stall")
    #expect(following.isRunning)
    #expect(Date().timeIntervalSince(resumed) < 100)
    kill(following.processIdentifier, SIGKILL)
    following.waitUntilExit()
    try Self.expectIdentical([leader, follower])
  }

  /// A follower whose sessions are terminated under it (its LISTEN lost with them) and that
  /// gets a storm of notifications for batches that do not exist: it catches up all the same,
  /// applying each record once.
  ///
  /// - Reliability: The follower's sessions terminated under it, and 2,000 notifications for batches that do
  ///   not exist: it catches up, each record once
  /// - Size: 10 batches
  @Test(.tags(.reliability)) func lostAndFloodedNotificationsStillLeaveTheFollowerCaughtUp() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let follower = directory.path + "/follower"
    try Self.run(["clone", cluster.url, follower, "--ledger", "main"])
    let following = try Self.start("exec \"$J\" follow '\(follower)' --poll-interval 200")
    defer {
      kill(following.processIdentifier, SIGKILL)
      following.waitUntilExit()
    }
    for index in 0..<10 {
      let file = try directory.write("n\(index).json", ReplicaFixtures.albums("n\(index)", count: 5))
      try Self.run(["import", leader, file, "--entity", "Album"])
      if index % 3 == 0 {
        _ = try cluster.psql(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
      }
      _ = try cluster.psql(
        "SELECT pg_notify('jsonledger_' || left(md5('main'), 24), g::text) FROM generate_series(1, 200) g")
    }
    #expect(try Self.waitForHead(11, of: follower, seconds: 30))
    #expect(try Self.head(of: follower) == 11)
    kill(following.processIdentifier, SIGKILL)
    following.waitUntilExit()
    try Self.expectIdentical([leader, follower])
  }

  /// - Reliability: 2 and 8 writers racing from 1–4 replicas: batch ids contiguous, every idempotency key once,
  ///   one chain
  /// - Size: 10 × 2 and 4 × 8 batches
  @Test(.tags(.reliability), arguments: [2, 8])
  func writersRacingFromSeveralMachinesGiveOneGaplessChain(writers: Int) throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    var stores = [leader]
    for index in 1..<min(writers, 4) {
      let store = directory.path + "/replica-\(index)"
      try Self.run(["clone", cluster.url, store, "--ledger", "main"])
      stores.append(store)
    }
    let batches = writers == 2 ? 10 : 4
    let processes = try (0..<writers).map { writer in
      let store = stores[writer % stores.count]
      // A file per batch: the same payload twice would change nothing and write no batch.
      for batch in 1...batches {
        _ = try directory.write("w\(writer)-\(batch).json", ReplicaFixtures.albums("w\(writer)-\(batch)", count: 3))
      }
      let files = directory.path + "/w\(writer)"
      return try Self.start(
        "for i in $(seq 1 \(batches)); do \"$J\" import '\(store)' '\(files)'-$i.json --entity Album --idempotency-key w\(writer)-$i || exit 1; done"
      )
    }
    for process in processes {
      Self.wait(process, seconds: 120, "a writer")
      #expect(process.terminationStatus == 0)
    }
    let total = 1 + writers * batches
    #expect(
      try cluster.psql("SELECT count(*), min(batch), max(batch), count(DISTINCT idempotency_key) FROM jsonledger_log")
        == "\(total)|1|\(total)|\(total - 1)")
    try Self.expectIdentical(stores)
  }

  /// - Reliability: With `expectedHead`, two replicas racing: exactly one wins, the loser writes nothing
  /// - Size: 5 rounds
  @Test(.tags(.reliability)) func withAnExpectedHeadTheLoserOfARaceWritesNothing() async throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try Self.run(["clone", cluster.url, clone, "--ledger", "main"])
    let replicas = try [leader, clone].map { try Replica.open(at: $0) }
    #expect(throws: RemoteError.self) { try Replica.open(at: try ReplicaFixtures.plainStore(in: directory)) }
    for round in 0..<5 {
      let head = try replicas[0].ledger.head
      try await replicas[1].sync()
      let outcomes = await withTaskGroup(of: Bool.self) { group in
        for (index, replica) in replicas.enumerated() {
          var batch = replica.ledger.makeBatch()
          try? batch.stage(.array([["name": .string("r\(round)-\(index)")]]), as: "Album")
          group.addTask {
            do {
              _ = try await replica.apply(batch, expectedHead: head)
              return true
            } catch LedgerError.Code.headMoved {
              return false
            } catch {
              Issue.record("unexpected \(error)")
              return false
            }
          }
        }
        return await group.reduce(into: [Bool]()) { $0.append($1) }
      }
      #expect(outcomes.filter { $0 }.count == 1, "round \(round): \(outcomes)")
      #expect(try cluster.psql("SELECT max(batch) FROM jsonledger_log") == "\(head + 1)")
      try await replicas[0].sync()
    }
    for replica in replicas { replica.ledger.close() }
    try Self.expectIdentical([leader, clone])
  }

  /// - Reliability: A follower SIGKILLed at random moments (5–250 ms in): its head never goes back, every
  ///   record applied once, the store verifies after each kill
  /// - Size: 100 kills over 20 batches of 300
  @Test(.tags(.reliability)) func aFollowerKilledAtRandomMomentsAppliesEveryRecordExactlyOnce() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let follower = directory.path + "/follower"
    try Self.run(["clone", cluster.url, follower, "--ledger", "main"])
    for index in 0..<20 {
      let file = try directory.write("b\(index).json", ReplicaFixtures.albums("b\(index)", count: 300))
      try Self.run(["import", leader, file, "--entity", "Album"])
    }
    var generator = SeededGenerator(seed: 7)
    var heads: [UInt64] = []
    for _ in 0..<100 {
      try CommandRunner.runKilled(
        ["follow", follower, "--until-caught-up"], afterMilliseconds: Int.random(in: 5...250, using: &generator))
      let ledger = try Ledger.open(at: follower)
      heads.append(try ledger.head)
      ledger.close()
      try Self.run(["verify", follower])
    }
    #expect(heads == heads.sorted(), "a kill went backwards: \(heads)")
    try Self.expectIdentical([leader, follower])
  }

  /// - Reliability: A replica written while offline: `follow` refuses it (exit 2, both checksums), nothing
  ///   applied, its writes refused; `clone --reset` rebuilds it
  /// - Size: 3 batches
  @Test(.tags(.reliability)) func aDivergedReplicaIsRefusedWithNothingAppliedAndCloneResetRecovers() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let offline = directory.path + "/offline"
    try Self.run(["clone", cluster.url, offline, "--ledger", "main"])
    // Written locally while cut off from its remote (as an old backup with extra batches).
    do {
      let ledger = try Ledger.open(at: offline)
      let source = try #require(try ledger.replicaSource)
      try ledger.setReplicaSource(nil)
      var batch = ledger.makeBatch()
      try batch.stage(.array([["name": "offline only"]]), as: "Album")
      _ = try ledger.applySynchronously(batch)
      try ledger.setReplicaSource(source)
      ledger.close()
    }
    let file = try directory.write("remote.json", ReplicaFixtures.albums("remote", count: 2))
    try Self.run(["import", leader, file, "--entity", "Album"])
    try Self.run(["import", leader, file, "--entity", "Album", "--idempotency-key", "again"])
    let before = try Self.run(["export", offline]).output
    let refused = try CommandRunner.run(["follow", offline, "--until-caught-up"])
    #expect(refused.status == 2)
    #expect(refused.error.contains("diverged from the remote log at batch 2"), "\(refused.error)")
    #expect(try Self.run(["export", offline]).output == before)
    let writeRefused = try CommandRunner.run(["import", offline, file, "--entity", "Album"])
    #expect(writeRefused.status == 2)
    let kept = try CommandRunner.run(["clone", cluster.url, offline, "--ledger", "main"])
    #expect(kept.status != 0)
    #expect(kept.error.contains("exists"), "\(kept.error)")
    try Self.run(["clone", cluster.url, offline, "--ledger", "main", "--reset"])
    try Self.expectIdentical([leader, offline])
  }

  /// - Reliability: `pg_ctl restart -m fast` while 4 writers import, each retrying with its key: nothing lost
  ///   or duplicated; a fresh clone is identical
  /// - Size: 48 batches
  @Test(.tags(.reliability)) func postgresRestartedDuringImportsLosesAndDuplicatesNothing() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try Self.run(["clone", cluster.url, clone, "--ledger", "main"])
    let stores = [leader, clone, leader, clone]
    let batches = 12
    let processes = try stores.enumerated().map { writer, store in
      // A file per batch: the same payload twice would change nothing and write no batch.
      for batch in 1...batches {
        _ = try directory.write(
          "w\(writer)-\(batch).json", ReplicaFixtures.albums("w\(writer)-\(batch)", count: 20))
      }
      let files = directory.path + "/w\(writer)"
      // Each import is retried until it lands: the key tells a lost acknowledgement from a loss.
      return try Self.start(
        """
        for i in $(seq 1 \(batches)); do
          n=0
          until "$J" import '\(store)' '\(files)'-$i.json --entity Album --idempotency-key w\(writer)-$i; do
            n=$((n+1)); [ $n -gt 60 ] && exit 1; sleep 0.2
          done
        done
        """)
    }
    // The restart lands while the writers are at it: some batches are in, not all.
    var landed = 0
    while landed < 8 {
      landed = Int(try cluster.psql("SELECT max(batch) FROM jsonledger_log")) ?? 0
      usleep(20_000)
    }
    try cluster.restart()
    #expect(landed < 1 + stores.count * batches)
    for process in processes {
      Self.wait(process, seconds: 180, "a writer across the restart")
      #expect(process.terminationStatus == 0)
    }
    let total = 1 + stores.count * batches
    #expect(
      try cluster.psql("SELECT count(*), max(batch), count(DISTINCT idempotency_key) FROM jsonledger_log")
        == "\(total)|\(total)|\(total - 1)")
    let fresh = directory.path + "/fresh"
    try Self.run(["clone", cluster.url, fresh, "--ledger", "main"])
    try Self.expectIdentical([leader, clone, fresh])
  }
}
