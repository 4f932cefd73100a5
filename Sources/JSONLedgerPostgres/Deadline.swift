import JSONLedger
import JSONLedgerSupport
import Synchronization

/// Runs `operation` with a deadline. A call still running at the deadline is abandoned, not
/// awaited (postgres-nio calls were seen never to return after their backend was terminated,
/// ignoring cancellation): the caller gets `RemoteError.timedOut` and `onTimeout` runs (it closes
/// the connection).
///
/// The call and its deadline run on `RemoteExecutor`, not on Swift's cooperative pool: while
/// the pool's threads are held by blocking work, an answer the server has sent would wait its
/// turn at each step of reading it, behind the deadline's one step, and be timed out.
/// `onRemoteExecutor` runs a whole session there.
func withDeadline<R: Sendable>(
  _ timeout: Duration, _ what: String, onTimeout: @escaping @Sendable () -> Void = {},
  _ operation: @escaping @Sendable () async throws -> R
) async throws -> R {
  try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
    let once = ResumeOnce(continuation)
    // The call's deadline, for the call to cancel once it returns.
    let deadline = Mutex<DeadlineTimer.Token?>(nil)
    let work = Task(executorPreference: RemoteExecutor.shared) {
      let result: Result<R, any Error>
      do { result = .success(try await operation()) } catch { result = .failure(error) }
      if let token = deadline.withLock({ $0 }) { callDeadlines.cancel(token) }
      _ = once.resume(with: result)
    }
    let token = callDeadlines.schedule(at: .now + timeout, executor: RemoteExecutor.shared) {
      if once.resume(with: .failure(RemoteError.timedOut(what, after: timeout))) {
        work.cancel()
        onTimeout()
      }
    }
    deadline.withLock { $0 = token }
    // Returned before it could see the token: cancelled here instead.
    if once.isResumed { callDeadlines.cancel(token) }
  }
}

/// The deadlines of every remote call in the process: one sleeping task serves them. A task
/// sleeping for each call's whole limit left a dispatch timer per call to fire long after it;
/// with fifty followers on one machine, those timers took about 5% of its busy time.
private let callDeadlines = DeadlineTimer()

/// A continuation resumed by whichever comes first, the others ignored.
private final class ResumeOnce<R: Sendable>: Sendable {
  private let continuation: Mutex<CheckedContinuation<R, any Error>?>

  init(_ continuation: CheckedContinuation<R, any Error>) { self.continuation = Mutex(continuation) }

  /// Whether the continuation was resumed.
  var isResumed: Bool { continuation.withLock { $0 == nil } }

  /// Resumes the continuation unless it was; whether this call did.
  func resume(with result: Result<R, any Error>) -> Bool {
    guard
      let continuation = continuation.withLock({ value in
        defer { value = nil }
        return value
      })
    else {
      return false
    }
    continuation.resume(with: result)
    return true
  }
}
