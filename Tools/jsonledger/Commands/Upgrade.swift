import ArgumentParser
import JSONLedger

struct Upgrade: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "upgrade",
    abstract: "Turn a store of an older format into the current one.",
    discussion: """
      A store of format 4 or 5 gets the index of reverts that format 6 adds, in place and in \
      one transaction: its log is not touched. A store of format 3 is replayed: the records \
      are written again in the current format into a new store, which takes the store's \
      place; the old one is kept beside it as STORE.formatN until you remove it. Nothing \
      else may have the store open meanwhile. A store already current is left alone.
      """)

  @OptionGroup var storeOptions: StoreOptions

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    var options = Ledger.Options()
    options.transformers.passesUnknownThrough = storeOptions.passThroughTransformers
    let report = try Ledger.upgrade(at: storeOptions.store, options: options)
    if json {
      Output.json([
        "from": .number(JSONNumber(report.fromFormat)), "to": .number(JSONNumber(report.toFormat)),
        "batches": .number(JSONNumber(report.batches)),
        "previous": report.previousStorePath.map { .string($0) } ?? .null,
      ])
    } else if report.fromFormat == report.toFormat {
      Output.line("\(storeOptions.store) is already format \(report.toFormat): nothing to do")
    } else if let previous = report.previousStorePath {
      Output.line(
        "upgraded \(storeOptions.store) from format \(report.fromFormat) to \(report.toFormat): \(report.batches) batches replayed; the old store is kept at \(previous)"
      )
    } else {
      Output.line(
        "upgraded \(storeOptions.store) from format \(report.fromFormat) to \(report.toFormat) in place: \(report.batches) batches read"
      )
    }
  }
}
