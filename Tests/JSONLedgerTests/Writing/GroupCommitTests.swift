import Dispatch
import Foundation
import JSONLedgerSupport
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Applies that wait for the writer together commit together: one LMDB transaction, each in a
/// transaction nested in it, so that each is still all or nothing and only the flush is
/// shared (`Ledger.perform(joiningOthers:)`).
@Suite("Group commit")
struct GroupCommitTests {
  /// A batch of the discs named.
  static func batch(_ ledger: Ledger, _ names: String...) throws -> ChangeBatch {
    var batch = ledger.makeBatch()
    try batch.stage(.array(names.map { ["name": .string($0), "label": .string("label of \($0)")] }), as: "Disc")
    return batch
  }

  /// The writer thread held by a write of its own while `start` puts writes in its line, one
  /// at a time, each once the one before waits there; then let go, so that they run in the
  /// order started, as one line. (The first must be an `apply`: a blocking one that finds the
  /// line empty runs alone, outside it.)
  final class HeldWriter: Sendable {
    let ledger: Ledger
    private let release = DispatchSemaphore(value: 0)
    private let held = DispatchSemaphore(value: 0)

    init(_ ledger: Ledger) {
      self.ledger = ledger
      startBlocking("holder") { [release, held] in
        _ = try? ledger.writer.sync {
          held.signal()
          release.wait()
        }
      }
      held.wait()
    }

    /// Starts `write` and returns once it waits in the line.
    func start<R: Sendable>(_ write: @escaping @Sendable () async throws -> R) async throws -> Task<R, any Error> {
      let before = ledger.writer.waitingCount
      let task = Task { try await write() }
      let deadline = ContinuousClock.now + .seconds(30)
      while ledger.writer.waitingCount == before {
        guard ContinuousClock.now < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(1))
      }
      return task
    }

    func letGo() { release.signal() }
  }

  static func transactions(_ ledger: Ledger) throws -> Int {
    try ledger.environment.info().lastTransactionID
  }

  @Test func appliesWaitingTogetherCommitInOneTransactionEachWholeAndInOrder() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    let before = try Self.transactions(ledger)
    let writer = HeldWriter(ledger)
    var tasks: [Task<BatchSummary, any Error>] = []
    for index in 0..<12 {
      let batch = try Self.batch(ledger, "disc \(index)", "shared")
      if index.isMultiple(of: 2) {
        tasks.append(try await writer.start { try await ledger.apply(batch, message: "apply \(index)") })
      } else {
        // The blocking form waits in the same line.
        tasks.append(
          try await writer.start {
            try await runBlocking("apply") { try ledger.applySynchronously(batch, message: "apply \(index)") }
          })
      }
    }
    writer.letGo()
    var summaries: [BatchSummary] = []
    for task in tasks { summaries.append(try await task.value) }
    #expect(summaries.map(\.batchID) == Array(1...12))
    #expect(summaries.map(\.created) == [2] + Array(repeating: 1, count: 11))
    #expect(try Self.transactions(ledger) == before + 1)
    // Each record is the batch its caller applied, in the order they came.
    let log = try await ledger.log().sorted { $0.batchID < $1.batchID }
    #expect(log.map(\.metadata.message) == (0..<12).map { "apply \($0)" })
    #expect(try await ledger.read { try $0.count("Disc") } == 13)
    _ = try await ledger.verify()
  }

  @Test func aWriteThatFailsInAGroupIsUndoneAloneAndTheOthersSeeThoseBeforeThem() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    let before = try Self.transactions(ledger)
    let writer = HeldWriter(ledger)
    let first = try Self.batch(ledger, "a")
    let moved = try Self.batch(ledger, "b")
    let second = try Self.batch(ledger, "c")
    let repeated = try Self.batch(ledger, "a", "d")
    let applied = try await writer.start {
      try await ledger.apply(first, idempotencyKey: "run 1", keeping: [("since", [1])])
    }
    // The head it expects moved with the write before it.
    let refused = try await writer.start {
      try await ledger.apply(moved, expectedHead: 0, keeping: [("since", [2]), ("etag", [2])])
    }
    let next = try await writer.start { try await ledger.apply(second, expectedHead: 1) }
    let again = try await writer.start { try await ledger.apply(repeated, idempotencyKey: "run 1") }
    writer.letGo()
    #expect(try await applied.value.batchID == 1)
    await #expect(throws: LedgerError.self) { try await refused.value }
    #expect(try await next.value.batchID == 2)
    let repeatedSummary = try await again.value
    #expect(repeatedSummary.wasAlreadyApplied)
    #expect(repeatedSummary.batchID == 1)
    #expect(try Self.transactions(ledger) == before + 1)
    #expect(try ledger.head == 2)
    #expect(try ledger.localValue(forKey: "since") == [1])
    #expect(try ledger.localValue(forKey: "etag") == nil)
    #expect(try await ledger.read { view in try view.object("Disc", key: "b") } == nil)
    _ = try await ledger.verify()
  }

  @Test func aWriteThatJoinsNoGroupRunsAloneBetweenTheGroupsBeforeAndAfterIt() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    _ = try ledger.applySynchronously(try Self.batch(ledger, "old"))
    let before = try Self.transactions(ledger)
    let writer = HeldWriter(ledger)
    let one = try Self.batch(ledger, "one")
    let two = try Self.batch(ledger, "two")
    let three = try Self.batch(ledger, "three")
    let first = try await writer.start { try await ledger.apply(one) }
    let second = try await writer.start { try await ledger.apply(two) }
    // A revert reads the log before its transaction: it sees the group before it committed.
    let reverted = try await writer.start { try await ledger.revert(1) }
    let last = try await writer.start { try await ledger.apply(three) }
    writer.letGo()
    #expect(try await [first.value.batchID, second.value.batchID] == [2, 3])
    #expect(try await reverted.value.summary.batchID == 4)
    #expect(try await last.value.batchID == 5)
    #expect(try Self.transactions(ledger) == before + 3)
    #expect(try await ledger.read { view in try view.object("Disc", key: "old") } == nil)
    _ = try await ledger.verify()
  }

  @Test func aChangesSubscriberHearsEveryRecordOfAGroupInOrder() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    let changes = ledger.changes
    let writer = HeldWriter(ledger)
    var tasks: [Task<BatchSummary, any Error>] = []
    for index in 0..<5 {
      let batch = try Self.batch(ledger, "disc \(index)")
      tasks.append(try await writer.start { try await ledger.apply(batch) })
    }
    writer.letGo()
    for task in tasks { _ = try await task.value }
    var heard: [UInt64] = []
    for await summary in changes {
      heard.append(summary.batchID)
      if heard.count == 5 { break }
    }
    #expect(heard == [1, 2, 3, 4, 5])
  }
}
