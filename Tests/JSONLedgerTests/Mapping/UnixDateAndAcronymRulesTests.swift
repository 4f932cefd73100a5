import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Unix dates by magnitude, acronym plurals, Rails _destroy")
struct UnixDateAndAcronymRulesTests {
  static let expected = Date(timeIntervalSince1970: 1_441_888_808)

  @Test(arguments: ["1441888808", "1441888808000", "1441888808000000", "\"1441888808000000\""])
  func aUnixNumberIsSecondsMillisecondsOrMicrosecondsByItsMagnitude(json: String) throws {
    let value = try JSONParser.parse(Array(json.utf8))
    #expect(DateCoding.date(from: value) == Self.expected)
  }

  @Test(arguments: ["1e21", "\"99999999999999999999\"", "-1e21", "1e300"])
  func aUnixNumberOutsideTheYearsOneToNineThousandNineHundredNinetyNineIsNoDate(json: String) throws {
    let value = try JSONParser.parse(Array(json.utf8))
    #expect(DateCoding.date(from: value) == nil)
  }

  @Test(arguments: [
    ("plannedToIDs", "planned_to_ids"), ("userIDs", "user_ids"), ("listImageURL", "list_image_url"),
    ("URLPath", "url_path"), ("userID", "user_id"), ("IDsList", "ids_list"),
  ])
  func anAcronymKeepsItsPluralSInSnakeCase(name: String, key: String) {
    #expect(KeyInflection.snakeCased(name) == key)
  }

  @Test func railsExportWritesAnAttributeNamedDestroyAsUnderscoreDestroy() throws {
    let model = try Model(keyCase: .snakeCase) {
      Entity("User", identity: ["id"]) {
        Attribute("id", .int64)
        Relationship("notes", to: "Note", many: true, inverse: "user")
      }
      Entity("Note", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("destroy", .bool)
        Relationship("user", to: "User", inverse: "notes")
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "notes": [["id": 2, "destroy": true]]]], as: "User")
    _ = try ledger.applySynchronously(batch)
    let exported = try ledger.read { view in
      try view.exportJSON("User", options: .init(relationships: .rails(depth: 1)))
    }
    let note = exported.arrayValue?.first?.objectValue?["notes_attributes"]?.objectValue?["0"]?.objectValue
    #expect(note?["_destroy"] == .bool(true))
    #expect(note?["destroy"] == nil)
  }
}
