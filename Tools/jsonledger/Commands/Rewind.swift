import ArgumentParser
import JSONLedger

struct Rewind: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Append one record that makes the current state equal to the state after batch N.")

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Argument(help: "The batch whose state to return to (0: empty).")
  var batch: UInt64

  @Option(help: "Why.")
  var message: String?

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let summary = try await storeOptions.open().rewind(to: batch, message: message)
    if json {
      Output.json(Describe.summaryJSON(summary))
    } else {
      Output.line("batch \(summary.batchID) rewinds to batch \(batch): \(Describe.counts(summary))")
    }
  }
}
