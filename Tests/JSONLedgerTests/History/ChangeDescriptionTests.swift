import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("History in the user's terms")
struct ChangeDescriptionTests {
  @Test func aChangeIsDescribedByKeysAndRelationshipNames() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsModel(),
      documents: [try Fixtures.json("bands-initial.json"), try Fixtures.json("bands-update.json")])
    let described = try await ledger.record(2).changes.asyncMap { try await ledger.describe($0) }
    let band = try #require(described.first { $0.key.entity == "Band" && !$0.links.isEmpty })
    #expect(band.links.allSatisfy { $0.relationship.hasPrefix("Band.") })
    let added = band.links.flatMap(\.added)
    #expect(!added.isEmpty && added.allSatisfy { $0.entity != "?" })
    let first = try await ledger.record(1).changes[0]
    #expect(try await ledger.describe(first).key == ObjectKey(entity: first.entity, identity: first.identity))
  }

  @Test func blameAsOfABatchNamesTheBatchesBeforeIt() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: StoredObjectTests.model)
    var first = ledger.makeBatch()
    try first.stage([["name": "a0", "label": "l1"]], as: "Album")
    _ = try ledger.applySynchronously(first)
    var second = ledger.makeBatch()
    try second.stage([["name": "a0", "label": "l2", "band": "b0"]], as: "Album")
    _ = try ledger.applySynchronously(second)
    let now = try await ledger.blame("Album", key: "a0")
    #expect(now.map { "\($0.field) \($0.batchID)" } == ["band 2", "label 2", "name 1"])
    // As of batch 1 the label was set by batch 1, and no batch had set the band yet.
    let then = try await ledger.blame("Album", key: "a0", asOf: 1)
    #expect(then.map { "\($0.field) \($0.batchID)" } == ["label 1", "name 1"])
  }
}

extension Sequence {
  func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
    var result: [T] = []
    for element in self { result.append(try await transform(element)) }
    return result
  }
}
