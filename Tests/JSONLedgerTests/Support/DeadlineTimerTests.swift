import JSONLedgerSupport
import Synchronization
import Testing

extension SerialQueueExecutor {
  /// The tests' timers, on a thread of their own as the PostgreSQL transport's: Swift's shared
  /// pool, which the suite's blocking tests hold for minutes at a time, would delay them.
  static let tests = SerialQueueExecutor(label: "JSONLedgerTests.timers")
}

/// One sleeping task serves many deadlines: each action runs once at (or after) its deadline
/// unless cancelled, a deadline sooner than the timer's next wake is still kept, and with
/// nothing left the timer stops.
///
/// The timer runs on an executor of its own (`SerialQueueExecutor.tests`); the tests' own tasks wait their
/// turn on the shared pool, so they wait for what must happen, and check only lower bounds of
/// time.
@Suite("A deadline timer")
struct DeadlineTimerTests {
  /// Waits up to a minute for `condition`; whether it came.
  static func eventually(_ condition: () -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + .seconds(60)
    while !condition() {
      guard clock.now < end else { return false }
      try await Task.sleep(for: .milliseconds(20))
    }
    return true
  }

  @Test func eachDeadlineRunsOnceUnlessCancelledAndTheTimerStopsWhenNoneIsLeft() async throws {
    let timer = DeadlineTimer()
    let clock = ContinuousClock()
    let start = clock.now
    let ran = Mutex<[Int: ContinuousClock.Instant]>([:])
    // Set latest first, so that each later call sets a deadline sooner than the timer's wake.
    let delays = [400, 300, 120, 60, 200]
    var tokens: [Int: DeadlineTimer.Token] = [:]
    for delay in delays {
      tokens[delay] = timer.schedule(at: start + .milliseconds(delay), executor: SerialQueueExecutor.tests) {
        ran.withLock { $0[delay] = clock.now }
      }
    }
    #expect(timer.cancel(tokens[300]!))
    #expect(timer.waiting == 4)
    #expect(try await Self.eventually { ran.withLock { $0.count } == 4 && !timer.isSleeping })
    try await Task.sleep(for: .milliseconds(200))
    let times = ran.withLock { $0 }
    #expect(Set(times.keys) == [60, 120, 200, 400], "ran: \(times.keys.sorted())")
    for (delay, at) in times {
      #expect(at - start >= .milliseconds(delay), "the deadline at \(delay) ms ran at \(at - start)")
    }
    // Ran already: nothing to cancel, and nothing left to wait for.
    #expect(!timer.cancel(tokens[60]!))
    #expect(timer.waiting == 0)
  }

  /// Deadlines cancelled before they come (a remote call that returned) cost no wake of their
  /// own: the timer sleeps to the first one it was set for, finds them gone, and stops.
  @Test func cancelledDeadlinesLeaveNothingToRun() async throws {
    let timer = DeadlineTimer()
    let runs = Mutex(0)
    for _ in 0..<1_000 {
      let token = timer.schedule(at: .now + .milliseconds(100), executor: SerialQueueExecutor.tests) {
        runs.withLock { $0 += 1 }
      }
      #expect(timer.cancel(token))
    }
    #expect(timer.waiting == 0)
    #expect(try await Self.eventually { !timer.isSleeping })
    #expect(runs.withLock { $0 } == 0)
    // Used again after it stopped: a new timer serves the next deadline.
    let again = Mutex(false)
    _ = timer.schedule(at: .now + .milliseconds(20), executor: SerialQueueExecutor.tests) {
      again.withLock { $0 = true }
    }
    #expect(try await Self.eventually { again.withLock { $0 } })
  }
}
