import Testing

@testable import JSONLedger

@Suite("How a store numbers the entities and relationships of each version of its model")
struct ModelNumberingTests {
  static func model(_ entities: [Entity]) throws -> Model { try Model(entities: entities) }

  static let first: [Entity] = [
    Entity(
      "Band", identity: ["name"], attributes: [Attribute("name", .string)],
      relationships: [Relationship("albums", to: "Album", many: true, inverse: "band")]),
    Entity(
      "Album", identity: ["name"], attributes: [Attribute("name", .string)],
      relationships: [Relationship("band", to: "Band", inverse: "albums")]),
  ]

  @Test func aModelIsNumberedByPosition() throws {
    let model = try Self.model(Self.first)
    #expect(model.resolved("Band")?.id == 1 && model.resolved("Album")?.id == 2)
    #expect(model.numbering.relationship("albums", declaredBy: "Band") == 1)
    #expect(model.numbering.relationship("band", declaredBy: "Album") == 2)
  }

  @Test func aRenamedElementKeepsItsNumberAndANewOneTakesTheNextUnused() throws {
    var entities = Self.first
    entities.removeFirst()  // Band and Band.albums are gone; Album.band with them
    entities[0].relationships = []
    entities[0].name = "Record"
    entities[0].renamedFrom = "Album"
    entities.insert(Entity("Label", identity: ["name"], attributes: [Attribute("name", .string)]), at: 0)
    entities.append(
      Entity(
        "Group", identity: ["name"], attributes: [Attribute("name", .string)],
        relationships: [Relationship("records", to: "Record", many: true)]))
    let next = try Self.model(Self.first).followed(by: try Self.model(entities))
    #expect(next.resolved("Record")?.id == 2)
    #expect(next.resolved("Label")?.id == 3)
    #expect(next.resolved("Group")?.id == 4)
    #expect(next.numbering.relationship("records", declaredBy: "Group") == 3)
    // Read back as a store keeps it.
    let stored = try #require(ModelNumbering(json: next.numbering.jsonValue))
    #expect(stored == next.numbering)
    #expect(try Model(json: next.jsonValue, numbering: stored).resolved("Group")?.id == 4)
  }

  @Test func aNumberingThatMissesAnEntityIsAModelError() throws {
    let numbering = ModelNumbering(positionsOf: [Self.first[0]])
    #expect {
      try Model(keyCase: .camelCase, dateFormat: .iso8601, entities: Self.first, numbering: numbering)
    } throws: { error in
      "\(error)".contains("entities.Album: the store's numbering has no number for it")
    }
  }
}
