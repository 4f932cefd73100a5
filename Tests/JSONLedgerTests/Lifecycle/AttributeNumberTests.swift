import Foundation
import JSONLedgerTestSupport
import LMDB
import Testing

@testable import JSONLedger

/// Stored states name attributes by numbers that stay through the model's versions: adding an
/// attribute rewrites no state, wherever its name sorts.
@Suite("Attribute numbers: adding an attribute rewrites nothing")
struct AttributeNumberTests {
  static func model(_ extra: [String] = []) throws -> Model {
    try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("formed", .int32)
        for name in extra { Attribute(name, .string) }
        Relationship("albums", to: "Album", many: true, inverse: "band")
      }
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("label", .string)
        Relationship("band", to: "Band", inverse: "albums")
      }
    }
  }

  /// Every entry of `state` and `history`, as they are stored.
  static func storedStates(_ ledger: Ledger) throws -> [Entry] {
    try ledger.environment.read { txn in
      try txn.entries(in: ledger.layout.state, prefix: []) + txn.entries(in: ledger.layout.history, prefix: [])
    }
  }

  static func apply(_ ledger: Ledger, _ json: String) throws {
    var batch = ledger.makeBatch()
    try batch.stageDocument(try JSONParser.parse(json))
    _ = try ledger.applySynchronously(batch)
  }

  @Test func addingAttributesThatSortFirstAndBetweenRewritesNoStateAndTheyReadBack() throws {
    let directory = try TemporaryDirectory()
    let path = directory.storePath
    var ledger = try Ledger.open(at: path, model: try Self.model())
    try Self.apply(
      ledger, #"{"bands": [{"name": "Japan", "formed": 1974, "albums": [{"name": "Tin Drum", "label": "Virgin"}]}]}"#)
    try Self.apply(ledger, #"{"bands": [{"name": "Japan", "formed": 1973}]}"#)
    let before = try Self.storedStates(ledger)
    ledger.close()
    // "active" sorts before every name, "genre" between "formed" and "name".
    for (step, extra) in [["active"], ["active", "genre"]].enumerated() {
      let report = try Ledger.migrate(at: path, to: try Self.model(extra))
      #expect(report.plan.method == .inPlace, "step \(step)")
      #expect(report.plan.rewrittenEntities.isEmpty, "step \(step)")
      ledger = try Ledger.open(at: path)
      #expect(try Self.storedStates(ledger) == before, "step \(step): a stored state was rewritten")
      ledger.close()
    }
    ledger = try Ledger.open(at: path)
    defer { ledger.close() }
    try Self.apply(ledger, #"{"bands": [{"name": "Japan", "active": "no", "genre": "new wave"}]}"#)
    try ledger.read { view in
      let japan = try #require(try view.object("Band", key: "Japan"))
      #expect(japan.attributes["formed"] == .integer(1973))
      #expect(japan.attributes["active"] == .string("no"))
      #expect(japan.attributes["genre"] == .string("new wave"))
    }
    // As of the first batch, from an undo image written before either attribute existed.
    let formed = try ledger.read(asOf: 1) { view in try view.object("Band", key: "Japan")?.attributes["formed"] }
    #expect(formed == .integer(1974))
    #expect(try ledger.verify().batches == 5)
    // The numbers: the model's first attributes by position, each added one the next.
    let band = try #require(ledger.model.resolved("Band"))
    #expect(band.attributeNumber(of: "formed") == 1)
    #expect(band.attributeNumber(of: "name") == 2)
    #expect(band.attributeNumber(of: "active") == 3)
    #expect(band.attributeNumber(of: "genre") == 4)
  }

  @Test func aNumberingWithAttributeNumbersReadsBackAsItWasWritten() throws {
    let first = try Self.model()
    let next = try first.followed(by: try Self.model(["active"]))
    let numbering = try #require(ModelNumbering(json: next.numbering.jsonValue))
    #expect(numbering == next.numbering)
    #expect(numbering.attributes["Band"]?["active"] == 3)
    // A numbering without them (a store made before they were kept) numbers by position.
    let legacy = try #require(ModelNumbering(json: first.numbering.jsonValue))
    #expect(legacy.attributes.isEmpty)
    let rebuilt = try Model(
      keyCase: first.keyCase, dateFormat: first.dateFormat, entities: first.entities, numbering: legacy)
    #expect(rebuilt.resolved("Album")?.storedAttributeNumbers == [1, 2])
  }
}
