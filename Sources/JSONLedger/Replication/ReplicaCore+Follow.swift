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
    let clock = ContinuousClock()
    var position = FollowerPosition()
    var headReadAt: ContinuousClock.Instant?
    while !Task.isCancelled {
      // A session the other side ended (a restart, a terminated backend) starts a new one at
      // once; a call on it might otherwise wait for its deadline.
      if session.isClosed { throw RemoteError.unavailable("\(log): the session was closed") }
      // The head at the session's start and then once a poll interval: the target, and the
      // chain checked where it meets the store (a remote that lost batches this replica
      // holds is found here). Other wake-ups read just the records past the local head, the
      // first of which names the store's newest as the one before it.
      let readsHead = headReadAt.map { clock.now - $0 >= pollInterval } ?? true
      let head = readsHead ? try await session.head() : nil
      if readsHead { headReadAt = clock.now }
      if untilCaughtUp, target == nil { target = head?.batchID }
      let applied = try await catchUp(on: session, to: head)
      let local = try ledger.logExtent().head
      if applied > 0 {
        progress(SyncReport(applied: applied, head: local))
        position.unrecorded = local
      }
      let caughtUp = target.map { local >= $0 } ?? false
      if let unrecorded = position.unrecorded, caughtUp || position.isDue(at: clock.now) {
        _ = try? await session.recordPosition(follower: followerName, head: unrecorded)
        position.recorded(at: clock.now)
      }
      if caughtUp { return true }
      try await signal.wait(upTo: position.wait(upTo: pollInterval, at: clock.now), executor: log.executor)
    }
    return false
  }
}

/// When a follower tells the remote where it is (`RemoteLogSession.recordPosition`): at once
/// after a quiet spell, then at most once every `interval` while batches keep coming. Each
/// telling is a write on the remote's server, and fifty followers telling it of every batch
/// made a thousand writes a second there for a batch every 50 ms.
struct FollowerPosition {
  static let interval = Duration.seconds(1)
  /// The local head the remote has not been told of.
  var unrecorded: UInt64?
  private var recordedAt: ContinuousClock.Instant?

  func isDue(at now: ContinuousClock.Instant) -> Bool {
    recordedAt.map { now - $0 >= Self.interval } ?? true
  }

  mutating func recorded(at now: ContinuousClock.Instant) {
    (unrecorded, recordedAt) = (nil, now)
  }

  /// How long to wait for the log's signal: no longer than until the untold head is due.
  func wait(upTo pollInterval: Duration, at now: ContinuousClock.Instant) -> Duration {
    guard unrecorded != nil, let recordedAt else { return pollInterval }
    return min(pollInterval, max(.zero, recordedAt + Self.interval - now))
  }
}
