@_spi(Replication) import JSONLedger
import Synchronization

/// The ledger the routes use: the one they were given until the store's model changes under
/// it (a `jsonledger migrate` from another process, a replica's follower applying another
/// machine's migration, `migrate(to:)` on the ledger itself), then the store opened anew under
/// its new model version. A `Ledger` keeps the model version it opened with and refuses to
/// read past a migration (`LedgerError.modelChanged`); a server serves the store as it is.
final class CurrentLedger: Sendable {
  private let current: Mutex<Ledger>

  init(_ ledger: Ledger) { current = Mutex(ledger) }

  var ledger: Ledger { current.withLock { $0 } }

  /// The ledger, taken anew first when the store's model changed since it opened: one read
  /// transaction, which costs a request about a microsecond.
  func refreshed() throws -> Ledger {
    let ledger = self.ledger
    do { try ledger.read { _ in } } catch let error as LedgerError where error.code == .modelChanged {
      return try reopen(after: ledger)
    }
    return ledger
  }

  /// Runs `body` (a request) over the ledger as `refreshed()` leaves it. A `modelChanged`
  /// that `body` throws (a migration between the check and the body) is rethrown, once the
  /// store is taken anew for the next request.
  func running<Result>(_ body: () async throws -> Result) async throws -> Result {
    let used = try refreshed()
    do { return try await body() } catch let error as LedgerError where error.code == .modelChanged {
      _ = try? reopen(after: used)
      throw error
    }
  }

  /// Takes the store under its new model version in place of `stale`, once for every request
  /// that found `stale` out of date (a later one finds it taken).
  func reopen(after stale: Ledger) throws -> Ledger {
    try current.withLock { ledger in
      if ledger === stale { ledger = try stale.reopened() }
      return ledger
    }
  }
}

/// Writes to the routes' current ledger, off the caller's executor: what `LedgerRoutes` writes
/// through when it is given no other path.
struct CurrentWrites: LedgerWrites {
  let current: CurrentLedger

  func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    try await LocalWrites(ledger: current.ledger).write(what, body)
  }
}
