import Crypto
import Dispatch
import Foundation
import JSONLedgerSupport
import Synchronization

/// Lower-case hexadecimal text of bytes (checksums in messages).
enum Hex {
  static func string(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }
}

/// SHA-256 of a record's bytes: the link of the remote log's chain.
enum RecordDigest {
  /// The digest before batch 1: 32 zero bytes.
  static let genesis = [UInt8](repeating: 0, count: 32)

  static func of(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
}

enum Insecure_MD5 {
  static func digest(_ bytes: [UInt8]) -> [UInt8] { Array(Insecure.MD5.hash(data: bytes)) }
}

/// Runs `body` on a thread of its own (`runBlocking`): the store's calls block, and a record
/// gate blocks on the remote while they run.
func offThePool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
  try await runBlocking("JSONLedgerPostgres.store", body)
}

/// Runs `operation` and waits for it on this (non-cooperative) thread: the bridge from a store
/// transaction's synchronous record gate to the remote's asynchronous calls.
func waitBlocking<R: Sendable>(_ operation: @escaping @Sendable () async throws -> R) throws -> R {
  let outcome = Mutex<Result<R, any Error>?>(nil)
  let done = DispatchSemaphore(value: 0)
  Task(executorPreference: RemoteExecutor.shared) {
    let result: Result<R, any Error>
    do { result = .success(try await operation()) } catch { result = .failure(error) }
    outcome.withLock { $0 = result }
    done.signal()
  }
  done.wait()
  guard let result = outcome.withLock({ $0 }) else {
    throw RemoteError.unavailable("the remote call ended without an answer")
  }
  return try result.get()
}

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

/// Where remote sessions, their calls and their deadlines run: a serial dispatch queue, served
/// by a thread of its own. Swift's cooperative pool has as many threads as the machine has
/// cores, and the global (and concurrent) queues share them: blocking work there (an app's
/// synchronous code, a test runner's synchronous tests) would hold up reading an answer that
/// came, and a session's next statement, until the deadline or the server's idle limit ended it.
/// Nothing that runs here waits for another party (it reads the store, whose readers never
/// wait): the store's writes go to `offThePool`.
final class RemoteExecutor: TaskExecutor {
  static let shared = RemoteExecutor()

  private let queue = DispatchQueue(label: "JSONLedgerPostgres.remote")

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}

/// Runs `operation`, a remote session, on `RemoteExecutor` (its calls and what it does between
/// them), and returns to the caller's executor.
func onRemoteExecutor<R>(
  isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> R
) async throws -> R {
  try await withTaskExecutorPreference(RemoteExecutor.shared, isolation: isolation, operation: operation)
}
