import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Prune keeps every object the payload holds")
struct PruneTests {
  @Test func nestedObjectsOfThePrunedEntityCountAsPresent() throws {
    let model = try Model(keyCase: .snakeCase) {
      Entity("Unit", identity: ["id"]) {
        Attribute("id", .int64)
        Relationship("children", to: "Unit", many: true, inverse: "parentUnit")
        Relationship("parentUnit", to: "Unit", inverse: "children")
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let tree: JSONValue = [["id": 1, "children": [["id": 11, "children": [["id": 111]]], ["id": 12]]]]
    for _ in 0..<2 {
      var batch = ledger.makeBatch()
      try batch.stage(tree, as: "Unit", options: StagingOptions(prune: true))
      _ = try ledger.applySynchronously(batch)
      #expect(try ledger.read { view in try view.count("Unit") } == 4)
    }
    var smaller = ledger.makeBatch()
    try smaller.stage([["id": 1, "children": [["id": 12]]]], as: "Unit", options: StagingOptions(prune: true))
    _ = try ledger.applySynchronously(smaller)
    #expect(
      try ledger.read { view in try view.objects("Unit").map(\.key.identity) } == [[.integer(1)], [.integer(12)]])
  }
}
