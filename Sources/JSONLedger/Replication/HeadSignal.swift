import JSONLedgerSupport
import Synchronization

/// Rung by a remote log's transport whenever its head may have moved; a follower waits on it,
/// or for its poll interval, whichever comes first. A ring while nobody waits is kept for the
/// next wait; a transport that lost the means to ring (its listening connection closed) says
/// so with `end`, and the next wait throws.
@_spi(Replication) public final class HeadSignal: Sendable {
  private struct State {
    var rung = false
    var ended: RemoteError?
    var waiter: CheckedContinuation<Void, Never>?
    /// Counts the waits: a timeout ends only the wait it was set for.
    var wait: UInt64 = 0
    /// The timeout of the wait under way, cancelled when a ring ends the wait first.
    var timeout: DeadlineTimer.Token?
  }
  private let state = Mutex(State())
  /// The waits' timeouts. A follower waits after every batch it applies, and most waits end
  /// by a ring long before their timeout: one timer serves them (`DeadlineTimer`), where a
  /// task sleeping for each left a dispatch timer per batch to fire for nothing.
  private let timeouts = DeadlineTimer()

  public init() {}

  /// The head may have moved.
  public func ring() {
    let (waiter, timeout) = state.withLock { state -> (CheckedContinuation<Void, Never>?, DeadlineTimer.Token?) in
      guard let waiter = state.waiter else {
        state.rung = true
        return (nil, nil)
      }
      defer { (state.waiter, state.timeout) = (nil, nil) }
      return (waiter, state.timeout)
    }
    if let timeout { timeouts.cancel(timeout) }
    waiter?.resume()
  }

  /// No more rings will come: the next wait throws `error`.
  public func end(_ error: RemoteError) {
    state.withLock { $0.ended = $0.ended ?? error }
    ring()
  }

  /// Returns on a ring (or one kept from before), or after `timeout`; throws once ended.
  ///
  /// A wait the ring ends cancels its timeout, and a timeout ends only its own wait: a
  /// follower waits after every batch it applies, and each early end would be a read for
  /// nothing.
  func wait(upTo timeout: Duration, executor: (any TaskExecutor)?) async throws {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let wait = state.withLock { state -> UInt64? in
        if state.rung {
          state.rung = false
          return nil
        }
        state.wait &+= 1
        state.waiter = continuation
        return state.wait
      }
      guard let wait else { return continuation.resume() }
      let token = timeouts.schedule(at: .now + timeout, executor: executor) { [self] in
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
          guard state.wait == wait, let waiter = state.waiter else { return nil }
          (state.waiter, state.timeout) = (nil, nil)
          return waiter
        }
        waiter?.resume()
      }
      // Kept for the ring to cancel, unless the ring (or the timeout) already ended the wait.
      let ended = state.withLock { state -> Bool in
        guard state.wait == wait, state.waiter != nil else { return true }
        state.timeout = token
        return false
      }
      if ended { timeouts.cancel(token) }
    }
    if let ended = state.withLock({ $0.ended }) { throw ended }
  }

  /// How many timeouts are set (for tests): one at most, while a wait is under way.
  var timeoutsSet: Int { timeouts.waiting }
}
