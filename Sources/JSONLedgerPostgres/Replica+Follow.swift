import Foundation
@_spi(Replication) import JSONLedger
import Logging
import PostgresNIO
import Synchronization

extension Replica {
  /// Applies the remote's records as they are committed, until cancelled (or, with
  /// `untilCaughtUp`, until the local head reaches the remote's head as it was when this call
  /// began).
  ///
  /// A notification (PostgreSQL `LISTEN`) wakes it at once; the log is read by batch id, so a
  /// lost or repeated notification costs nothing, and it also polls every `pollInterval`. A
  /// session that fails or stalls (a call that does not answer is abandoned after its
  /// deadline) is started again after a pause; a diverged or unsupported record stops it with
  /// the error, nothing of that record applied.
  ///
  /// - Parameters:
  ///   - untilCaughtUp: return once the local head reaches the remote's head as it was when
  ///     the call began, instead of following until cancelled.
  ///   - pollInterval: how often the remote's head is read besides its notifications.
  ///   - progress: called after each catch-up that applied records, with the local head.
  public func follow(
    untilCaughtUp: Bool = false, pollInterval: Duration = .seconds(1),
    progress: @escaping @Sendable (SyncReport) -> Void = { _ in }
  ) async throws {
    var target: UInt64?
    var pause = Duration.milliseconds(200)
    var failures = 0
    while !Task.isCancelled {
      let started = ContinuousClock.now
      do {
        let caughtUp = try await onRemoteExecutor {
          try await followSession(
            untilCaughtUp: untilCaughtUp, target: &target, pollInterval: pollInterval, progress: progress)
        }
        if caughtUp {
          return
        }
      } catch let error as RemoteError {
        switch error {
        case .unavailable, .timedOut:
          // The supervisor: a session that failed or stalled starts again, after a pause. A
          // catch-up that was asked to end gives up after a minute or so of failures. A session
          // that ran a while before it ended was a working one: the count starts again.
          if ContinuousClock.now - started > .seconds(2) {
            failures = 0
            pause = .milliseconds(200)
          }
          failures += 1
          if untilCaughtUp, failures > 12 { throw error }
          logger.notice("follow: the session ended; starting another", metadata: ["reason": "\(error)"])
          try await Task.sleep(for: pause)
          pause = min(pause * 2, .seconds(5))
        default:
          throw error
        }
      }
    }
  }

  /// One session: a connection that reads, one that listens. True when caught up (with
  /// `untilCaughtUp`).
  private func followSession(
    untilCaughtUp: Bool, target: inout UInt64?, pollInterval: Duration,
    progress: @escaping @Sendable (SyncReport) -> Void
  ) async throws -> Bool {
    let reader = try await RemoteConnection.open(remote, logger: logger)
    defer { reader.close() }
    try await reader.checkSchema()
    let wake = WakeFlag()
    // LISTEN first, then read: a batch committed between the two is read, not missed.
    let listener = try await RemoteConnection.open(remote, logger: logger)
    defer { listener.close() }
    let channel = remote.channel
    let listening = Task(executorPreference: RemoteExecutor.shared) {
      try await listener.connection.listen(on: channel) { notifications in
        for try await _ in notifications { wake.ring() }
      }
    }
    defer { listening.cancel() }
    while !Task.isCancelled {
      // A connection the server ended (a restart, a terminated backend) starts a new session at
      // once; a call on it might otherwise wait for its deadline.
      if reader.connection.isClosed || listener.connection.isClosed {
        throw RemoteError.unavailable("\(remote): the server closed the session")
      }
      let row = try await reader.ledgerRow(timeout: .seconds(10))
      if untilCaughtUp, target == nil { target = row.head }
      let applied = try await catchUp(on: reader, to: row.head)
      let head = try ledger.logExtent().head
      if applied > 0 {
        progress(SyncReport(applied: applied, head: head))
        _ = try? await reader.recordPosition(follower: followerName, head: head)
      }
      if let target, head >= target { return true }
      // Until a notification or the poll interval.
      await wake.wait(upTo: pollInterval)
    }
    return false
  }
}

/// Rung by the listener on each notification; the follower's loop waits on it, or for the
/// poll interval, whichever comes first. A ring while nobody waits is kept for the next wait.
private final class WakeFlag: Sendable {
  private struct State {
    var rung = false
    var waiter: CheckedContinuation<Void, Never>?
  }
  private let state = Mutex(State())

  func ring() {
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

  /// Returns on a ring (or one kept from before), or after `timeout`.
  func wait(upTo timeout: Duration) async {
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
      Task(executorPreference: RemoteExecutor.shared) { [self] in
        try? await Task.sleep(for: timeout)
        // The timer of an earlier wait may end a later one early: that only polls sooner.
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
          defer { state.waiter = nil }
          return state.waiter
        }
        waiter?.resume()
      }
    }
  }
}
