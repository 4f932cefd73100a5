import ArgumentParser
import JSONLedger

struct Stats: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Batches, objects per entity, log bytes and map size.")

  @OptionGroup var storeOptions: StoreOptions

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let statistics = try await storeOptions.openForReading().statistics()
    if json {
      var objects = JSONObject()
      for (entity, count) in statistics.objectsByEntity { objects[entity] = .number(JSONNumber(count)) }
      Output.json([
        "batches": .number(JSONNumber(statistics.batches)), "objects": .object(objects),
        "logBytes": .number(JSONNumber(statistics.logBytes)), "usedBytes": .number(JSONNumber(statistics.usedBytes)),
        "mapSize": .number(JSONNumber(statistics.mapSize)),
      ])
      return
    }
    Output.line("batches: \(statistics.batches)")
    Output.line("objects:")
    for (entity, count) in statistics.objectsByEntity { Output.line("  \(entity): \(count)") }
    Output.line("log bytes: \(statistics.logBytes)")
    Output.line("store bytes used: \(statistics.usedBytes)")
    Output.line("map size: \(statistics.mapSize)")
  }
}
