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
    /// Counts the waits: a timer ends only the wait it was started for.
    var wait: UInt64 = 0
    /// The timer of the wait under way, cancelled when a ring ends the wait first.
    var timer: Task<Void, Never>?
  }
  private let state = Mutex(State())

  public init() {}

  /// The head may have moved.
  public func ring() {
    let (waiter, timer) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
      guard let waiter = state.waiter else {
        state.rung = true
        return (nil, nil)
      }
      defer { (state.waiter, state.timer) = (nil, nil) }
      return (waiter, state.timer)
    }
    timer?.cancel()
    waiter?.resume()
  }

  /// No more rings will come: the next wait throws `error`.
  public func end(_ error: RemoteError) {
    state.withLock { $0.ended = $0.ended ?? error }
    ring()
  }

  /// Returns on a ring (or one kept from before), or after `timeout`; throws once ended.
  ///
  /// A wait the ring ends cancels its timer, and a timer ends only its own wait: a follower
  /// waits after every batch it applies, and each early end would be a read for nothing.
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
      let timer = Task(executorPreference: executor) { [self] in
        // Cancelled: the ring ended the wait.
        guard (try? await Task.sleep(for: timeout)) != nil else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
          guard state.wait == wait, let waiter = state.waiter else { return nil }
          (state.waiter, state.timer) = (nil, nil)
          return waiter
        }
        waiter?.resume()
      }
      // Kept for the ring to cancel, unless the ring (or the timer) already ended the wait.
      let ended = state.withLock { state -> Bool in
        guard state.wait == wait, state.waiter != nil else { return true }
        state.timer = timer
        return false
      }
      if ended { timer.cancel() }
    }
    if let ended = state.withLock({ $0.ended }) { throw ended }
  }
}
