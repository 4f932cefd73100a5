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

  static let issues = try! Model(keyCase: .snakeCase) {
    Entity("Issue", identity: ["id"]) {
      Attribute("id", .int64)
      Attribute("title", .string)
    }
  }

  static func ids(_ ledger: Ledger) throws -> [Int64] {
    try ledger.read { view in try view.objects("Issue").compactMap { $0["id"]?.keyText }.compactMap { Int64($0) } }
      .sorted()
  }

  @Test func twoPagesStagedWithPruneInOneBatchKeepEveryObjectEitherPageHolds() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.issues)
    var first = ledger.makeBatch()
    try first.stage([["id": 1], ["id": 2], ["id": 3], ["id": 4], ["id": 5]], as: "Issue")
    _ = try ledger.applySynchronously(first)
    // A paginated response: page one and page two, each staged with prune; issue 5 is gone.
    var sync = ledger.makeBatch()
    try sync.stage([["id": 1], ["id": 2]], as: "Issue", options: StagingOptions(prune: true))
    try sync.stage([["id": 3], ["id": 4]], as: "Issue", options: StagingOptions(prune: true))
    let summary = try ledger.applySynchronously(sync)
    #expect(try Self.ids(ledger) == [1, 2, 3, 4])
    #expect(summary.deleted == 1)
    #expect(summary.emptiedByPrune.isEmpty)
    _ = try ledger.verify()
  }

  @Test func anObjectStagedLaterInTheBatchWithoutPruneIsKept() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.issues)
    var first = ledger.makeBatch()
    try first.stage([["id": 1], ["id": 2]], as: "Issue")
    _ = try ledger.applySynchronously(first)
    var sync = ledger.makeBatch()
    try sync.stage([["id": 1]], as: "Issue", options: StagingOptions(prune: true))
    try sync.stage([["id": 9]], as: "Issue")
    _ = try ledger.applySynchronously(sync)
    #expect(try Self.ids(ledger) == [1, 9])
  }

  @Test func anEmptyPayloadWithPruneDeletesEverythingAndTheSummarySaysSo() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.issues)
    var first = ledger.makeBatch()
    try first.stage([["id": 1], ["id": 2], ["id": 3]], as: "Issue")
    _ = try ledger.applySynchronously(first)
    var empty = ledger.makeBatch()
    try empty.stage([], as: "Issue", options: StagingOptions(prune: true))
    let summary = try ledger.applySynchronously(empty)
    #expect(summary.deleted == 3)
    #expect(summary.emptiedByPrune == ["Issue"])
    #expect(try Self.ids(ledger).isEmpty)
  }
}
