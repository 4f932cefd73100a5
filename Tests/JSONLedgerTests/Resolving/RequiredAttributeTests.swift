import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Non-optional attributes: given when a payload creates an object")
struct RequiredAttributeTests {
  static func ledger(in directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model {
      Entity("Character", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("name", .string, optional: false)
        Attribute("realName", .string)
        Relationship("powers", to: "Power", many: true, inverse: "characters")
      }
      Entity("Power", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("name", .string, optional: false)
        Relationship("characters", to: "Character", many: true, inverse: "powers")
      }
    }
    return try Ledger.open(at: directory.storePath, model: model)
  }

  static func apply(_ ledger: Ledger, _ objects: JSONValue) throws {
    var batch = ledger.makeBatch()
    try batch.stage(objects, as: "Character")
    _ = try ledger.applySynchronously(batch)
  }

  @Test func aCreatedObjectWithoutANonOptionalAttributeFailsTheWholeBatch() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [["id": 1, "name": "Batman"]])
    #expect {
      try Self.apply(ledger, [["id": 1, "realName": "Bruce Wayne"], ["id": 2, "realName": "Peter Parker"]])
    } throws: { error in
      guard let mapping = (error as? LedgerError)?.mapping else { return false }
      return mapping.problems.map(\.entity) == ["Character"] && mapping.problems[0].path.description == "[1]"
        && mapping.problems[0].reason.contains("name")
    }
    #expect(try ledger.head == 1)
    #expect(try ledger.read { view in try view.object("Character", key: 1)?["realName"] } == nil)
  }

  @Test func anUpdateNeedNotRepeatIt() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [["id": 1, "name": "Batman"]])
    try Self.apply(ledger, [["id": 1, "realName": "Bruce Wayne"]])
    #expect(try ledger.read { view in try view.object("Character", key: 1)?["name"] } == .string("Batman"))
  }

  @Test func aLaterPayloadInTheSameBatchMaySupplyIt() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [["id": 1, "realName": "Bruce Wayne"], ["id": 1, "name": "Batman"]])
    #expect(try ledger.read { view in try view.count("Character") } == 1)
  }

  @Test func stubsFromKeysAreExempt() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [1, 2])
    try Self.apply(ledger, [["id": 3, "name": "Iron Man", "powers": [4, 9]]])
    #expect(try ledger.read { view in try view.count("Character") + view.count("Power") } == 5)
  }

  @Test func anExplicitNullForANonOptionalAttributeIsAnError() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [["id": 1, "name": "Batman"]])
    #expect(throws: LedgerError.self) { try Self.apply(ledger, [["id": 1, "name": nil]]) }
    #expect(try ledger.read { view in try view.object("Character", key: 1)?["name"] } == .string("Batman"))
  }

  @Test func aCoreDataDefaultValueMakesAnAttributeOptional() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
        <entity name="Card">
          <attribute name="id" attributeType="Integer 64"/>
          <attribute name="played" attributeType="Integer 64" defaultValueString="0"/>
          <attribute name="suit" attributeType="String"/>
        </entity>
      """#, in: directory)
    let card = try #require(model.resolved("Card"))
    #expect(card.requiredAttributes == ["suit"])
  }
}
