import ArgumentParser
import JSONLedger

struct Revert: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "revert",
    abstract: "Append a record that undoes batch N; refused (exit 3) when later batches changed the same fields.")

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Argument(help: "The batch to undo.")
  var batch: UInt64

  @Flag(help: "Revert even when later batches changed the same fields or links; the reverted values win.")
  var force = false

  @Flag(help: "Revert only the fields and links no later batch changed, and list what was kept.")
  var keepLater = false

  func validate() throws {
    if force, keepLater {
      throw ValidationError("--force overwrites later changes and --keep-later keeps them: give one")
    }
  }

  @Option(help: "Why.")
  var message: String?

  @Option(help: "Who.")
  var author: String?

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.open(durability: writeOptions.durability)
    do {
      let (batch, force, keepLater, message, author) = (batch, force, keepLater, message, author)
      let result = try await ReplicaRoute.write(ledger, "a revert") { ledger in
        try ledger.revert(batch, force: force, keepingLaterChanges: keepLater, message: message, author: author)
      }
      if json {
        Output.json(result.jsonValue(dateFormat: ledger.model.dateFormat))
        return
      }
      Output.line("batch \(result.summary.batchID) reverts batch \(batch): \(Describe.counts(result.summary))")
      if !result.overridden.isEmpty {
        Output.line("overrode \(result.overridden.count) later change\(result.overridden.count == 1 ? "" : "s"):")
        for conflict in result.overridden { Output.line("  \(conflict)") }
      }
      if !result.kept.isEmpty {
        Output.line("kept \(result.kept.count) later change\(result.kept.count == 1 ? "" : "s") (not reverted):")
        for conflict in result.kept { Output.line("  \(conflict)") }
      }
    } catch let refused as LedgerError where refused.code == .revertConflicts || refused.code == .alreadyReverted {
      if json {
        // Refused, but answered in the asked form: the same document shape, on stdout, exit 3.
        Output.json([
          "refused": true, "batch": .number(JSONNumber(batch)),
          "alreadyRevertedBy": refused.alreadyRevertedBy.map { .number(JSONNumber($0)) } ?? .null,
          "conflicts": .array(
            refused.conflicts.map { $0.jsonValue(dateFormat: ledger.model.dateFormat) }),
        ])
        try Output.finishStandardOutput()
      }
      let hint = refused.alreadyRevertedBy == nil ? "\nhint: \(Hints.forceRevert)" : ""
      throw CommandFailure(message: refused.description + hint, exitCode: 3)
    }
  }
}
