import Foundation
import JSONLedgerSupport
import JSONLedgerTestSupport
import Logging
import Synchronization
import Testing

@_spi(Replication) @testable import JSONLedger

/// The rules of replication (`ReplicaCore`) over a second transport, a log held in this
/// process: replicas hold the same records, writers take turns at the head, what the remote
/// refuses is not written, and a record that is not what the log says is refused before
/// anything is applied. The PostgreSQL suites run the same core over a real server.
@Suite("The replica core over an in-process log")
struct ReplicaCoreTests {
  typealias Replica = ReplicaCore<InProcessLog>
  static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

  static func clone(_ log: InProcessLog, _ path: String) async throws -> Replica {
    try await Replica.clone(
      from: log, into: path, reset: false, fromBackup: nil, fromSnapshot: true, options: Ledger.Options(),
      logger: logger)
  }

  static func batch(_ replica: Replica, round: Int) throws -> ChangeBatch {
    var batch = replica.ledger.makeBatch()
    let discs: [JSONValue] = (0..<3).map { index in
      ["name": .string("disc \(index)"), "label": .string("label \(round)")]
    }
    try batch.stage(.array(discs + [["name": .string("extra \(round)")]]), as: "Disc")
    return batch
  }

  static func apply(_ replica: Replica, round: Int, key: String? = nil) async throws -> BatchSummary {
    try await replica.apply(
      try batch(replica, round: round), message: nil, author: nil, source: nil, idempotencyKey: key, expectedHead: nil)
  }

  /// `follower` following its log with a poll an hour apart (only the log's signal, or a
  /// position falling due, wakes it in time), and the heads it reports.
  static func follow(_ follower: Replica) -> (task: Task<Void, any Error>, heads: AsyncStream<UInt64>) {
    let heads = AsyncStream.makeStream(of: UInt64.self)
    let task = Task {
      try await follower.follow(untilCaughtUp: false, pollInterval: .seconds(3600)) { report in
        heads.continuation.yield(report.head)
      }
    }
    return (task, heads.stream)
  }

  /// Every record of both stores, byte for byte.
  static func expectSameRecords(_ one: Replica, _ other: Replica) throws {
    let head = try one.ledger.logExtent().head
    #expect(try other.ledger.logExtent().head == head)
    for batch in 1...max(head, 1) where head > 0 {
      #expect(try one.ledger.encodedRecord(batch) == other.ledger.encodedRecord(batch))
    }
  }

  @Test func twoReplicasOfOneLogHoldTheSameRecordsAndVerifyAgainstIt() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let one = try await Self.clone(log, directory.path + "/one")
    let other = try await Self.clone(log, directory.path + "/other")
    _ = try await Self.apply(one, round: 1)
    // A write catches its store up first: the other's batch 2 follows the first's batch 1.
    let second = try await Self.apply(other, round: 2)
    #expect(second.batchID == 2)
    #expect(try await one.sync() == SyncReport(applied: 1, head: 2))
    try Self.expectSameRecords(one, other)
    #expect(try await one.verifyAgainstRemote() == ReplicaVerification(batches: 2, remoteHead: 2))
    #expect(try await other.status().lag == 0)
    #expect(try one.ledger.replicaSource == "in-process#test")
  }

  /// - Reliability: Two writers through one in-process remote log (the replica core's second transport): every
  ///   batch lands once, in one chain, and both replicas hold the same records byte for byte; a
  ///   remote that refuses an append leaves the store as it was
  /// - Size: 2 × 8 batches
  @Test(.tags(.reliability)) func concurrentWritersThroughOneLogNeverLoseOrReorderABatch() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let replicas = [
      try await Self.clone(log, directory.path + "/one"), try await Self.clone(log, directory.path + "/two"),
    ]
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, replica) in replicas.enumerated() {
        group.addTask {
          for round in 0..<8 { _ = try await Self.apply(replica, round: index * 100 + round, key: "\(index)-\(round)") }
        }
      }
      try await group.waitForAll()
    }
    for replica in replicas { try await replica.sync() }
    try Self.expectSameRecords(replicas[0], replicas[1])
    #expect(try replicas[0].ledger.logExtent().head == 16)
    let keys = try await replicas[0].ledger.log(limit: 100).compactMap(\.metadata.idempotencyKey)
    #expect(Set(keys).count == 16)
    _ = try await replicas[1].verifyAgainstRemote()
  }

  /// The remote append is a hook of the one write that sets it: a plain write of the same
  /// store at the same time is refused as a replica's, never handed to another write's gate.
  ///
  /// - Reliability: A plain write of a replica's store while two writes run through its remote is refused as a
  ///   replica's, never handed to another write's remote append
  /// - Size: 40 refused writes beside 16 replica writes
  @Test(.tags(.reliability)) func aWriteOutsideTheRemoteIsRefusedWhileReplicaWritesRunBesideIt() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let replica = try await Self.clone(log, directory.path + "/one")
    let refused = try await withThrowingTaskGroup(of: Int.self) { group in
      for writer in 0..<2 {
        group.addTask {
          for round in 0..<8 { _ = try await Self.apply(replica, round: writer * 100 + round) }
          return 0
        }
      }
      group.addTask {
        var refused = 0
        for round in 0..<40 {
          do {
            _ = try replica.ledger.applySynchronously(try Self.batch(replica, round: 1000 + round))
          } catch LedgerError.Code.replicaWrite {
            refused += 1
          }
        }
        return refused
      }
      return try await group.reduce(0, +)
    }
    #expect(refused == 40)
    // Applies that waited together were appended together.
    #expect(log.appendsSeen <= 16)
    #expect(try replica.ledger.logExtent().head == 16)
    _ = try await replica.verifyAgainstRemote()
  }

  /// The number of write transactions `replica`'s store has committed.
  static func commits(_ replica: Replica) throws -> Int {
    try replica.ledger.environment.info().lastTransactionID
  }

  /// The batch ids `changes` announces, until there are `count` (or ten seconds went by).
  static func announced(_ changes: AsyncStream<BatchSummary>, count: Int) async throws -> [UInt64] {
    try await withThrowingTaskGroup(of: [UInt64].self) { group in
      group.addTask {
        var ids: [UInt64] = []
        for await summary in changes {
          ids.append(summary.batchID)
          if ids.count == count { break }
        }
        return ids
      }
      group.addTask {
        try await Task.sleep(for: .seconds(10))
        throw CancellationError()
      }
      defer { group.cancelAll() }
      return try await group.next() ?? []
    }
  }

  /// Two replicas of a new in-process log, the first having applied `rounds` batches, for
  /// `body`; then both hold the same records.
  static func withTwoReplicas(
    firstApplying rounds: Int, _ body: (InProcessLog, Replica, Replica) async throws -> Void
  ) async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let one = try await clone(log, directory.path + "/one")
    let other = try await clone(log, directory.path + "/other")
    for round in 0..<rounds { _ = try await apply(one, round: round + 1) }
    try await body(log, one, other)
    try await one.sync()
    try await other.sync()
    try expectSameRecords(one, other)
    _ = try await other.verifyAgainstRemote()
  }

  @Test func anApplyCatchesUpOnOtherReplicasBatchesInItsOwnCommit() async throws {
    try await Self.withTwoReplicas(firstApplying: 3) { _, _, other in
      let changes = other.ledger.changes
      let before = try Self.commits(other)
      #expect(try await Self.apply(other, round: 4).batchID == 4)
      // Batches 1 to 3 and its own, in one commit, each announced in order.
      #expect(try Self.commits(other) == before + 1)
      #expect(try await Self.announced(changes, count: 4) == [1, 2, 3, 4])
    }
  }

  @Test func anApplyRefusedAfterItCaughtUpLeavesTheStoreCaughtUp() async throws {
    try await Self.withTwoReplicas(firstApplying: 2) { log, one, other in
      // Refused by the store: the head it expects has moved.
      await #expect(throws: LedgerError.self) {
        try await other.apply(
          try Self.batch(other, round: 9), message: nil, author: nil, source: nil, idempotencyKey: nil,
          expectedHead: 0)
      }
      #expect(try other.ledger.logExtent().head == 2)
      // Refused by the remote.
      for round in 3...4 { _ = try await Self.apply(one, round: round) }
      log.refuseNextAppend()
      await #expect(throws: RemoteError.self) { try await Self.apply(other, round: 9) }
      #expect(try other.ledger.logExtent().head == 4)
    }
  }

  /// A revert reads the record it reverts before its transaction: one the store has not
  /// caught up on yet is there by then.
  @Test func aRevertThroughAReplicaRevertsABatchItsStoreHadNotYetSeen() async throws {
    try await Self.withTwoReplicas(firstApplying: 2) { _, _, other in
      let reverted = try await other.write("a revert") { ledger in try ledger.revert(2) }
      #expect(reverted.summary.batchID == 3)
    }
  }

  @Test func aRemoteThatRefusesTheAppendLeavesTheStoreAsItWas() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let replica = try await Self.clone(log, directory.path + "/one")
    _ = try await Self.apply(replica, round: 1)
    let before = try await replica.ledger.read { try $0.exportJSON("Disc") }
    log.refuseNextAppend()
    await #expect(throws: RemoteError.self) { try await Self.apply(replica, round: 2) }
    #expect(try replica.ledger.logExtent().head == 1)
    #expect(try await replica.ledger.read { try $0.exportJSON("Disc") } == before)
    // The head's lock went with the failed session: the next write goes through.
    #expect(try await Self.apply(replica, round: 2).batchID == 2)
    _ = try await replica.verifyAgainstRemote()
  }

  /// - Reliability: The replica core over an in-process log: a record whose bytes do not match its digest, and
  ///   one whose chain names another record, are refused naming the batch, nothing of it applied
  /// - Size: 2 faults
  @Test(.tags(.reliability)) func aRecordThatIsNotWhatTheLogSaysIsRefusedBeforeAnythingIsApplied() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let writer = try await Self.clone(log, directory.path + "/writer")
    let damaged = try await Self.clone(log, directory.path + "/damaged")
    let broken = try await Self.clone(log, directory.path + "/broken")
    for round in 1...3 { _ = try await Self.apply(writer, round: round) }
    _ = try await broken.sync()

    log.damage(batch: 2)
    await #expect {
      try await damaged.sync()
    } throws: { error in
      let error = try #require(error as? RemoteError)
      return error.code == .corruptRecord && error.batchID == 2 && "\(error)".contains("checksum")
    }
    // Batch 1 came before the damaged one; nothing of batch 2 was applied.
    #expect(try damaged.ledger.logExtent().head == 1)

    _ = try await Self.apply(writer, round: 4)
    log.breakChain(at: 4)
    await #expect {
      try await broken.sync()
    } throws: { error in (error as? RemoteError)?.code == .diverged && (error as? RemoteError)?.batchID == 3 }
    #expect(try broken.ledger.logExtent().head == 3)
  }

  /// A store at the remote's head whose newest record is another is refused by a sync and by a
  /// write, nothing written: the chain is checked against the head's digest, not only against
  /// the records after the store's head.
  @Test func aStoreAtTheHeadWithAnotherNewestRecordIsRefused() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let other = try InProcessLog(model: LifecycleEdgeTests.model)
    let writer = try await Self.clone(log, directory.path + "/writer")
    _ = try await Self.apply(writer, round: 1)
    let stray = try await Self.clone(other, directory.path + "/stray")
    _ = try await Self.apply(stray, round: 2)
    let astray = Replica(ledger: stray.ledger, log: log, logger: Self.logger)
    await #expect {
      try await astray.sync()
    } throws: { error in (error as? RemoteError)?.code == .diverged && (error as? RemoteError)?.batchID == 1 }
    await #expect {
      _ = try await Self.apply(astray, round: 3)
    } throws: { error in (error as? RemoteError)?.code == .diverged }
    #expect(try stray.ledger.logExtent().head == 1)
    #expect(log.appendsSeen == 1)
  }

  /// A damaged record deep in a catch-up stops it just before that record, every one before
  /// applied; once the record is whole again the catch-up goes on from it.
  @Test func aDamagedRecordStopsTheCatchUpJustBeforeIt() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let writer = try await Self.clone(log, directory.path + "/writer")
    let follower = try await Self.clone(log, directory.path + "/follower")
    for round in 1...30 { _ = try await Self.apply(writer, round: round) }
    log.damage(batch: 20)
    await #expect {
      try await follower.sync()
    } throws: { error in (error as? RemoteError)?.code == .corruptRecord && (error as? RemoteError)?.batchID == 20 }
    #expect(try follower.ledger.logExtent().head == 19)
    // The same bit flipped back: the catch-up goes on from batch 20.
    log.damage(batch: 20)
    #expect(try await follower.sync() == SyncReport(applied: 11, head: 30))
    try Self.expectSameRecords(writer, follower)
    #expect(try await follower.ledger.verify().mode == .keptDigest)
  }

  @Test func aMigrationThroughOneReplicaIsFollowedByTheOthers() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let one = try await Self.clone(log, directory.path + "/one")
    let other = try await Self.clone(log, directory.path + "/other")
    _ = try await Self.apply(one, round: 1)
    let genre = try Model(
      json: JSONParser.parse(
        #"""
        {"entities": {"Disc": {"identity": "name",
          "attributes": {"name": "string", "label": "string", "year": "string", "genre": "string"}}}}
        """#))
    let migrating = one.ledger
    _ = try await one.write("a migration") { ledger in try ledger.migrate(to: genre) }
    #expect(one.ledger !== migrating)
    #expect(one.ledger.modelVersion == 2)
    #expect(log.head().modelVersion == 2)
    try await other.sync()
    #expect(other.ledger.modelVersion == 2)
    #expect(other.ledger.model.entities[0].attributes.map(\.name).contains("genre"))
    // A write after it, through the other replica, is under the new version everywhere.
    _ = try await Self.apply(other, round: 2)
    try await one.sync()
    try Self.expectSameRecords(one, other)
    // A new replica from batch 1 follows the migration as it comes.
    let late = try await Self.clone(log, directory.path + "/late")
    #expect(late.ledger.modelVersion == 2)
    try Self.expectSameRecords(one, late)
  }

  /// A follower wakes on the log's signal, with no poll to wake it. It tells the remote where
  /// it is at once after a quiet spell, then at most once a second while batches keep coming;
  /// a head it has not told yet is told once due, even with no batch and no poll to wake it.
  @Test func aFollowerWakesOnTheLogsSignalAndTellsItsPositionAtMostOnceASecond() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let writer = try await Self.clone(log, directory.path + "/writer")
    let follower = try await Self.clone(log, directory.path + "/follower")
    let (following, heads) = Self.follow(follower)
    defer { following.cancel() }
    var iterator = heads.makeAsyncIterator()
    let start = ContinuousClock.now
    for round in 1...3 {
      _ = try await Self.apply(writer, round: round)
      #expect(await iterator.next() == UInt64(round))
    }
    try Self.expectSameRecords(writer, follower)
    let told = log.positions
    if ContinuousClock.now - start < .milliseconds(900) { #expect(told == [1], "\(told)") }
    let deadline = ContinuousClock.now + .seconds(10)
    while log.positions.last != 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    #expect(log.positions.last == 3)
    #expect(log.positions == log.positions.sorted())
  }

  /// The throttle's arithmetic: due at once, then not before the interval; the wait for the
  /// signal ends when an untold head becomes due.
  @Test func aFollowersPositionIsDueOnceTheIntervalWentBy() {
    let now = ContinuousClock.now
    var position = FollowerPosition()
    #expect(position.isDue(at: now))
    #expect(position.wait(upTo: .seconds(30), at: now) == .seconds(30))
    position.recorded(at: now)
    position.unrecorded = 7
    #expect(!position.isDue(at: now + .milliseconds(400)))
    #expect(position.wait(upTo: .seconds(30), at: now + .milliseconds(400)) == .milliseconds(600))
    #expect(position.wait(upTo: .milliseconds(100), at: now + .milliseconds(400)) == .milliseconds(100))
    #expect(position.isDue(at: now + FollowerPosition.interval))
    #expect(position.wait(upTo: .seconds(30), at: now + .seconds(5)) == .zero)
  }

  /// A wait that a ring ended leaves no timer behind to end a later wait early: a follower
  /// waits after every batch it applies, and each early end is a catch-up for nothing.
  @Test func aWaitEndedByTheSignalLeavesNoTimerToEndTheNextWait() async throws {
    let signal = HeadSignal()
    async let first: Void = signal.wait(upTo: .milliseconds(50), executor: nil)
    try await Task.sleep(for: .milliseconds(10))
    signal.ring()
    try await first
    #expect(signal.timeoutsSet == 0, "the ring left the first wait's timeout set")
    let ended = Mutex(false)
    let second = Task {
      try await signal.wait(upTo: .seconds(30), executor: nil)
      ended.withLock { $0 = true }
    }
    // Well past the first wait's 50 ms: its timer, left running, would have ended this one.
    try await Task.sleep(for: .milliseconds(400))
    #expect(!ended.withLock { $0 }, "the first wait's timer ended the second")
    signal.ring()
    try await second.value
    #expect(ended.withLock { $0 })
  }

  /// One timer serves the waits: a wait whose deadline comes before the timer's next wake
  /// still ends by its own timeout, and a wait with no ring ends by it too.
  @Test func aShortWaitAfterALongOneEndsByItsOwnTimeout() async throws {
    let signal = HeadSignal()
    let clock = ContinuousClock()
    async let long: Void = signal.wait(upTo: .seconds(30), executor: SerialQueueExecutor.tests)
    try await Task.sleep(for: .milliseconds(10))
    signal.ring()
    try await long
    for timeout in [Duration.milliseconds(50), .milliseconds(80)] {
      let started = clock.now
      try await signal.wait(upTo: timeout, executor: SerialQueueExecutor.tests)
      let waited = clock.now - started
      // Not the long wait's 30 s (its timer, had it served this wait), with room for a busy pool.
      #expect(waited >= timeout && waited < .seconds(20), "a wait of \(timeout) took \(waited)")
    }
    // Rung before the wait: the wait returns at once, and a later one still times out.
    signal.ring()
    let started = clock.now
    try await signal.wait(upTo: .seconds(30), executor: SerialQueueExecutor.tests)
    #expect(clock.now - started < .seconds(20))
    signal.end(RemoteError.unavailable("the test ended it"))
    await #expect(throws: RemoteError.self) {
      try await signal.wait(upTo: .seconds(30), executor: SerialQueueExecutor.tests)
    }
  }

  @Test func aCompactedReplicasSnapshotIsWhereANewReplicaStarts() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let writer = try await Self.clone(log, directory.path + "/writer")
    for round in 1...5 { _ = try await Self.apply(writer, round: round) }
    _ = try await writer.compact(keepingBatches: 2, before: nil, archive: nil, discarding: true)
    let start = try writer.ledger.logExtent().firstBatch
    #expect(start > 1)
    #expect(log.snapshots().map(\.batchID) == [start])
    _ = try await Self.apply(writer, round: 6)
    let late = try await Self.clone(log, directory.path + "/late")
    #expect(try late.ledger.logExtent() == (start, 6))
    let lateDiscs = try await late.ledger.read { try $0.exportJSON("Disc") }
    #expect(try await writer.ledger.read { try $0.exportJSON("Disc") } == lateDiscs)
    #expect(try await late.verifyAgainstRemote().remoteHead == 6)
    // From batch 1 when asked.
    let whole = try await Replica.clone(
      from: log, into: directory.path + "/whole", reset: false, fromBackup: nil, fromSnapshot: false,
      options: Ledger.Options(), logger: Self.logger)
    #expect(try whole.ledger.logExtent() == (1, 6))
  }
}
