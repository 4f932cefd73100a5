import Foundation
import JSONLedgerTestSupport
import PropertyBased
import Testing

@testable import JSONLedger

/// The export written as text straight from the stored bytes (`View.writeJSON`) against the
/// `JSONValue` export of the same view written by the same writer: byte for byte, for every
/// relationship mode and layout, now and as of every batch.
@Suite("Export written as text")
struct ExportTextTests {
  /// Custom keys with dotted paths, a subentity key written as the type, a composite key, a
  /// property left out of exports, snake case.
  static let keyedModel: Model = {
    do {
      return try Model(keyCase: .snakeCase) {
        Entity("Band", identity: ["name"]) {
          Attribute("name", .string)
          Attribute("formedYear", .int32, jsonKey: "formed.year")
          Attribute("formedCity", .string, jsonKey: "formed.city")
          Attribute("secret", .string, exported: false)
          Relationship("albums", to: "Album", many: true, inverse: "band")
          Relationship("members", to: "Musician", many: true, ordered: true, inverse: "bands")
        }
        Entity("Album", identity: ["name"], subentityKey: "kind") {
          Attribute("name", .string)
          Attribute("label", .string)
          Attribute("sales", .int64)
          Attribute("rating", .double)
          Attribute("released", .date)
          Attribute("tags", .json)
          Relationship("band", to: "Band", inverse: "albums")
        }
        Entity("Live", parent: "Album") { Attribute("venue", .string) }
        Entity("Musician", identity: ["name", "instrument"]) {
          Attribute("name", .string)
          Attribute("instrument", .string)
          Relationship("bands", to: "Band", many: true, inverse: "members")
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  /// One batch of `keyedModel` read from a number; smaller numbers make simpler batches.
  static func applyKeyed(_ step: Int, to ledger: Ledger) throws {
    var batch = ledger.makeBatch()
    let album = "a\((step / 4) % 5)"
    let band = "b\((step / 20) % 3)"
    switch step % 4 {
    case 0, 1:
      var object: JSONObject = ["name": .string(album), "band": .string(band)]
      if step % 3 == 0 { object["label"] = .string(step % 6 == 0 ? "l\(step % 7)" : "quote \" and \u{9B}") }
      if step % 5 == 0 { object["sales"] = .number(JSONNumber(step * 1000)) }
      if step % 7 == 0 { object["rating"] = .number(JSONNumber(Double(step) / 8)) }
      if step % 11 == 0 { object["released"] = "2001-02-03T04:05:06Z" }
      if step % 13 == 0 { object["tags"] = ["live", .number(JSONNumber(step)), ["b": 1, "a": nil]] }
      if step % 2 == 1 { object["venue"] = .string("v\(step % 3)") }
      try batch.stage([.object(object)], as: step % 2 == 1 ? "Live" : "Album")
    case 2:
      try batch.stage(
        [
          [
            "name": .string(band), "formed": ["year": .number(JSONNumber(1970 + step % 20)), "city": "Leeds"],
            "secret": "s",
            "members": [
              ["name": .string("m\(step % 3)"), "instrument": "bass"], ["name": "m0", "instrument": "drums"],
            ],
          ]
        ],
        as: "Band")
    default:
      try batch.delete("Album", key: .string(album))
    }
    _ = try ledger.applySynchronously(batch)
  }

  static let modes: [RelationshipExport] = [.none, .ids, .nested(depth: 2), .rails(depth: 2)]
  static let layouts: [JSONWriter.Options] = [[], [.sortedKeys], [.prettyPrinted, .sortedKeys, .escapesAllControls]]

  /// Each entity and the whole store, written as text in pieces and built as a value.
  static func checkAgreement(
    _ view: borrowing View, modes: [RelationshipExport], layouts: [JSONWriter.Options]
  ) throws {
    for mode in modes {
      let options = ExportOptions(relationships: mode)
      for layout in layouts {
        let writer = JSONWriter(options: layout)
        for entity in ["Band", "Album", "Live", "Musician", nil] as [String?] {
          var text: [UInt8] = []
          var pieces: [Int] = []
          try view.writeJSON(entity, options: options, writer: writer, chunkSize: 100) { piece in
            text += piece
            pieces.append(piece.count)
          }
          // Every piece but the last is full.
          #expect(pieces.dropLast().allSatisfy { $0 >= 100 } && pieces.last ?? 0 > 0)
          let value =
            try entity.map { try view.exportJSON($0, options: options) } ?? view.exportDocument(options: options)
          let expected = writer.string(from: value)
          #expect(
            String(decoding: text, as: UTF8.self) == expected, "\(entity ?? "document") \(mode) \(layout.rawValue)")
        }
      }
    }
  }

  static func check(steps: [Int], model: Model, apply: (Int, Ledger) throws -> Void) {
    do {
      let directory = try TemporaryDirectory()
      let ledger = try Ledger.open(at: directory.storePath, model: model)
      for step in steps { try apply(step, ledger) }
      try ledger.read { view in try checkAgreement(view, modes: modes, layouts: layouts) }
      for batch in 1...max(1, try ledger.head) where try ledger.head > 0 {
        try ledger.read(asOf: batch) { view in
          try checkAgreement(
            view, modes: [modes[Int(batch) % modes.count]], layouts: [layouts[Int(batch) % layouts.count]])
        }
      }
    } catch {
      Issue.record("\(steps): \(error)")
    }
  }

  @Test func theTextIsTheValueExportWrittenNowAndAsOfEveryBatch() async throws {
    await propertyCheck(count: 30, input: Gen.int(in: 0...299).array(of: 1...12)) { steps in
      Self.check(steps: steps, model: StoredObjectTests.model, apply: StoredObjectTests.apply)
    }
  }

  @Test func customKeysPathsTypesAndCompositeKeysAreWrittenAsTheValueExportWritesThem() async throws {
    await propertyCheck(count: 30, input: Gen.int(in: 0...299).array(of: 1...12)) { steps in
      Self.check(steps: steps, model: Self.keyedModel, apply: Self.applyKeyed)
    }
  }

  @Test func anEmptyStoreIsAnEmptyArrayAndADocumentOfEmptyCollections() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.keyedModel)
    let (array, document) = try ledger.read { view in
      var array: [UInt8] = []
      try view.writeJSON("Album") { array += $0 }
      var document: [UInt8] = []
      try view.writeJSON(nil) { document += $0 }
      return (String(decoding: array, as: UTF8.self), String(decoding: document, as: UTF8.self))
    }
    #expect(array == "[]")
    // Any piece size is taken: below 1, every object is a piece; a huge one, the whole text.
    for chunkSize in [Int.min, 0, Int.max] {
      let text = try ledger.read { view in
        var text: [UInt8] = []
        try view.writeJSON("Album", chunkSize: chunkSize) { text += $0 }
        return String(decoding: text, as: UTF8.self)
      }
      #expect(text == "[]")
    }
    #expect(document == #"{"albums":[],"bands":[],"musicians":[]}"#)
  }

  @Test func anUnknownEntityFailsBeforeAnythingIsWritten() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.keyedModel)
    var written = 0
    #expect {
      try ledger.read { view in try view.writeJSON("Nope") { written += $0.count } }
    } throws: { error in (error as? LedgerError)?.code == .unknownEntity }
    #expect(written == 0)
  }
}
