import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Compacting the log into an archive, and restoring it")
struct CompactTests {
  /// The whole store as of a batch, objects sorted: comparable across stores.
  static func snapshot(_ ledger: Ledger, asOf batch: UInt64) throws -> [String] {
    try ledger.read(asOf: batch) { view in
      var lines: [String] = []
      for entity in ["Band", "Album", "Musician"] {
        guard case .array(let objects) = try view.exportJSON(entity, options: .init(relationships: .ids)) else {
          continue
        }
        lines += objects.map { entity + " " + JSONWriter().string(from: $0) }
      }
      return lines.sorted()
    }
  }

  /// A store of random batches (imports, deletions, prunes, a forced revert), and its state
  /// as of each batch.
  static func filledStore(_ path: String, seed: UInt64) throws -> (Ledger, [UInt64: [String]]) {
    var generator = SeededGenerator(seed: seed)
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    for index in 0..<12 {
      if index == 8 {
        _ = try ledger.revert(5, force: true)
      } else {
        _ = try ledger.applySynchronously(try HistoryPropertyTests.randomBatch(ledger, using: &generator))
      }
    }
    var states: [UInt64: [String]] = [:]
    for batch in 1...(try ledger.head) { states[batch] = try snapshot(ledger, asOf: batch) }
    return (ledger, states)
  }

  /// - Reliability: A store compacted with an archive, then the archive restored into a new store: every
  ///   archived record equal, the state as of every batch equal, both verify
  /// - Size: 3 seeds × 12 batches
  @Test(.tags(.reliability), arguments: [1, 2, 3] as [UInt64])
  func aCompactedStoreKeepsItsStateFromTheHorizonAndTheArchiveGivesBackEveryBatch(seed: UInt64) throws {
    let directory = try TemporaryDirectory()
    let (ledger, states) = try Self.filledStore(directory.path + "/store", seed: seed)
    let head = try ledger.head
    let records = try (1...head).map { try ledger.record($0) }
    let archive = directory.path + "/archive"
    let report = try ledger.compact(keepingBatches: 4, archive: archive)
    #expect(report.firstBatch == head - 4)
    #expect(report.archivedBatches == Int(head - 4))
    #expect(try ledger.head == head)
    // Replayed: the checkpoint and the four batches kept.
    #expect(try ledger.verify().batches == 5)
    for batch in report.firstBatch...head {
      #expect(try Self.snapshot(ledger, asOf: batch) == states[batch], "\(batch)")
    }
    #expect {
      try ledger.read(asOf: report.firstBatch - 1) { _ in }
    } throws: { error in
      if let error = error as? LedgerError, error.code == .batchArchived {
        return error.firstBatch == report.firstBatch
      }
      return false
    }
    let log = try ledger.log()
    #expect(log.map(\.batchID) == Array((report.firstBatch...head).reversed()))
    #expect(log.last?.kind == .checkpoint)
    #expect(throws: LedgerError.self) { try ledger.revert(report.firstBatch) }
    #expect(throws: LedgerError.self) { try ledger.record(1) }
    // Writing goes on, and so does verify.
    var generator = SeededGenerator(seed: seed + 100)
    _ = try ledger.applySynchronously(try HistoryPropertyTests.randomBatch(ledger, using: &generator))
    #expect(try ledger.verify().batches == 6)

    // The archive, replayed into a new store, gives back every batch it holds.
    let restored = try Ledger.restoreLog(from: archive, to: directory.path + "/restored")
    #expect(try restored.head == report.firstBatch)
    for batch in 1...report.firstBatch {
      #expect(try restored.record(batch) == records[Int(batch) - 1])
      #expect(try Self.snapshot(restored, asOf: batch) == states[batch], "\(batch)")
    }
    #expect(try restored.verify().batches == report.firstBatch)
  }

  @Test func compactingAgainArchivesFromTheCheckpointAndADateHorizonWorks() throws {
    let directory = try TemporaryDirectory()
    let (ledger, states) = try Self.filledStore(directory.path + "/store", seed: 9)
    let head = try ledger.head
    _ = try ledger.compact(keepingBatches: 6, archive: directory.path + "/first")
    let second = try ledger.compact(before: Date.distantFuture, archive: directory.path + "/second")
    #expect(second.firstBatch == head)
    #expect(try Self.snapshot(ledger, asOf: head) == states[head])
    #expect(try ledger.verify().batches == 1)
    let restored = try Ledger.restoreLog(from: directory.path + "/second", to: directory.path + "/restored")
    #expect(try restored.log().last?.kind == .checkpoint)
    #expect(try Self.snapshot(restored, asOf: head) == states[head])
    // Nothing before the horizon left: nothing to do.
    #expect(try ledger.compact(keepingBatches: 0, archive: directory.path + "/third").archivedBatches == 0)
  }

  @Test func anArchiveIsRequiredUnlessDiscarding() throws {
    let directory = try TemporaryDirectory()
    let (ledger, _) = try Self.filledStore(directory.path + "/store", seed: 4)
    #expect(throws: LedgerError.self) { try ledger.compact(keepingBatches: 2, archive: nil) }
    #expect(throws: LedgerError.self) { try ledger.compact(archive: directory.path + "/a") }
    let existing = try directory.write("taken", "x")
    #expect(throws: LedgerError.self) { try ledger.compact(keepingBatches: 2, archive: existing) }
    let report = try ledger.compact(keepingBatches: 2, archive: nil, discarding: true)
    #expect(report.archivePath == nil)
    #expect(try ledger.verify().batches == 3)
  }
}
