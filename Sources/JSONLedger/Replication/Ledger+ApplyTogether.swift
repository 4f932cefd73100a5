import LMDB
import Synchronization

/// A batch a replica applies with others that waited beside it (`Ledger.applyTogether`): the
/// arguments of one `apply`.
struct GroupedApply: Sendable {
  var batch: ChangeBatch
  var message: String?
  var author: String?
  var source: String?
  var idempotencyKey: String?
  var expectedHead: UInt64?
}

extension Ledger {
  /// Applies `applies` in one write transaction, each in a transaction nested in it
  /// (`perform(joiningOthers:)` says what each sees), and hands the new records of those kept,
  /// in order, to `send` as the transaction's last step: a replica's applies that waited for
  /// the remote's lock together, appended to it in one call. Returns each apply's outcome, in
  /// order: an apply that fails alone gets its own error. When `send` or the commit fails,
  /// every other apply fails with that error, and the store is as it was.
  ///
  /// `send` runs at most once: if the map fills, the whole transaction runs again before it
  /// is called, and once it was called, a transaction run again fails. `catchUp`: records the
  /// store lacks, which the transaction appends before the applies.
  func applyTogether(
    _ applies: [GroupedApply], after catchUp: CatchUpRecords? = nil, sending send: ([OutgoingRecord]) throws -> Void
  ) throws -> [Result<BatchSummary, any Error>] {
    let records = KeptRecords()
    let gated = try committing(through: { records.take($0) }, after: catchUp)
    let waiting = applies.map { apply in
      let metadata = ChangeRecord.Metadata(
        message: apply.message, author: apply.author, source: apply.source, idempotencyKey: apply.idempotencyKey)
      return Waiting(ledger: gated, joinsGroups: true) {
        try gated.applying(apply.batch, metadata: metadata, expectedHead: apply.expectedHead, keeping: [])
      }
    }
    try writer.sync {
      let made = waiting.filter { $0.make() }
      do {
        // The records are the remote's once sent: the commit need not flush the meta page,
        // as a write alone through the remote does not.
        try gated.performTogether(made, flushingMeta: false, startingOver: records.startOver, kept: records.settle) {
          txn in
          try txn.checkMapWasNeverFull()
          let kept = records.kept
          guard !kept.isEmpty else { return }
          try records.sendOnce { try send(kept) }
        }
      } catch {
        let failure = LedgerError.wrappingStorageError(error)
        for write in made where write.outcome == nil { write.fail(failure) }
      }
    }
    return waiting.map { $0.outcome ?? .failure(LedgerError.invalidArgument("an apply of a group did not run")) }
  }
}

/// The new records of a group's applies (`Ledger.applyTogether`): each write's record is
/// taken from the gate as it is appended, and kept once its nested transaction is kept.
private final class KeptRecords: Sendable {
  private struct State {
    var kept: [OutgoingRecord] = []
    /// The record the write running now appended, until it is kept or undone.
    var pending: [OutgoingRecord] = []
    var sent = false
  }
  private let state = Mutex(State())

  var kept: [OutgoingRecord] { state.withLock { $0.kept } }

  func take(_ record: OutgoingRecord) { state.withLock { $0.pending.append(record) } }

  func startOver() {
    state.withLock { state in
      state.kept = []
      state.pending = []
    }
  }

  func settle(_ isKept: Bool) {
    state.withLock { state in
      if isKept { state.kept += state.pending }
      state.pending = []
    }
  }

  /// Runs `send` unless it ran before: a transaction run again after it (a commit that met a
  /// full map) must not hand the remote the same records twice.
  func sendOnce(_ send: () throws -> Void) throws {
    let first = state.withLock { state in
      defer { state.sent = true }
      return !state.sent
    }
    guard first else {
      throw RemoteError.unsupported(
        "the remote took a group's records and the store's commit of them failed: the next catch-up applies them")
    }
    try send()
  }
}
