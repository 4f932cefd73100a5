extension ReplicaCore {
  /// Applies the remote's records as they are appended, until cancelled (or, with
  /// `untilCaughtUp`, until the local head reaches the remote's head as it was when this call
  /// began).
  ///
  /// The log's signal wakes it at once; the log is read by batch id, so a lost or repeated
  /// signal costs nothing, and it also polls every `pollInterval`. A session that fails or
  /// stalls (`RemoteError.Code.unavailable`, `.timedOut`) is started again after a pause; a
  /// diverged or unsupported record stops it with the error, nothing of that record applied.
  public func follow(
    untilCaughtUp: Bool, pollInterval: Duration, progress: @escaping @Sendable (SyncReport) -> Void
  ) async throws {
    var target: UInt64?
    var pause = Duration.milliseconds(200)
    var failures = 0
    while !Task.isCancelled {
      let started = ContinuousClock.now
      do {
        let caughtUp = try await log.withWatchedSession { session, signal in
          try await followSession(
            session, signal, untilCaughtUp: untilCaughtUp, target: &target, pollInterval: pollInterval,
            progress: progress)
        }
        if caughtUp { return }
      } catch let error as RemoteError where error.code == .unavailable || error.code == .timedOut {
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
      }
    }
  }

  /// One session: reads the head, catches up, waits for the signal or the poll interval.
  /// True when caught up to `target` (set to the remote's head when the first session began,
  /// with `untilCaughtUp`).
  private func followSession(
    _ session: Log.Session, _ signal: HeadSignal, untilCaughtUp: Bool, target: inout UInt64?,
    pollInterval: Duration, progress: @escaping @Sendable (SyncReport) -> Void
  ) async throws -> Bool {
    try await session.checkFormat()
    while !Task.isCancelled {
      // A session the other side ended (a restart, a terminated backend) starts a new one at
      // once; a call on it might otherwise wait for its deadline.
      if session.isClosed { throw RemoteError.unavailable("\(log): the session was closed") }
      let head = try await session.head()
      if untilCaughtUp, target == nil { target = head.batchID }
      let applied = try await catchUp(on: session, to: head)
      let local = try ledger.logExtent().head
      if applied > 0 {
        progress(SyncReport(applied: applied, head: local))
        _ = try? await session.recordPosition(follower: followerName, head: local)
      }
      if let target, local >= target { return true }
      try await signal.wait(upTo: pollInterval, executor: log.executor)
    }
    return false
  }
}
