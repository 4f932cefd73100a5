import Foundation

/// The instructions per object each of JSONLedger's workloads may cost, committed beside the
/// benchmarks (`Thresholds/instructions.json`, swift-nio's `Thresholds/*.json` are the model):
/// CI counts them again under callgrind and fails a change that costs more than the file's
/// tolerance on any of them, naming it. Counts, not times: they stay put between runs here,
/// where wall-clock time moves by a third.
enum Thresholds {
  /// The workloads guarded, each counted in a process of its own.
  static let workloads = [
    "fresh import", "fresh import of a file", "re-import, 10% changed", "read one object by key",
    "read all of one entity with one relationship", "full export to JSON",
    "read by key in a 2,000-batch store, a view each", "read by key as of a random batch, a view each", "verify",
    "migrate a rename and a type change", "migrate removing an attribute", "migrate by replaying the log",
    "restore a log whose to-many lists grow",
    "apply a batch of one album, a thousand times",
  ]

  /// The file's contents.
  struct File: Codable {
    /// The objects each workload handles.
    var objects: Int
    /// How much more than its threshold a workload may cost (0.03: 3%).
    var tolerance: Double
    /// Where the figures were counted, and how to count them again.
    var machine: String
    var command: String
    /// Instructions per object, by workload.
    var instructionsPerObject: [String: Double]
  }

  static let objects = 20_000
  static let command = "Tools/Benchmarks/scripts/check-thresholds.sh --record"

  /// Counts every guarded workload; an error when valgrind is missing or a count failed.
  static func countAll(objects: Int) throws -> [String: Double] {
    guard
      let counts = try Instructions.count(
        objects: objects, workloads: workloads.map { ($0, "jsonledger") })
    else { throw ThresholdFailure("valgrind is not installed: install Debian's valgrind to count instructions") }
    var perObject: [String: Double] = [:]
    for workload in workloads {
      guard let count = counts[workload]?["jsonledger"] else {
        throw ThresholdFailure("callgrind could not count \"\(workload)\"")
      }
      perObject[workload] = count
    }
    return perObject
  }

  /// Counts the workloads and writes them to `path` as the new thresholds.
  static func record(to path: String) throws {
    let counts = try countAll(objects: objects)
    let file = File(
      objects: objects, tolerance: 0.03, machine: machineDescription(), command: command,
      instructionsPerObject: counts)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    try encoder.encode(file).write(to: URL(fileURLWithPath: path))
    for workload in workloads { print("\(workload): \(Int(counts[workload] ?? 0)) instructions per object") }
    print("written to \(path)")
  }

  /// Counts the workloads and compares each with its threshold in `path`; prints a line
  /// each and returns whether none costs more than the tolerance allows.
  static func check(against path: String) throws -> Bool {
    let file: File
    do { file = try JSONDecoder().decode(File.self, from: Data(contentsOf: URL(fileURLWithPath: path))) } catch {
      throw ThresholdFailure("the thresholds file \(path) does not read: \(error)")
    }
    let counts = try countAll(objects: file.objects)
    var over: [String] = []
    print(
      "Instructions per object (callgrind, \(file.objects) objects) against \(path), tolerance \(percent(file.tolerance)):"
    )
    for workload in workloads {
      let count = counts[workload] ?? 0
      guard let threshold = file.instructionsPerObject[workload] else {
        print("  \(workload): \(Int(count)), no threshold: record them again (\(command))")
        over.append(workload)
        continue
      }
      let change = count / threshold - 1
      let verdict =
        change > file.tolerance ? "MORE THAN ALLOWED" : change < -file.tolerance ? "better: record again" : "ok"
      print("  \(workload): \(Int(count)) (threshold \(Int(threshold)), \(signedPercent(change))) \(verdict)")
      if change > file.tolerance { over.append("\(workload) (\(signedPercent(change)))") }
    }
    if !over.isEmpty {
      print("These workloads cost more instructions than their thresholds allow: \(over.joined(separator: ", ")).")
      print("Find where (README: profiling), or, if the cost is meant, record the thresholds again: \(command)")
    }
    return over.isEmpty
  }

  static func percent(_ fraction: Double) -> String { String(format: "%.1f%%", fraction * 100) }
  static func signedPercent(_ fraction: Double) -> String { (fraction >= 0 ? "+" : "") + percent(fraction) }

  /// The processor and the Swift that counted (counts move a little with either).
  static func machineDescription() -> String {
    let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
      .split(separator: "\n").first { $0.hasPrefix("model name") }
      .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
    return
      "\(cpu ?? "unknown processor"), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)"
  }
}

/// A check that could not be made (as opposed to one that failed).
struct ThresholdFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
