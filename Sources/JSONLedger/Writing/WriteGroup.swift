import LMDB

/// A write waiting in the writer's line (`WriteQueue`) for the writer thread: made into its
/// `Write` there, in turn, then run alone or in a group with writes that waited beside it
/// (`Ledger.runLine(_:)`); its outcome is kept for its caller.
protocol WaitingWrite: AnyObject, Sendable {
  /// The ledger the write is for (a replica's gated ledger shares its base's line).
  var ledger: Ledger { get }
  /// Tells the caller the write ran (its outcome is set): set before the write is submitted,
  /// called on the writer thread.
  var whenDone: (@Sendable () -> Void)? { get set }
  /// Whether the write may share one transaction with the writes beside it
  /// (`Ledger.perform(joiningOthers:)`).
  var joinsGroups: Bool { get }
  /// Makes the write, on the writer thread; false when that failed (its outcome is then the
  /// error).
  func make() -> Bool
  /// Of the write made: the objects its room is for (`WriteRoom.objects`), or nil for
  /// another room.
  var roomObjects: Int? { get }
  /// Of the write made: the map room its local values take (`Ledger.localValuesRoom`).
  var localValuesRoom: Int { get }
  /// Of the write made: whether its commit flushes the meta page (`Write.flushesMeta`).
  var flushesMeta: Bool { get }
  /// Runs the write made alone, in a transaction of its own.
  func runAlone()
  /// Runs the made write's steps in `txn` (`Ledger.steps(of:in:)`), holding what its body
  /// returns until the transaction commits.
  func run(in txn: Transaction) throws
  /// The write failed with `error`: its own steps, or the transaction it ran in.
  func fail(_ error: any Error)
  /// The transaction the write ran in committed: what its body returned is its outcome.
  /// Returns the summaries to announce (none when it failed).
  func committed() -> [BatchSummary]
}

/// A write of outcome `Outcome` waiting in the writer's line.
final class Waiting<Outcome>: WaitingWrite, @unchecked Sendable {
  // Safety: the caller makes it, sets `whenDone`, and submits it (`WriteQueue.sync(waiting:)`
  // or `run(waiting:)`) through the line's lock, after which only the writer thread uses it
  // until it calls `whenDone`; the caller reads `outcome` and drops `makeWrite` only once
  // `whenDone` signalled it (a semaphore, a continuation: each orders the two threads).
  // `Ledger.applyTogether` makes, runs and reads its own inside and after one
  // `WriteQueue.sync` block, which orders the two threads the same way.
  let ledger: Ledger
  let joinsGroups: Bool
  var whenDone: (@Sendable () -> Void)?
  /// Dropped once the write is made: a synchronous caller's closure must not outlive the call.
  var makeWrite: (() throws -> Write<Outcome>)?
  private var write: Write<Outcome>?
  /// What the body returned, until its transaction commits.
  private var pending: Outcome?
  /// What the caller gets: nil until the write ran.
  var outcome: Result<Outcome, any Error>?

  init(ledger: Ledger, joinsGroups: Bool, make: @escaping () throws -> Write<Outcome>) {
    self.ledger = ledger
    self.joinsGroups = joinsGroups
    self.makeWrite = make
  }

  func make() -> Bool {
    defer { makeWrite = nil }
    do {
      guard let makeWrite else { return false }
      write = try LedgerError.wrappingStorageErrors(makeWrite)
      return true
    } catch {
      outcome = .failure(error)
      return false
    }
  }

  var roomObjects: Int? {
    guard case .objects(let objects) = write?.room else { return nil }
    return objects
  }

  var localValuesRoom: Int { Ledger.localValuesRoom(write?.localValues.map(\.value) ?? []) }
  var flushesMeta: Bool { write?.flushesMeta ?? true }

  func runAlone() {
    guard let write else { return }
    outcome = Result { try LedgerError.wrappingStorageErrors { try ledger.performOnWriterThread(write) } }
  }

  func run(in txn: Transaction) throws {
    guard let write else { return }
    pending = nil
    outcome = nil
    try Ledger.check(idempotencyKey: write.idempotencyKey)
    pending = try ledger.steps(of: write, in: txn)
  }

  func fail(_ error: any Error) {
    pending = nil
    outcome = .failure(LedgerError.wrappingStorageError(error))
  }

  func committed() -> [BatchSummary] {
    guard let pending, let write else { return [] }
    self.pending = nil
    outcome = .success(pending)
    return write.announced?(pending) ?? []
  }
}
