import JSONLedgerSupport

/// Where remote sessions, their calls and their deadlines run: a serial dispatch queue, served
/// by a thread of its own. Swift's cooperative pool has as many threads as the machine has
/// cores, and the global (and concurrent) queues share them: blocking work there (an app's
/// synchronous code, a test runner's synchronous tests) would hold up reading an answer that
/// came, and a session's next statement, until the deadline or the server's idle limit ended it.
/// Nothing that runs here waits for another party (it reads the store, whose readers never
/// wait): the store's writes go to `offThePool`.
enum RemoteExecutor {
  static let shared = SerialQueueExecutor(label: "JSONLedgerPostgres.remote")
}

/// Runs `operation`, a remote session, on `RemoteExecutor` (its calls and what it does between
/// them), and returns to the caller's executor.
func onRemoteExecutor<R>(
  isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> R
) async throws -> R {
  try await withTaskExecutorPreference(RemoteExecutor.shared, isolation: isolation, operation: operation)
}
