import Dispatch
import JSONLedgerSupport
import Synchronization

/// Where a ledger's writes go: a store of its own writes to its ledger (``LocalWrites``); a
/// replica's writes go through its remote's head lock (`ReplicaCore`, and JSONLedgerPostgres's
/// `Replica`, conform), so that a server or a tool on any machine writes the same way.
public protocol LedgerWrites: Sendable {
  /// Runs `body`, which writes at most one record to the ledger it is given, and returns what
  /// it returns. A failure of the path itself (a remote down) is a `RemoteError`.
  func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R

  /// Applies `batch` (`Ledger.apply`); applies that wait together may be written together.
  func apply(
    _ batch: ChangeBatch, message: String?, author: String?, source: String?, idempotencyKey: String?,
    expectedHead: UInt64?
  ) async throws -> BatchSummary
}

extension LedgerWrites {
  /// `write` of `Ledger.applySynchronously`: on a store of its own, applies waiting for its
  /// writer together commit together.
  public func apply(
    _ batch: ChangeBatch, message: String?, author: String?, source: String?, idempotencyKey: String?,
    expectedHead: UInt64?
  ) async throws -> BatchSummary {
    try await write("a batch") { ledger in
      try ledger.applySynchronously(
        batch, message: message, author: author, source: source, idempotencyKey: idempotencyKey,
        expectedHead: expectedHead)
    }
  }
}

/// Writes to the ledger itself, off the caller's executor.
public struct LocalWrites: LedgerWrites {
  public let ledger: Ledger

  public init(ledger: Ledger) { self.ledger = ledger }

  public func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    let ledger = ledger
    // The ledger's writes are synchronous and wait for LMDB's one writer: off the shared
    // threads, so that callers waiting to write do not hold up the others, and in turn on a
    // few queues of the store's, so that a burst of them waits as queued work, not a thread
    // each (300 concurrent POSTs to a server took 139 threads with a thread each). Several
    // queues, not one: applies waiting for the writer together commit together
    // (`Ledger.perform(joiningOthers:)`), which one queue would never let happen.
    return try await runBlocking(on: Self.queue(for: ledger.path)) { try body(ledger) }
  }

  /// How many queues a store's writes wait on (`queue(for:)`): as many writes can wait for
  /// the writer at once, and commit together.
  static let lanes = 8

  /// One of the serial queues of the store at `path`, in turn: `lanes` per store path, made on
  /// its first write, however many `LocalWrites` (a server makes one per request) and
  /// `Ledger`s (one per model version) a process makes of it.
  static func queue(for path: String) -> DispatchQueue {
    queues.withLock { queues in
      var store = queues[path] ?? Lanes(queues: (0..<lanes).map { _ in DispatchQueue(label: "JSONLedger.writes") })
      defer { queues[path] = store }
      store.next = (store.next + 1) % lanes
      return store.queues[store.next]
    }
  }

  private struct Lanes {
    let queues: [DispatchQueue]
    var next = 0
  }

  private static let queues = Mutex<[String: Lanes]>([:])
}
