import ArgumentParser
import JSONLedger

struct Export: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Print objects as JSON: one entity as an array, or the whole store keyed by collection.")

  @OptionGroup var storeOptions: StoreOptions

  @Option(help: "Only this entity (and its sub-entities), as an array.")
  var entity: String?

  @Option(help: "The state right after this batch, or at this time (the last batch at or before it).")
  var asOf: BatchReference?

  @Option(help: "How relationships appear: none, ids, nested or rails.")
  var relationships = "ids"

  @Flag(help: "Print machine-readable JSON (what export always prints; accepted like on every command).")
  var json = false

  @Option(help: "How deep nested and rails exports go (1 to 100).")
  var depth = 3

  func validate() throws {
    // Said in the library's words, which name the option ("depth must be from 1 to 100").
    do { _ = try RelationshipExport(named: relationships, depth: depth) } catch {
      throw ValidationError(error.message)
    }
    if !`where`.isEmpty, entity == nil { throw ValidationError("--where needs --entity") }
    // The text is read here, before the store is opened: a condition that does not read is a
    // usage error (its fields are checked against the model once the store is open).
    for expression in `where` {
      do { _ = try Query(entity ?? "").filter(expression) } catch {
        throw ValidationError("--where: \(error.message)")
      }
    }
    if let sort, let entity {
      do { _ = try QueryText.sortKeys(sort, entity: entity) } catch {
        throw ValidationError("--sort: \(error.message)")
      }
    }
    if sort != nil, entity == nil { throw ValidationError("--sort needs --entity") }
  }

  @Option(
    help: ArgumentHelp(
      "Only the objects that meet a condition (with --entity): weight > 1000, name prefix char, id is null, …",
      discussion: """
        The operators are =, !=, <, <=, >, >=, is null, is not null, in (a, b), prefix, contains (a to-many holds \
        the key), and `placeholder` / `not placeholder`; join conditions with `and`, or repeat --where. A field \
        is a property name or its JSON key, dotted ones too (sprites.front_default, damage_class.name).
        """))
  var `where`: [String] = []

  @Option(help: ArgumentHelp("The order (with --entity): fields, - first for largest first: -weight,name."))
  var sort: String?

  @Option(help: ArgumentHelp("Relationships written nested whatever --relationships says: types,abilities."))
  var nest: String?

  @Option(
    help: ArgumentHelp(
      "Whether placeholders (objects known only by a reference to them) are exported: include or exclude.",
      discussion: "By default a whole-store export leaves them out and an export of one --entity lists them."))
  var placeholders: PlaceholderMode?

  func run() async throws {
    let ledger = try storeOptions.openForReading()
    var options = ExportOptions(relationships: try RelationshipExport(named: relationships, depth: depth))
    options.includesPlaceholders = placeholders.map { $0 == .include }
    options.nestedRelationships = Set(
      (nest ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    let asOf = try self.asOf.map { try ledger.batchID($0) }
    guard !`where`.isEmpty || sort != nil, let entity else {
      // Streamed: written as it is read, one piece at a time.
      let body = { (view: borrowing View) throws in
        try view.writeJSON(entity, options: options, writer: Output.jsonWriter) { Output.jsonText($0) }
      }
      try asOf.map { try ledger.read(asOf: $0, body) } ?? ledger.read(body)
      Output.jsonText([0x0A])
      return
    }
    var query = try `where`.reduce(Query(entity)) { query, expression in try query.filter(expression) }
    if let sort { query = query.sorted(by: try QueryText.sortKeys(sort, entity: entity)) }
    if options.includesPlaceholders == false, query.placeholders == nil { query.placeholders = .excluded }
    let finished = query
    let body = { (view: borrowing View) throws -> JSONValue in
      .array(try view.objects(finished).objects.map { try view.exportJSON($0, options: options) })
    }
    let json = try asOf.map { try ledger.read(asOf: $0, body) } ?? ledger.read(body)
    Output.json(json)
  }
}

/// `--placeholders exclude|include`.
enum PlaceholderMode: String, ExpressibleByArgument, CaseIterable {
  case exclude, include
}
