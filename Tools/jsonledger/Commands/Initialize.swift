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
      warnings.append(
        "insert-only (no identity: not annotated, no uniqueness constraint, no id or remoteID attribute): "
          + loaded.insertOnlyEntities.joined(separator: ", "))
    }
    if json {
      Output.json([
        "store": .string(ledger.path), "entities": .array(loaded.entities.map { .string($0.name) }),
        "insertOnly": .array(loaded.insertOnlyEntities.map { .string($0) }),
        "warnings": .array(warnings.map { .string($0) }),
      ])
    } else {
      for warning in warnings { Output.note("warning: \(warning)") }
      Output.line(
        "created store \(ledger.path) with \(loaded.entities.count) entities: \(loaded.entities.map(\.name).joined(separator: ", "))"
      )
      if passThroughTransformers {
        Output.note("note: value transformers named by the model pass values through unchanged")
      }
    }
  }
}
