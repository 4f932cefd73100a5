/// The batches a store's log holds: from `firstBatch` (1, or the checkpoint `compact` left) to
/// `head`. The one owner of "can batch N be read": as-of reads, diffs, records, reverts and
/// rewinds all ask it, so that none of them reads a state the log no longer has.
struct LogExtent: Sendable, Equatable {
  /// The first batch the log holds.
  let firstBatch: UInt64
  /// The last applied batch (0 for an empty log).
  let head: UInt64

  /// Whether batches before `firstBatch` were moved out by `compact`.
  var isCompacted: Bool { firstBatch > 1 }

  /// Throws unless the state right after `batch` can be read: a batch the log holds, or 0
  /// (the empty store) while nothing was archived. A checkpoint holds the state after it,
  /// so `firstBatch` itself is readable.
  func checkState(after batch: UInt64) throws(LedgerError) {
    if batch == 0, !isCompacted { return }
    try checkRecord(batch)
  }

  /// Throws unless the log holds the record of `batch`.
  func checkRecord(_ batch: UInt64) throws(LedgerError) {
    if batch >= 1, batch < firstBatch { throw .batchArchived(batch, firstBatch: firstBatch) }
    guard batch >= 1, batch <= head else { throw .batchNotFound(batch, first: head == 0 ? 0 : firstBatch, head: head) }
  }
}
