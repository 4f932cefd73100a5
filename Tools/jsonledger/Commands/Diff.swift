import ArgumentParser
import JSONLedger

struct Diff: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Objects created, deleted and updated between the states after batches A and B (0: empty).")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The batch to compare from: an id, or a time (the last batch at or before it).")
  var from: BatchReference

  @Argument(help: "The batch to compare to: an id, or a time.")
  var to: BatchReference

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    let from = try ledger.batchID(self.from, emptyStoreAllowed: true)
    let to = try ledger.batchID(self.to, emptyStoreAllowed: true)
    let diff = try await ledger.diff(from: from, to: to)
    if json {
      Output.json(try ledger.diffJSON(diff))
      return
    }
    if diff.changes.isEmpty { Output.line("no differences between batch \(from) and batch \(to)") }
    for lines in try Describe.changes(diff.changes, from: from, to: to, ledger: ledger) {
      for line in lines { Output.line(line) }
    }
  }
}
