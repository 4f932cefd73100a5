import ArgumentParser
import JSONLedger

struct Log: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "log",
    abstract: "List batches newest first, or those that touched one object.")

  @OptionGroup var storeOptions: StoreOptions

  @Option(help: "With --key: only batches that touched this object.")
  var entity: String?

  @Option(help: "The object's key.")
  var key: String?

  @Option(help: "At most this many batches.")
  var limit: Int?

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func validate() throws {
    if (entity == nil) != (key == nil) { throw ValidationError("--entity and --key go together") }
    if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more, not \(limit)") }
  }

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    var entries: [LogEntry]
    if let entity, let key {
      entries = try await ledger.log(entity, key: .string(key))
      if let limit { entries = Array(entries.prefix(limit)) }
    } else {
      entries = try await ledger.log(limit: limit)
    }
    if json {
      Output.json(.array(try entries.map { try ledger.logEntryJSON($0) }))
      return
    }
    if entries.isEmpty { Output.line("(no batches)") }
    for entry in entries {
      var line =
        "batch \(entry.batchID)  \(Output.time(entry.time))  \(entry.kind)  \(Describe.counts(entry.statistics))"
      if let reverted = entry.metadata.revertedBatchID { line += "  (reverts \(reverted))" }
      if let message = entry.metadata.message { line += "  \"\(message)\"" }
      if let author = entry.metadata.author { line += "  by \(author)" }
      Output.line(line)
      if let change = entry.change {
        for detail in try Describe.change(change, ledger: ledger) { Output.line("    " + detail) }
      }
    }
  }
}
