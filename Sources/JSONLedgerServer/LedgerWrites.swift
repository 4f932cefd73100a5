import Dispatch
public import HTTPTypes
public import JSONLedger
import JSONLedgerSupport
import Synchronization

/// Where the routes' writes go. A store of its own writes to its ledger (``LocalWrites``); a
/// replica's writes go through its remote's head lock, so that a server on any machine takes
/// writes (JSONLedgerPostgres's `Replica.write(_:_:)` has this shape: the `jsonledger serve`
/// command wraps it).
public protocol LedgerWrites: Sendable {
  /// Runs `body`, which writes at most one record to the ledger it is given, and returns what
  /// it returns. A failure of the path itself (a remote down) is best thrown as a
  /// ``WriteFailure``, which the API answers with its status; a `LedgerError` is answered
  /// as any other.
  func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R
}

/// Writes to the ledger itself, off the caller's executor.
public struct LocalWrites: LedgerWrites {
  public let ledger: Ledger

  public init(ledger: Ledger) { self.ledger = ledger }

  public func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    let ledger = ledger
    // The ledger's writes are synchronous and wait for LMDB's one writer: off the shared
    // threads, so that requests waiting to write do not hold up the others, and in turn on
    // one queue of the store's, so that a burst of them waits as queued work, not a thread
    // each (300 concurrent POSTs took 139 threads with a thread each).
    return try await runBlocking(on: Self.queue(for: ledger.path)) { try body(ledger) }
  }

  /// The serial queue of the store at `path`, made on its first write: one per store path,
  /// however many `LocalWrites` (one per request) and `Ledger`s (one per model version) a
  /// server makes of it.
  static func queue(for path: String) -> DispatchQueue {
    queues.withLock { queues in
      if let queue = queues[path] { return queue }
      let queue = DispatchQueue(label: "JSONLedgerServer.writes")
      queues[path] = queue
      return queue
    }
  }

  private static let queues = Mutex<[String: DispatchQueue]>([:])
}

/// A failure of a write path, answered with its status and code: a replica's remote that
/// does not answer is `503 remoteUnavailable`, one whose history differs `409 diverged`.
public struct WriteFailure: Error, Sendable, CustomStringConvertible {
  public var status: HTTPResponse.Status
  public var code: String
  public var message: String

  public init(status: HTTPResponse.Status, code: String, message: String) {
    self.status = status
    self.code = code
    self.message = message
  }

  public var description: String { message }
}
