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
