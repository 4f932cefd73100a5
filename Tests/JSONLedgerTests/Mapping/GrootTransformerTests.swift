import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Groot's entity-level hooks: `JSONDictionaryTransformerName` and `entityMapperName`.
@Suite("Dictionary transformers and entity mappers")
struct GrootTransformerTests {
  @Test func aDictionaryTransformerRewritesEachObjectBeforeMapping() throws {
    var entity = Entity(
      "Character", identity: ["identifier"],
      attributes: [Attribute("identifier", .int64, jsonKey: "id"), Attribute("name", .string)])
    entity.dictionaryTransformer = "LegacyID"
    let model = try Model(entities: [entity])
    var options = Ledger.Options()
    options.transformers.registerDictionaryTransformer("LegacyID") { object in
      var copy = object
      if let legacy = object["legacy_id"] { copy["id"] = legacy }
      return copy
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model, options: options)
    var batch = ledger.makeBatch()
    try batch.stage([["legacy_id": "1699", "name": "Batman"]], as: "Character")
    _ = try ledger.applySynchronously(batch)
    #expect(try ledger.read { view in try view.object("Character", key: 1699)?["name"] } == .string("Batman"))
  }

  @Test func anEntityMapperPicksTheSubEntity() throws {
    var abstract = Entity(
      "Abstract", identity: ["identifier"], abstract: true, attributes: [Attribute("identifier", .int64, jsonKey: "id")]
    )
    abstract.entityMapper = "ByType"
    let model = try Model(entities: [
      abstract,
      Entity("ConcreteA", parent: "Abstract", attributes: [Attribute("foo", .string)]),
      Entity("ConcreteB", parent: "Abstract", attributes: [Attribute("bar", .string)]),
    ])
    var options = Ledger.Options()
    options.transformers.registerEntityMapper("ByType") { object in object["type"]?.stringValue.map { "Concrete" + $0 }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model, options: options)
    var batch = ledger.makeBatch()
    try batch.stage(
      [["id": 1, "type": "A", "foo": "this is A"], ["id": 2, "type": "B", "bar": "this is B"]], as: "Abstract")
    _ = try ledger.applySynchronously(batch)
    try ledger.read { view throws in
      #expect(try view.object("Abstract", key: 1)?.entity == "ConcreteA")
      #expect(try view.object("ConcreteB", key: 2)?["bar"] == .string("this is B"))
      #expect(try view.count("Abstract") == 2)
    }
    var update = ledger.makeBatch()
    try update.stage([["id": 1, "foo": "A has been updated"]], as: "Abstract")
    _ = try ledger.applySynchronously(update)
    #expect(try ledger.read { view in try view.object("Abstract", key: 1)?["foo"] } == .string("A has been updated"))
  }

  @Test func unregisteredEntityHooksFailToOpen() throws {
    var entity = Entity("A", identity: ["id"], attributes: [Attribute("id", .int64)])
    entity.entityMapper = "Missing"
    let directory = try TemporaryDirectory()
    #expect {
      try Ledger.open(at: directory.storePath, model: try Model(entities: [entity]))
    } throws: { error in "\(error)".contains("entities.A.entityMapper") }
  }
}
