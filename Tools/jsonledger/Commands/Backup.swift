import ArgumentParser
import JSONLedger

struct Backup: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Write a consistent, compacted copy of the store to a new directory while writers go on.")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The directory of the copy: new, or empty.")
  var destination: String

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let report = try await storeOptions.open().backup(to: destination)
    if json {
      Output.json([
        "path": .string(report.path), "head": .number(JSONNumber(Int(report.head))),
        "bytes": .number(JSONNumber(report.bytes)),
      ])
    } else {
      Output.line(
        "backed up \(storeOptions.store) to \(report.path): batches 1 to \(report.head), \(report.bytes) bytes")
    }
  }
}
