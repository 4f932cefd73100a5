import ArgumentParser
import JSONLedger

struct Rewind: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rewind",
    abstract: "Append one record that makes the current state equal to the state after batch N.")

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Argument(help: "The batch whose state to return to (0: empty), or a time (the last batch at or before it).")
  var batch: BatchReference

  @Option(help: "Why.")
  var message: String?

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.open()
    let batch = try ledger.batchID(self.batch, emptyStoreAllowed: true)
    let message = self.message
    let summary = try await ReplicaRoute.write(ledger, "a rewind") { ledger in
      try ledger.rewind(to: batch, message: message)
    }
    if json {
      Output.json(BatchSummary.jsonValue(of: [summary]))
    } else {
      Output.line("batch \(summary.batchID) rewinds to batch \(batch): \(Describe.counts(summary))")
    }
  }
}
