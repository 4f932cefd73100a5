import ArgumentParser
import JSONLedger

struct Diff: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Objects created, deleted and updated between the states after batches A and B (0: empty).")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The batch to compare from.")
  var from: UInt64

  @Argument(help: "The batch to compare to.")
  var to: UInt64

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.open()
    let diff = try await ledger.diff(from: from, to: to)
    let changes = diff.changes.map(Describe.withoutHiddenLinks)
    if json {
      Output.json([
        "from": .number(JSONNumber(Int64(from))), "to": .number(JSONNumber(Int64(to))),
        "changes": .array(try changes.map { try Describe.changeJSON($0, ledger: ledger) }),
      ])
      return
    }
    if changes.isEmpty { Output.line("no differences between batch \(from) and batch \(to)") }
    for change in changes {
      for line in try Describe.change(change, ledger: ledger) { Output.line(line) }
    }
  }
}
