import Dispatch
import JSONLedgerSupport
import Synchronization

/// Serialises a store's writes: one write at a time, on one thread of its own, whether the
/// caller blocks or awaits; and hands each applied batch's summary to the subscribers of
/// `Ledger.changes`. (LMDB allows one writer per environment, and a write transaction must
/// stay on the thread that began it.)
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
    if DispatchQueue.getSpecific(key: Self.onQueue) == ObjectIdentifier(self) {
      return try LedgerError.wrappingStorageErrors(body)
    }
    return try queue.sync { try LedgerError.wrappingStorageErrors(body) }
  }

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
