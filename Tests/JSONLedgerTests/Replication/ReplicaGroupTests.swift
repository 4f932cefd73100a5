import Foundation
import JSONLedgerTestSupport
import Testing

@_spi(Replication) @testable import JSONLedger

/// A replica's applies that wait for the remote's lock together are written together: one
/// lock, one local transaction with each apply nested in it, one remote append for their
/// records. A test holds the head's lock from a session of its own while applies line up, so
/// the groups are the ones it asks for.
@Suite("A replica's applies written together")
struct ReplicaGroupTests {
  typealias Replica = ReplicaCore<InProcessLog>

  /// Waits (up to ten seconds) until `condition` holds.
  static func waitUntil(_ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while try !condition() {
      guard ContinuousClock.now < deadline else { throw CancellationError() }
      try await Task.sleep(for: .milliseconds(2))
    }
  }

  /// One apply of `replica` left waiting for the head's lock (written alone), then `count`
  /// more lined up behind it, started by `start`; the lock then let go. Returns the tasks in
  /// the order they were started.
  static func lineUp<R: Sendable>(
    _ count: Int, on replica: Replica, log: InProcessLog, _ start: @escaping @Sendable (Int) async throws -> R
  ) async throws -> [Task<R, any Error>] {
    let held = await log.holdHead()
    let first = Task { try await start(0) }
    try await Self.waitUntil { log.sessionsWaitingForHead == 1 }
    var tasks = [first]
    for index in 1...count {
      tasks.append(Task { try await start(index) })
      try await Self.waitUntil { replica.waitingApplies == index }
    }
    log.release(held)
    return tasks
  }

  @Test func appliesThatWaitTogetherAreAppendedToTheRemoteInOneCall() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let replica = try await ReplicaCoreTests.clone(log, directory.path + "/one")
    let tasks = try await Self.lineUp(8, on: replica, log: log) { round in
      try await ReplicaCoreTests.apply(replica, round: round, key: "key \(round)")
    }
    var summaries: [BatchSummary] = []
    for task in tasks { summaries.append(try await task.value) }
    // The first alone, then the eight that waited behind it, in the order they came.
    #expect(log.appendsSeen == 2)
    #expect(summaries.map(\.batchID) == Array(1...9))
    #expect(summaries.allSatisfy { $0.wroteRecord && !$0.wasAlreadyApplied })
    let keys = try await replica.ledger.log(limit: 20).reversed().compactMap(\.metadata.idempotencyKey)
    #expect(keys == (0...8).map { "key \($0)" })
    // Another replica reads the same records from the remote.
    let other = try await ReplicaCoreTests.clone(log, directory.path + "/other")
    try ReplicaCoreTests.expectSameRecords(replica, other)
    #expect(try await replica.verifyAgainstRemote() == ReplicaVerification(batches: 9, remoteHead: 9))
  }

  @Test func aGroupCatchesUpOnAnotherReplicasBatchInItsOwnCommit() async throws {
    try await ReplicaCoreTests.withTwoReplicas(firstApplying: 0) { log, replica, other in
      let changes = replica.ledger.changes
      let before = try ReplicaCoreTests.commits(replica)
      let held = await log.holdHead()
      let first = Task { try await ReplicaCoreTests.apply(replica, round: 0) }
      try await Self.waitUntil { log.sessionsWaitingForHead == 1 }
      // The other replica's write waits for the lock next: the group lined up behind the
      // first apply finds its batch.
      let others = Task { try await ReplicaCoreTests.apply(other, round: 100) }
      try await Self.waitUntil { log.sessionsWaitingForHead == 2 }
      var group: [Task<BatchSummary, any Error>] = []
      for index in 1...3 {
        group.append(Task { try await ReplicaCoreTests.apply(replica, round: index) })
        try await Self.waitUntil { replica.waitingApplies == index }
      }
      log.release(held)
      #expect(try await first.value.batchID == 1)
      #expect(try await others.value.batchID == 2)
      var grouped: [UInt64] = []
      for task in group { grouped.append(try await task.value.batchID) }
      #expect(grouped == [3, 4, 5])
      // The first apply's commit, then one for the other's batch and the group's three.
      #expect(try ReplicaCoreTests.commits(replica) == before + 2)
      #expect(try await ReplicaCoreTests.announced(changes, count: 5) == [1, 2, 3, 4, 5])
    }
  }

  @Test func anApplyThatFailsInAGroupFailsAloneAndTheOthersAreAppended() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let replica = try await ReplicaCoreTests.clone(log, directory.path + "/one")
    let batches = try (0...4).map { try ReplicaCoreTests.batch(replica, round: $0) }
    let tasks = try await Self.lineUp(4, on: replica, log: log) { index in
      // 2 expects a head that has moved by then; 4 repeats 3's key.
      try await replica.apply(
        batches[index], message: nil, author: nil, source: nil,
        idempotencyKey: index >= 3 ? "same key" : nil, expectedHead: index == 2 ? 0 : nil)
    }
    var outcomes: [Result<BatchSummary, any Error>] = []
    for task in tasks { outcomes.append(await task.result) }
    #expect(throws: LedgerError.self) { try outcomes[2].get() }
    #expect(try outcomes[3].get().batchID == 3)
    #expect(try outcomes[4].get().wasAlreadyApplied)
    #expect(try outcomes[4].get().batchID == 3)
    #expect(try outcomes[1].get().batchID == 2)
    #expect(log.appendsSeen == 2)
    #expect(try replica.ledger.logExtent().head == 3)
    #expect(try await replica.verifyAgainstRemote() == ReplicaVerification(batches: 3, remoteHead: 3))
  }

  @Test func aRemoteThatRefusesAGroupsAppendFailsEachApplyAndLeavesTheStoreAsItWas() async throws {
    let directory = try TemporaryDirectory()
    let log = try InProcessLog(model: LifecycleEdgeTests.model)
    let replica = try await ReplicaCoreTests.clone(log, directory.path + "/one")
    // The first, alone, goes through; the group's append is refused.
    log.refuseNextGroupAppend()
    let tasks = try await Self.lineUp(3, on: replica, log: log) { round in
      try await ReplicaCoreTests.apply(replica, round: round)
    }
    var outcomes: [Result<BatchSummary, any Error>] = []
    for task in tasks { outcomes.append(await task.result) }
    #expect(try outcomes[0].get().batchID == 1)
    for outcome in outcomes.dropFirst() {
      #expect(throws: RemoteError.self) { try outcome.get() }
    }
    #expect(try replica.ledger.logExtent().head == 1)
    #expect(try await replica.ledger.read { try $0.count("Disc") } == 4)
    // The lock went with the failed session: the next apply goes through.
    #expect(try await ReplicaCoreTests.apply(replica, round: 9).batchID == 2)
    _ = try await replica.verifyAgainstRemote()
  }
}
