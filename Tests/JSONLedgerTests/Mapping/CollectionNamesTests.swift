import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Collection keys: one rule for import, errors and export")
struct CollectionNamesTests {
  static func model(keyCase: KeyCase) throws -> Model {
    try Model(keyCase: keyCase) {
      Entity("Band", identity: ["name"]) { Attribute("name", .string) }
      Entity("BandMember", identity: ["name"]) { Attribute("name", .string) }
      Entity("Category", identity: ["name"]) { Attribute("name", .string) }
    }
  }

  @Test(arguments: [KeyCase.camelCase, .snakeCase])
  func anExportedDocumentImportsBackUnderTheSameKeys(keyCase: KeyCase) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model(keyCase: keyCase))
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Japan"]], as: "Band")
    try batch.stage([["name": "Mick Karn"]], as: "BandMember")
    try batch.stage([["name": "Rock"]], as: "Category")
    _ = try ledger.applySynchronously(batch)
    let document = try ledger.read { view in try view.exportDocument() }
    let keys = try #require(document.objectValue).map(\.key)
    #expect(Set(keys) == Set(CollectionNames.knownKeys(in: ledger.model)))
    let expected =
      keyCase == .snakeCase ? ["bands", "band_members", "categories"] : ["bands", "bandMembers", "categories"]
    #expect(Set(keys) == Set(expected))
    var again = ledger.makeBatch()
    try again.stageDocument(document)
    let summary = try ledger.applySynchronously(again)
    #expect(summary.unchanged == 3)
  }

  @Test func anUnknownCollectionListsTheKeysExportWrites() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model(keyCase: .camelCase))
    var batch = ledger.makeBatch()
    #expect {
      try batch.stageDocument(["bandz": []])
    } throws: { error in
      guard let error = error as? LedgerError, error.code == .unknownCollection else { return false }
      let known = error.known
      return known == ["bands", "bandMembers", "categories"]
    }
  }

  @Test(arguments: [
    ("Preferences", "preferences"), ("Settings", "settings"), ("Status", "statuses"), ("Address", "addresses"),
    ("Category", "categories"), ("Box", "boxes"), ("Band", "bands"),
  ])
  func anAlreadyPluralNameKeepsItAsACollectionKey(name: String, key: String) throws {
    let model = try Model(
      keyCase: .snakeCase, entities: [Entity(name, identity: ["id"], attributes: [Attribute("id", .int64)])])
    #expect(CollectionNames.key(of: try #require(model.entity(named: name)), keyCase: .snakeCase) == key)
    #expect(CollectionNames.entity(forKey: key, in: model)?.name == name)
  }
}
