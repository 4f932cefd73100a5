import Foundation
import Synchronization

/// One workload's numbers for the three contenders (nil where a contender has none).
struct ResultRow {
  var name: String
  var unit: String
  var jsonledger: Double?
  var grdb: Double?
  var floor: Double?
  /// GRDB with an audit trail (`AuditTrailContender`).
  var audit: Double? = nil

  /// Whether a smaller number is better (time per operation, bytes, memory).
  var isLowerBetter: Bool { unit == "µs/op" || unit == "MB" || unit == "× input" }
}

/// Wall-clock seconds of `body`.
func seconds(_ body: () throws -> Void) rethrows -> Double {
  let clock = ContinuousClock()
  let elapsed = try clock.measure(body)
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Peak resident memory of this process in MB (VmHWM).
func peakResidentMegabytes() -> Double {
  guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
    let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
  else { return 0 }
  return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

/// Minor page faults of this process so far: pages touched for the first time (or again
/// after they were handed back), each a trip into the kernel that clears a page.
func minorPageFaults() -> Int {
  var usage = rusage()
  guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
  return usage.ru_minflt
}

/// The directory of this run, under which every contender's store lives; removed at the end.
let scratchRoot = FileManager.default.temporaryDirectory.appendingPathComponent(
  "jsonledger-bench-\(UUID().uuidString.prefix(8))"
).path

func scratchDirectory(_ name: String) throws -> String {
  let path = scratchRoot + "/\(name)-\(UUID().uuidString.prefix(8))"
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

/// Removes every store this run made.
func removeScratchDirectories() {
  try? FileManager.default.removeItem(atPath: scratchRoot)
}

/// Runs `body` on each of `items` from `threads` threads at once, each taking every
/// `threads`-th item in turn; the first error thrown is rethrown once all are done. Threads of
/// their own: `DispatchQueue.concurrentPerform` would run no more at once than there are cores,
/// however long each waits for a commit.
func concurrently<Item: Sendable>(_ threads: Int, _ items: [Item], _ body: @escaping @Sendable (Item) throws -> Void)
  throws
{
  let failure = Mutex<(any Error)?>(nil)
  let finished = DispatchGroup()
  for thread in 0..<threads {
    finished.enter()
    Thread {
      defer { finished.leave() }
      for index in stride(from: thread, to: items.count, by: threads) {
        do { try body(items[index]) } catch {
          failure.withLock { if $0 == nil { $0 = error } }
          return
        }
      }
    }.start()
  }
  finished.wait()
  if let error = failure.withLock({ $0 }) { throw error }
}
