import ArgumentParser
import JSONLedger

struct Export: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print objects as JSON: one entity as an array, or the whole store keyed by collection.")

  @OptionGroup var storeOptions: StoreOptions

  @Option(help: "Only this entity (and its sub-entities), as an array.")
  var entity: String?

  @Option(help: "The state right after this batch, or at this time (the last batch at or before it).")
  var asOf: BatchReference?

  @Option(help: "How relationships appear: none, ids, nested or rails.")
  var relationships: RelationshipMode = .ids

  @Flag(help: "Print machine-readable JSON (what export always prints; accepted like on every command).")
  var json = false

  @Option(help: "How deep nested and rails exports go (1 to 100).")
  var depth = 3

  func validate() throws {
    guard (1...100).contains(depth) else { throw ValidationError("--depth must be from 1 to 100, not \(depth)") }
    for filter in `where` { _ = try Self.parseFilter(filter) }
    if !`where`.isEmpty, entity == nil { throw ValidationError("--where needs --entity") }
  }

  @Option(
    help: ArgumentHelp(
      "Only objects whose attribute (or to-one relationship's key) equals a value: field=value (with --entity).",
      discussion: "The field is a property name or its JSON key (full_name). Repeat it: every one must hold."))
  var `where`: [String] = []

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    let options = ExportOptions(relationships: relationships.export(depth: depth))
    let filters = try `where`.map(Self.parseFilter)
    let asOf = try self.asOf.map { try $0.batchID(in: ledger) }
    guard !filters.isEmpty, let entity else {
      // Streamed: written as it is read, one piece at a time.
      let body = { (view: borrowing View) throws in
        try view.writeJSON(entity, options: options, writer: Output.jsonWriter) { Output.jsonText($0) }
      }
      try asOf.map { try ledger.read(asOf: $0, body) } ?? ledger.read(body)
      Output.jsonText([0x0A])
      return
    }
    let body = { (view: borrowing View) throws -> JSONValue in
      let query = filters.reduce(Query(entity)) { $0.filter($1.field, .equals(.string($1.value))) }
      return .array(try view.objects(query).objects.map { try view.exportJSON($0, options: options) })
    }
    let json = try asOf.map { try ledger.read(asOf: $0, body) } ?? ledger.read(body)
    Output.json(json)
  }

  static func parseFilter(_ text: String) throws -> (field: String, value: String) {
    guard let equals = text.firstIndex(of: "=") else { throw ValidationError("--where takes field=value") }
    // `state = open` reads as `state=open`.
    return (
      text[..<equals].trimmingCharacters(in: .whitespaces),
      text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
    )
  }
}
