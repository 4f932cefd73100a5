import ArgumentParser
import JSONLedger

struct Blame: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "blame",
    abstract: "Print, for each field of one object, the batch that set the value it has now.")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The entity.")
  var entity: String

  @Argument(help: "The object's key (a composite key as its values separated by commas).")
  var key: String

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    let blame = try await ledger.blame(entity, key: .string(key))
    if json {
      Output.json(.array(blame.map(\.jsonValue)))
      return
    }
    let width = blame.map(\.field.count).max() ?? 0
    for field in blame {
      var line = field.field.padding(toLength: width, withPad: " ", startingAt: 0)
      line += "  batch \(field.batchID)  \(Output.time(field.time))"
      if let author = field.author { line += "  by \(author)" }
      if let message = field.message { line += "  \"\(message)\"" }
      Output.line(line)
    }
  }
}
