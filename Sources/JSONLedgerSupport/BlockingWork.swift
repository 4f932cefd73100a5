// Where work that holds a thread runs: the one place that decides it, for every target.
//
// - A read of a store (an LMDB read transaction never waits for another party): on a global
//   queue, `runBriefly`.
// - Work that waits for another party (LMDB's one writer, a remote, a slow client): on a
//   thread of its own, `runBlocking` (awaited) or `startBlocking` (not awaited); the writes of
//   one store on that store's serial queue, `runBlocking(on:)`.
// - An asynchronous call made from such a thread (a replica's remote append, from inside a
//   store's write transaction): `waitBlocking`, never from the cooperative pool.
// - A transport's own calls: on the executor it names (`RemoteLog.executor`; PostgreSQL's
//   `RemoteExecutor`), a `SerialQueueExecutor`: the same thread-of-its-own rule.

package import Dispatch
import Synchronization

/// Runs `body`, which reads or computes and never waits for another party, on a global queue,
/// and returns its result to the awaiting task: the async form of every read of a store. Not
/// on a thread of its own (`runBlocking`), which costs 50–80 µs more a call: a read holds a
/// shared thread only briefly.
package func runBriefly<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
  try await withCheckedThrowingContinuation { continuation in
    DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
  }
}

/// Runs `body`, which waits for another party (LMDB's one writer, a remote, a slow client), on
/// a thread of its own, and returns its result to the awaiting task. A thread of its own costs
/// tens of microseconds a call more than a global queue: work that only computes, or reads,
/// is better there.
///
/// Not on Swift's cooperative pool, nor on a global or concurrent dispatch queue: on Linux they
/// draw on one budget of threads, as many as the cores and a few more while some block, so a
/// few such waits there hold up every task of the process (a server's every request, a
/// replica's every remote call). A serial queue of its own is served by a thread of its own.
package func runBlocking<R: Sendable>(_ label: String, _ body: @escaping @Sendable () throws -> R) async throws -> R {
  try await runBlocking(on: queueOfItsOwn(label), body)
}

/// `runBlocking` on `queue`, a serial queue of the caller's: work that would wait in turn
/// anyway (the writes of one store, for LMDB's one writer) waits there as queued work, on
/// one thread, rather than a thread each.
package func runBlocking<R: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> R)
  async throws -> R
{
  try await withCheckedThrowingContinuation { continuation in
    queue.async { continuation.resume(with: Result { try body() }) }
  }
}

/// Runs `body` on a thread of its own and returns at once: for work that blocks as long as a
/// caller's counterpart lets it (`runBlocking` says why not on a shared queue).
package func startBlocking(_ label: String, _ body: @escaping @Sendable () -> Void) {
  queueOfItsOwn(label).async(execute: body)
}

/// A task executor on a serial queue of its own: the tasks that prefer it run on its thread,
/// never waiting for Swift's cooperative pool, which blocking work elsewhere may hold.
package final class SerialQueueExecutor: TaskExecutor {
  private let queue: DispatchQueue

  package init(label: String) { queue = queueOfItsOwn(label) }

  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}

/// A new serial queue: on Linux, the one kind of dispatch queue served by a thread of its own.
private func queueOfItsOwn(_ label: String) -> DispatchQueue { DispatchQueue(label: label) }

/// Runs `operation` as a task (on `executor` when given) and waits for it on this thread: the
/// bridge from synchronous code that may block (a store transaction's record gate, on the
/// store's writer thread) to an asynchronous call. Never from the cooperative pool.
package func waitBlocking<R: Sendable>(
  executorPreference executor: (any TaskExecutor)?, _ operation: @escaping @Sendable () async throws -> R
) throws -> R {
  let outcome = Mutex<Result<R, any Error>>(.failure(CancellationError()))
  let done = DispatchSemaphore(value: 0)
  Task(executorPreference: executor) {
    let result: Result<R, any Error>
    do { result = .success(try await operation()) } catch { result = .failure(error) }
    outcome.withLock { $0 = result }
    done.signal()
  }
  done.wait()
  return try outcome.withLock { $0 }.get()
}
