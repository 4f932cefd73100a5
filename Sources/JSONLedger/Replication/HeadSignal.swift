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
  }
  private let state = Mutex(State())

  public init() {}

  /// The head may have moved.
  public func ring() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard let waiter = state.waiter else {
        state.rung = true
        return nil
      }
      state.waiter = nil
      return waiter
    }
    waiter?.resume()
  }

  /// No more rings will come: the next wait throws `error`.
  public func end(_ error: RemoteError) {
    state.withLock { $0.ended = $0.ended ?? error }
    ring()
  }

  /// Returns on a ring (or one kept from before), or after `timeout`; throws once ended.
  func wait(upTo timeout: Duration, executor: (any TaskExecutor)?) async throws {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let rungBefore = state.withLock { state -> Bool in
        if state.rung {
          state.rung = false
          return true
        }
        state.waiter = continuation
        return false
      }
      if rungBefore { return continuation.resume() }
      Task(executorPreference: executor) { [self] in
        try? await Task.sleep(for: timeout)
        // The timer of an earlier wait may end a later one early: that only polls sooner.
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
          defer { state.waiter = nil }
          return state.waiter
        }
        waiter?.resume()
      }
    }
    if let ended = state.withLock({ $0.ended }) { throw ended }
  }
}
