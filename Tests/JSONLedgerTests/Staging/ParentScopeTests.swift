import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("A parent scope names a to-many holding the staged entity")
struct ParentScopeTests {
  static func model() throws -> Model {
    try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("albums", to: "Album", many: true, inverse: "band")
        Relationship("members", to: "Musician", many: true, inverse: "band")
        Relationship("manager", to: "Musician")
      }
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("band", to: "Band", inverse: "albums")
      }
      Entity("Musician", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("band", to: "Band", inverse: "members")
      }
    }
  }

  @Test(arguments: ["members", "manager", "nothing"])
  func anotherRelationshipIsRefusedBeforeAnythingIsWritten(relationship: String) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var setup = ledger.makeBatch()
    try setup.stage([["name": "Japan", "members": ["David Sylvian"]]], as: "Band")
    _ = try ledger.applySynchronously(setup)
    var batch = ledger.makeBatch()
    let scope = ParentScope(entity: "Band", key: "Japan", relationship: relationship)
    #expect(throws: LedgerError.self) {
      try batch.stage([["name": "Tin Drum"]], as: "Album", options: StagingOptions(prune: true, parent: scope))
    }
    #expect(try ledger.head == 1)
    #expect(try ledger.read { view in try view.count("Musician") } == 1)
  }

  @Test func theRightToManyScopesThePrune() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var setup = ledger.makeBatch()
    try setup.stage([["name": "Japan", "albums": ["Tin Drum", "Quiet Life"]]], as: "Band")
    _ = try ledger.applySynchronously(setup)
    var batch = ledger.makeBatch()
    let scope = ParentScope(entity: "Band", key: "Japan", relationship: "albums")
    try batch.stage([["name": "Tin Drum"]], as: "Album", options: StagingOptions(prune: true, parent: scope))
    _ = try ledger.applySynchronously(batch)
    #expect(try ledger.read { view in try view.objects("Album").map(\.key.description) } == [#"Album "Tin Drum""#])
  }
}
