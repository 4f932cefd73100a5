import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Import and export name each property by one table: what an import reads under a key, an
/// export writes under that key, and no two properties share one.
@Suite("Export keys follow the import's table")
struct ExportKeyTests {
  @Test(arguments: [("type", "albumType"), ("description", "albumDescription")])
  func anAttributeNamedLikeAReservedWordKeepsItsKeyBesideTheQualifiedOne(plain: String, qualified: String) throws {
    let directory = try TemporaryDirectory()
    let model = try Model(
      json: JSONParser.parse(
        #"{"keyCase": "snake_case", "entities": {"Album": {"identity": "id", "attributes": {"id": "int64", "\#(plain)": "string", "\#(qualified)": "string"}}}}"#
      ))
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let qualifiedKey = KeyInflection.jsonKey(for: qualified, keyCase: .snakeCase)
    let payload = try JSONParser.parse(#"[{"id": 1, "\#(plain)": "LP", "\#(qualifiedKey)": "single"}]"#)
    var batch = ledger.makeBatch()
    try batch.stage(payload, as: "Album")
    _ = try ledger.applySynchronously(batch)
    let exported = try ledger.read { view in try view.exportJSON("Album") }
    let album = try #require(exported.arrayValue?.first?.objectValue)
    #expect(album[plain] == .string("LP"), "\(exported)")
    #expect(album[qualifiedKey] == .string("single"), "\(exported)")
    // The export imports back to the same values.
    var again = ledger.makeBatch()
    try again.stage(exported, as: "Album")
    #expect(try ledger.applySynchronously(again).unchanged == 1)
  }

  @Test func aReservedWordAloneStillExportsUnderTheWord() throws {
    let directory = try TemporaryDirectory()
    let model = try Model(
      json: JSONParser.parse(
        #"{"keyCase": "snake_case", "entities": {"Album": {"identity": "id", "attributes": {"id": "int64", "albumType": "string"}}}}"#
      ))
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(#"[{"id": 1, "type": "LP"}]"#), as: "Album")
    _ = try ledger.applySynchronously(batch)
    let album = try ledger.read { view in try view.exportJSON("Album") }.arrayValue?.first?.objectValue
    #expect(album?["type"] == .string("LP"))
  }
}

/// A nested export leaves out the relationship back to the object a nested one sits in, so
/// that its cost follows what it writes: 20,000 issues sharing a few labels.
@Suite("Nested export without back-links")
struct NestedExportTests {
  static let model = try! Model(keyCase: .snakeCase) {
    Entity("Issue", identity: ["id"]) {
      Attribute("id", .int64)
      Relationship("labels", to: "Label", many: true, inverse: "issues")
    }
    Entity("Label", identity: ["name"]) {
      Attribute("name", .string)
      Relationship("issues", to: "Issue", many: true, inverse: "labels")
    }
  }

  @Test func aNestedLabelDoesNotListEveryIssueThatCarriesIt() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let count = 20_000
    var batch = ledger.makeBatch()
    let issues: [JSONValue] = (0..<count).map { index in
      ["id": .number(JSONNumber(index)), "labels": [["name": "bug"], ["name": .string("area \(index % 7)")]]]
    }
    try batch.stage(.array(issues), as: "Issue")
    _ = try ledger.applySynchronously(batch)
    let start = ContinuousClock.now
    let exported = try ledger.read { view in
      try view.exportJSON("Issue", options: .init(relationships: .nested(depth: 3)))
    }
    let elapsed = ContinuousClock.now - start
    let bytes = JSONWriter().bytes(from: exported).count
    let first = try #require(exported.arrayValue?.first)
    #expect(first["labels"]?.arrayValue?.first?["issues"] == nil)
    #expect(first["labels"]?.arrayValue?.first?["name"] == "bug")
    // Linear: about 60 bytes an issue. Listing back-links wrote every issue again under each
    // of its labels (20,000 × 20,000 keys).
    #expect(bytes < count * 100, "\(bytes) bytes")
    // A bound no quadratic export meets (2,000 issues once took 9 s; 20,000 never finished).
    #expect(elapsed < .seconds(60))
    // Kept when asked: the back-link of a nested label is the issues carrying it.
    var options = ExportOptions(relationships: .nested(depth: 1))
    options.keepsInverseRelationships = true
    let kept = try ledger.read { view in
      try view.exportJSON(try #require(try view.object("Issue", key: 0)), options: options)
    }
    #expect(kept["labels"]?.arrayValue?.first?["issues"]?.arrayValue?.count == count)
  }
}
