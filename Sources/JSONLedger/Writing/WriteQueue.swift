import Dispatch
import JSONLedgerSupport
import Synchronization

/// Serialises a store's writes: one transaction at a time, on one thread of its own, whether
/// the caller blocks or awaits; and hands each applied batch's summary to the subscribers of
/// `Ledger.changes`. (LMDB allows one writer per environment, and a write transaction must
/// stay on the thread that began it.)
///
/// Writes wait in a line (`sync(waiting:)`, `run(waiting:)`), which the writer thread takes
/// whole each time it comes to it: the writes that came while one committed are run in turn
/// and, applies, in one transaction (`Ledger.runLine(_:)`).
///
/// Only the write engine (`Ledger.perform(_:)`) and the writes that hold the queue across
/// several transactions (compact, which reads and archives before its one write) use it, so
/// this is where a ledger opened read-only refuses every write, before any work.
final class WriteQueue: Sendable {
  private let queue = DispatchQueue(label: "JSONLedger.writer")
  /// Set on `queue` to this queue's own identity: how a write already on it (compact's
  /// checkpoint) is told to run there directly instead of waiting for itself. (Another
  /// ledger's queue holds another identity: its writes are never run on this one's thread.)
  private static let onQueue = DispatchSpecificKey<ObjectIdentifier>()
  private let subscribers = Mutex(Subscribers())
  /// Writes submitted and not yet taken by the writer thread, in the order they came, and
  /// whether a block that drains them is on the writer's queue or running there (or a writer
  /// alone runs its write, `syncIfAlone`).
  private let line = Mutex<(writes: [any WaitingWrite], draining: Bool)>(([], false))
  /// The store's path when the ledger was opened read-only: every write then throws
  /// `LedgerError.readOnly`.
  private let readOnlyPath: String?

  init(readOnlyPath: String? = nil) {
    self.readOnlyPath = readOnlyPath
    queue.setSpecific(key: Self.onQueue, value: ObjectIdentifier(self))
  }

  /// Whether every write is refused.
  var isReadOnly: Bool { readOnlyPath != nil }

  private struct Subscribers {
    var next = 0
    var continuations: [Int: AsyncStream<BatchSummary>.Continuation] = [:]
  }

  /// Runs `body` on the writer thread, blocking the caller until it is done; on that thread
  /// already, runs it there.
  func sync<R>(_ body: () throws -> R) throws -> R {
    if let readOnlyPath { throw LedgerError.readOnly(path: readOnlyPath) }
    if isCurrent { return try LedgerError.wrappingStorageErrors(body) }
    return try queue.sync { try LedgerError.wrappingStorageErrors(body) }
  }

  /// Whether the caller runs on the writer thread (a write holding the queue, as compact's
  /// checkpoint does).
  var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.onQueue) == ObjectIdentifier(self) }

  /// Puts `write` in the line and blocks the caller until the writer thread ran it
  /// (`Ledger.runLine(_:)`, with the writes that waited beside it). Not from the writer
  /// thread (`isCurrent`): a write holding the queue runs others directly.
  func sync(waiting write: any WaitingWrite) throws {
    if let readOnlyPath { throw LedgerError.readOnly(path: readOnlyPath) }
    let done = DispatchSemaphore(value: 0)
    write.whenDone = { done.signal() }
    // The first to wait drains the line on its own thread, as a queue's `sync` runs a block
    // when the queue is idle: a writer alone is not handed from thread to thread.
    if submit(write) { queue.sync { drain() } }
    done.wait()
  }

  /// `sync(waiting:)` without blocking the caller.
  func run(waiting write: any WaitingWrite) async throws {
    if let readOnlyPath { throw LedgerError.readOnly(path: readOnlyPath) }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      write.whenDone = { continuation.resume() }
      if submit(write) { queue.async { self.drain() } }
    }
  }

  /// Puts `write` in the line; returns whether the caller is to put a block that drains it on
  /// the writer's queue (none is there yet).
  private func submit(_ write: any WaitingWrite) -> Bool {
    line.withLock { line in
      line.writes.append(write)
      defer { line.draining = true }
      return !line.draining
    }
  }

  /// Runs `body` on the writer thread, blocking the caller, when no write waits in the line
  /// nor runs from it: a writer alone runs its write on its own thread, with no hand-over.
  /// Returns nil, running nothing, when others wait (the caller then joins the line). Writes
  /// that come while `body` runs wait in the line and are drained after it.
  func syncIfAlone<R>(_ body: () throws -> R) throws -> R? {
    if let readOnlyPath { throw LedgerError.readOnly(path: readOnlyPath) }
    let alone = line.withLock { line in
      guard !line.draining else { return false }
      line.draining = true
      return true
    }
    guard alone else { return nil }
    return try queue.sync {
      defer { drainAgainIfNeeded() }
      return try LedgerError.wrappingStorageErrors(body)
    }
  }

  /// On the writer thread: runs every write waiting in the line (`Ledger.runLine(_:)`), so
  /// that writes that came while one committed run together, and tells each one's caller.
  private func drain() {
    let writes = line.withLock { line in
      defer { line.writes.removeAll() }
      return line.writes
    }
    Ledger.runLine(writes)
    for write in writes { write.whenDone?() }
    drainAgainIfNeeded()
  }

  /// Writes that came meanwhile get a block of their own at the back of the queue: a write that
  /// holds the queue (compact) and was queued meanwhile goes first, however many applies keep
  /// coming.
  private func drainAgainIfNeeded() {
    let again = line.withLock { line in
      if line.writes.isEmpty { line.draining = false }
      return line.draining
    }
    if again { queue.async { self.drain() } }
  }

  /// How many writes wait in the line. For tests.
  var waitingCount: Int { line.withLock { $0.writes.count } }

  /// Runs `body` on the writer thread without blocking the caller.
  func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    if let readOnlyPath { throw LedgerError.readOnly(path: readOnlyPath) }
    return try await runBlocking(on: queue) { try LedgerError.wrappingStorageErrors(body) }
  }

  /// Hands a summary to every current subscriber.
  func publish(_ summary: BatchSummary) {
    let continuations = subscribers.withLock { Array($0.continuations.values) }
    for continuation in continuations { continuation.yield(summary) }
  }

  /// A stream of the summaries published from now on.
  func subscribe() -> AsyncStream<BatchSummary> {
    AsyncStream { continuation in
      let id = subscribers.withLock { state -> Int in
        state.next += 1
        state.continuations[state.next] = continuation
        return state.next
      }
      continuation.onTermination = { [weak self] _ in
        _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
      }
    }
  }
}
