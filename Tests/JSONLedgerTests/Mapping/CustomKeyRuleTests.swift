import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Custom keys: found first, not hiding the name; the only-annotated rule both ways")
struct CustomKeyRuleTests {
  @Test func anAttributeWithACustomKeyIsAlsoFoundByItsName() throws {
    let model = try Model(keyCase: .snakeCase) {
      Entity("User", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("age", .int64, jsonKey: "age_of_person")
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "age_of_person": 25]], as: "User")
    try batch.stage([["id": 1, "age": 24]], as: "User")
    _ = try ledger.applySynchronously(batch)
    let exported = try ledger.read { view in try view.exportJSON("User") }
    #expect(exported == [["id": 1, "age_of_person": 24]])
  }

  @Test(arguments: [false, true])
  func aCustomKeyThatIsAnotherAttributesNameFeedsBoth(asText: Bool) throws {
    let model = try Model(keyCase: .snakeCase) {
      Entity("User", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("remote", .int64, jsonKey: "id")
        Attribute("name", .string)
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    if asText {
      try batch.stageDocument(json: Array(#"{"users": [{"id": 1, "name": "Ada"}]}"#.utf8))
    } else {
      try batch.stage([["id": 1, "name": "Ada"]], as: "User")
    }
    _ = try ledger.applySynchronously(batch)
    let user = try ledger.read { view in try view.object("User", key: 1) }
    #expect(user?["id"] == .integer(1))
    #expect(user?["remote"] == .integer(1))
    // Written once, and what is written imports back.
    let exported = try ledger.read { view in try view.exportJSON("User") }
    #expect(exported == [["id": 1, "name": "Ada"]])
  }

  @Test func theFirstKeyOfAKeyPathStaysThePaths() throws {
    let model = try Model(keyCase: .snakeCase) {
      Entity("User", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("realName", .string, jsonKey: "real_name.first")
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "real_name": ["first": "Bruce"]]], as: "User")
    _ = try ledger.applySynchronously(batch)
    #expect(try ledger.read { view in try view.object("User", key: 1)?["realName"] } == .string("Bruce"))
  }

  @Test func underTheOnlyAnnotatedRuleExportLeavesOutWhatImportDoesNotMap() throws {
    let model = try Model(
      keyCase: .snakeCase,
      entities: [
        Entity(
          "Character", identity: ["id"], mapsOnlyCustomKeys: true,
          attributes: [Attribute("id", .int64, jsonKey: "id"), Attribute("secret", .string)],
          relationships: [Relationship("powers", to: "Power", many: true, inverse: "characters", jsonKey: "powers")]),
        Entity(
          "Power", identity: ["id"], mapsOnlyCustomKeys: true,
          attributes: [Attribute("id", .int64, jsonKey: "id")],
          relationships: [Relationship("characters", to: "Character", many: true, inverse: "powers")]),
      ])
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "secret": "x", "powers": [["id": 4]]]], as: "Character")
    _ = try ledger.applySynchronously(batch)
    let powers = try ledger.read { view in try view.exportJSON("Power") }
    #expect(powers == [["id": 4]])
    let characters = try ledger.read { view in try view.exportJSON("Character") }
    #expect(characters == [["id": 1, "powers": [4]]])
  }
}
