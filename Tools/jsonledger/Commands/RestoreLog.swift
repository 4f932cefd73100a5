import ArgumentParser
import JSONLedger

struct RestoreLog: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "restore-log", abstract: "Replay an archive that compact wrote into a new store.")

  @Argument(help: "The new store directory.")
  var store: String

  @Argument(help: "The archive file.")
  var archive: String

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try Ledger.restoreLog(from: archive, to: store)
    let head = try ledger.head
    if json {
      Output.json(["store": .string(store), "head": .number(JSONNumber(Int(head)))])
    } else {
      Output.line("restored \(archive) into \(store): batches up to \(head)")
    }
  }
}
