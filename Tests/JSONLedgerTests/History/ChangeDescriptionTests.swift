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
}

extension Sequence {
  func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
    var result: [T] = []
    for element in self { result.append(try await transform(element)) }
    return result
  }
}
