import ArgumentParser
import JSONLedger

struct Show: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "show",
    abstract: "Print one batch's record: every object it changed, field by field.")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The batch id.")
  var batch: UInt64

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    let record = try await ledger.record(batch)
    if json {
      Output.json(try ledger.recordJSON(record))
      return
    }
    Output.line(
      "batch \(record.batchID)  \(Output.time(record.time))  \(record.kind)  \(Describe.counts(record.statistics))")
    if let message = record.metadata.message { Output.line("message: \(message)") }
    if let author = record.metadata.author { Output.line("author: \(author)") }
    if let source = record.metadata.source { Output.line("source: \(source)") }
    if let run = record.metadata.run {
      Output.line("run: \(JSONWriter(options: [.sortedKeys]).string(from: run))")
    }
    if let envelope = record.metadata.envelope {
      Output.line("envelope: \(JSONWriter(options: [.sortedKeys]).string(from: envelope))")
    }
    if let reverted = record.metadata.revertedBatchID { Output.line("reverts batch \(reverted)") }
    if record.modelVersion != ledger.modelVersion {
      Output.line(
        "written under model version \(record.modelVersion); shown in version \(ledger.modelVersion)'s terms")
    }
    for lines in try Describe.changes(record.changes, from: record.batchID - 1, to: record.batchID, ledger: ledger) {
      for line in lines { Output.line("  " + line) }
    }
  }
}
