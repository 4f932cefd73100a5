import ArgumentParser
import JSONLedger

struct Initialize: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "init", abstract: "Create a store from a model file (.json, .xcdatamodel or .xcdatamodeld).")

  @Argument(help: "The store directory to create (missing or empty).")
  var store: String

  @Option(help: "The model: a JSON model file, an .xcdatamodeld or .xcdatamodel folder, or its contents XML.")
  var model: String

  @Flag(help: "Accept a model naming value transformers this tool cannot register (values pass through unchanged).")
  var passThroughTransformers = false

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let loaded = try Model(contentsOf: model)
    var options = Ledger.Options()
    options.transformers.passesUnknownThrough = passThroughTransformers
    let ledger = try Ledger.create(at: store, model: loaded, options: options)
    var warnings = loaded.warnings
    if !loaded.insertOnlyEntities.isEmpty {
      // Said in the words of the model the user wrote.
      let why =
        model.lowercased().hasSuffix(".json")
        ? "no \"identity\", no id or remoteID attribute, and no relationship that \"owns\" it; "
          + "give it an \"identity\", or mark the relationship that holds its objects \"owns\": true"
        : "no identityAttributes, sync.isPrimaryKey or JC.isIdentifier annotation, no uniqueness constraint, "
          + "no id or remoteID attribute, and no relationship annotated owns = YES"
      warnings.append(
        "insert-only, every import adds new objects: \(loaded.insertOnlyEntities.joined(separator: ", ")) (\(why))")
    }
    if json {
      Output.json([
        "store": .string(ledger.path), "entities": .array(loaded.entities.map { .string($0.name) }),
        "insertOnly": .array(loaded.insertOnlyEntities.map { .string($0) }),
        "warnings": .array(warnings.map { .string($0) }),
      ])
    } else {
      // The summary first, whole, then each warning on lines of its own.
      Output.line(
        "created store \(ledger.path) with \(loaded.entities.count) entities: \(loaded.entities.map(\.name).joined(separator: ", "))"
      )
      for warning in warnings { Output.note("warning: \(warning)") }
      if passThroughTransformers {
        Output.note("note: value transformers named by the model pass values through unchanged")
      }
    }
  }
}
