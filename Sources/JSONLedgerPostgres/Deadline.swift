import JSONLedger
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
    let work = Task(executorPreference: RemoteExecutor.shared) {
      do { _ = once.resume(with: .success(try await operation())) } catch { _ = once.resume(with: .failure(error)) }
    }
    Task(executorPreference: RemoteExecutor.shared) {
      try? await Task.sleep(for: timeout)
      if once.resume(with: .failure(RemoteError.timedOut(what, after: timeout))) {
        work.cancel()
        onTimeout()
      }
    }
  }
}

/// A continuation resumed by whichever comes first, the others ignored.
private final class ResumeOnce<R: Sendable>: Sendable {
  private let continuation: Mutex<CheckedContinuation<R, any Error>?>

  init(_ continuation: CheckedContinuation<R, any Error>) { self.continuation = Mutex(continuation) }

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
