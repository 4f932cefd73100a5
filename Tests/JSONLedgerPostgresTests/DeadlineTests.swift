import Foundation
import Logging
import Testing

@testable import JSONLedgerPostgres

/// A remote call's deadline counts the server's time, not the time this process's cooperative
/// pool was held by blocking work (a server's synchronous handlers, a test runner's synchronous
/// tests): an answer that came is read, however busy the pool.
@Suite("Deadlines of remote calls", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct DeadlineTests {
  /// Holds the calling thread, as a synchronous test does.
  static func block(seconds: Double) { usleep(UInt32(seconds * 1_000_000)) }

  @Test func aQueryAnsweredWhileThePoolIsHeldIsNotTimedOut() async throws {
    let cluster = try PostgresCluster()
    let location = try RemoteLocation(url: cluster.url, ledger: "main", environment: [:])
    let connection = try await RemoteConnection.open(location, logger: Logger(label: "test"))
    defer { connection.close() }
    // Every thread of the pool held for 8 s, a second at a time, letting go
    // between turns as a runner that starts one synchronous test after another does.
    let threads = ProcessInfo.processInfo.activeProcessorCount
    async let held: Void = withTaskGroup(of: Void.self) { group in
      for _ in 0..<threads {
        group.addTask {
          for _ in 0..<8 {
            Self.block(seconds: 1)
            await Task.yield()
          }
        }
      }
    }
    // Each answer is read in steps; without an executor of their own, each step would wait
    // for a held thread, and the deadline's one step would come first about half the time.
    for round in 1...4 {
      let rows = try await connection.rows(
        "SELECT n FROM generate_series(1, 5000) AS n", "the numbers, round \(round)", timeout: .seconds(2))
      #expect(rows.count == 5_000)
    }
    await held
  }
}
