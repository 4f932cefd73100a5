import ArgumentParser
import JSONLedger

struct Get: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get", abstract: "Print one object by key, with its relationships.")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The entity.")
  var entity: String

  @Argument(help: "The key (for a composite identity, the values separated by commas).")
  var key: String

  @Option(help: "The state right after this batch, or at this time (the last batch at or before it).")
  var asOf: BatchReference?

  @Flag(help: "Print the object as exported JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    // A composite key's comma form is the library's own rule (`view.object(_:key:)`).
    let identity = JSONValue.string(key)
    let body = { (view: borrowing View) throws -> (ObjectSnapshot?, JSONValue?) in
      guard let object = try view.object(entity, key: identity) else { return (nil, nil) }
      var options = ExportOptions()
      options.marksPlaceholders = true
      return (object, try view.exportJSON(object, options: options))
    }
    let asOf = try self.asOf.map { try ledger.batchID($0) }
    let (object, exported) = try asOf.map { try ledger.read(asOf: $0, body) } ?? ledger.read(body)
    guard let object, let exported else { throw LedgerError.objectNotFound(entity: entity, key: identity, asOf: asOf) }
    if json {
      Output.json(exported)
    } else {
      Output.line(Describe.object(object).joined(separator: "\n"))
    }
  }
}
