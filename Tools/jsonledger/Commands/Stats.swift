import ArgumentParser
import JSONLedger

struct Stats: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stats", abstract: "Batches, objects per entity, log bytes and map size.")

  @OptionGroup var storeOptions: StoreOptions

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let statistics = try await storeOptions.openForReading().statistics()
    if json {
      var objects = JSONObject()
      for (entity, count) in statistics.objectsByEntity { objects[entity] = .number(JSONNumber(count)) }
      var placeholders = JSONObject()
      for (entity, count) in statistics.placeholdersByEntity { placeholders[entity] = .number(JSONNumber(count)) }
      Output.json([
        "batches": .number(JSONNumber(statistics.batches)), "objects": .object(objects),
        "placeholders": .object(placeholders),
        "logBytes": .number(JSONNumber(statistics.logBytes)), "usedBytes": .number(JSONNumber(statistics.usedBytes)),
        "mapSize": .number(JSONNumber(statistics.mapSize)),
      ])
      return
    }
    Output.line("batches: \(statistics.batches)")
    Output.line("objects:")
    let placeholders = Dictionary(uniqueKeysWithValues: statistics.placeholdersByEntity)
    for (entity, count) in statistics.objectsByEntity {
      // Counted apart: objects only referred to are not objects the backend sent.
      let known = placeholders[entity].map { " (\(count - $0) delivered, \($0) placeholders)" } ?? ""
      Output.line("  \(entity): \(count)\(known)")
    }
    Output.line("log bytes: \(statistics.logBytes)")
    Output.line("store bytes used: \(statistics.usedBytes)")
    Output.line("map size: \(statistics.mapSize)")
  }
}
