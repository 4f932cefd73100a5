import Synchronization

/// Many deadlines served by one sleeping task: it wakes at the earliest deadline it was set
/// for, runs the actions whose deadlines have come, and sleeps on to the next; it ends when
/// none is left, and the next deadline starts another.
///
/// For deadlines that are almost always cancelled long before they come (a remote call's
/// limit, a follower's wait for the next batch): a task that sleeps for each of them costs a
/// task, and a timer of the dispatch library's that still fires after the task is cancelled,
/// for every call. Here a deadline later than the timer's next wake costs an entry in a table.
package final class DeadlineTimer: Sendable {
  /// A deadline's handle, to cancel it.
  package struct Token: Hashable, Sendable {
    fileprivate let id: UInt64
  }

  private struct Entry {
    let deadline: ContinuousClock.Instant
    let action: @Sendable () -> Void
  }

  private struct State {
    var entries: [UInt64: Entry] = [:]
    var lastID: UInt64 = 0
    /// The sleeping task, and when it wakes.
    var task: Task<Void, Never>?
    var wakes: ContinuousClock.Instant?
  }

  private let state = Mutex(State())

  package init() {}

  /// Runs `action` at `deadline`, unless it is cancelled first. A timer started for it runs on
  /// `executor` (nil: the default).
  package func schedule(
    at deadline: ContinuousClock.Instant, executor: (any TaskExecutor)?, _ action: @escaping @Sendable () -> Void
  ) -> Token {
    let (token, replaced) = state.withLock { state -> (Token, Task<Void, Never>?) in
      state.lastID &+= 1
      state.entries[state.lastID] = Entry(deadline: deadline, action: action)
      let token = Token(id: state.lastID)
      // A timer that wakes by this deadline serves it; else one that does replaces it.
      if let wakes = state.wakes, wakes <= deadline { return (token, nil) }
      let replaced = state.task
      state.wakes = deadline
      state.task = Task(executorPreference: executor) { [self] in await run(from: deadline) }
      return (token, replaced)
    }
    replaced?.cancel()
    return token
  }

  /// Cancels the deadline of `token`: its action will not run. False when it ran already (or
  /// was cancelled before).
  @discardableResult
  package func cancel(_ token: Token) -> Bool {
    state.withLock { $0.entries.removeValue(forKey: token.id) != nil }
  }

  /// How many deadlines are waiting (for tests).
  package var waiting: Int { state.withLock { $0.entries.count } }

  /// Whether a timer task is sleeping (for tests).
  package var isSleeping: Bool { state.withLock { $0.task != nil } }

  /// The timer: sleeps until `wake`, runs what is due, goes on to the earliest deadline left.
  /// A timer replaced by one that wakes sooner was cancelled, or finds it was replaced.
  private func run(from wake: ContinuousClock.Instant) async {
    var wake = wake
    while true {
      guard (try? await Task.sleep(until: wake, clock: .continuous)) != nil else { return }
      let now = ContinuousClock.now
      let (due, next) = state.withLock {
        state -> ([(id: UInt64, action: @Sendable () -> Void)], ContinuousClock.Instant?) in
        guard state.wakes == wake else { return ([], nil) }
        var due: [(id: UInt64, action: @Sendable () -> Void)] = []
        var next: ContinuousClock.Instant?
        for (id, entry) in state.entries {
          if entry.deadline <= now {
            due.append((id, entry.action))
          } else if next.map({ entry.deadline < $0 }) ?? true {
            next = entry.deadline
          }
        }
        for (id, _) in due { state.entries[id] = nil }
        if let next {
          state.wakes = next
        } else {
          (state.task, state.wakes) = (nil, nil)
        }
        return (due, next)
      }
      for (_, action) in due { action() }
      guard let next else { return }
      wake = next
    }
  }
}
