import Foundation
import JSONLedgerSupport
import LMDB

extension Ledger {
  /// The write of an import (an applied batch, a streamed file): resolves it with `resolve`
  /// against the store and appends its record, the idempotency key and the expected head
  /// checked first. What the store already holds writes nothing.
  func importing(
    metadata: ChangeRecord.Metadata, expectedHead: UInt64?, estimatedObjects: Int, kind: ChangeRecord.Kind,
    resolve: @escaping (inout BatchResolver) throws -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics)
  ) -> Write<BatchSummary> {
    Write(room: .objects(estimatedObjects), idempotencyKey: metadata.idempotencyKey, announcing: \.self) { [self] txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      if let key = metadata.idempotencyKey, let existing = try store.batch(forIdempotencyKey: key) {
        // A batch `compact` archived is known by its key alone: applied, its counts gone.
        guard existing >= (try store.extent().firstBatch) else {
          return BatchSummary(archivedBatch: existing, kind: kind)
        }
        let record = try readRecord(existing, txn)
        return BatchSummary(record: record, wasAlreadyApplied: true)
      }
      let head = try store.head()
      if let expectedHead, expectedHead != head { throw LedgerError.headMoved(expected: expectedHead, actual: head) }
      // The resolver's working set and identity table are let go before the record is
      // written: only the changes and the states after them go on.
      let (changes, statistics, knownStates, emptied, kept) = try {
        () throws -> ([ObjectChange], ChangeRecord.Statistics, [ObjectState?]?, [String], Int) in
        var resolver = try BatchResolver(model: model, source: store, origin: batchOrigin)
        let (changes, statistics) = try resolve(&resolver)
        return (
          changes, statistics, resolver.takeAfterStates(), resolver.emptiedByPrune, resolver.placeholdersKeptByPrune
        )
      }()
      // What the store already holds is no change: no record is written for it.
      if changes.isEmpty, kind == .import || kind == .delete {
        var summary = BatchSummary(changingNothingAfter: head, at: Date(), kind: kind, statistics: statistics)
        summary.placeholdersKept = kept
        return summary
      }
      // A large batch's resolver leaves gaps in the heap that the record and the pages the
      // transaction fills do not fit in: handed back before they are made.
      if changes.count >= Self.largeBatch { FreedMemory.returnToSystem() }
      var summary = try appendNew(
        kind: kind, metadata: metadata, statistics: statistics, changes: consume changes, txn,
        knownStates: consume knownStates)
      summary.emptiedByPrune = emptied
      summary.placeholdersKept = kept
      return summary
    }
  }
}
