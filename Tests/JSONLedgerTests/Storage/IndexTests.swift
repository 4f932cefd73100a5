import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Attribute indexes")
struct IndexTests {
  static func model() throws -> Model {
    try Model {
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("label", .string, indexed: true)
        Attribute("year", .int32, indexed: true)
      }
    }
  }

  @Test func indexedQueriesFollowUpdatesAndDeletes() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var one = ledger.makeBatch()
    try one.stage(
      [
        ["name": "b", "label": "Virgin", "year": 1981], ["name": "a", "label": "Virgin"],
        ["name": "c", "label": "EMI"],
      ], as: "Album")
    _ = try ledger.applySynchronously(one)
    var two = ledger.makeBatch()
    try two.stage([["name": "c", "label": "Virgin"], ["name": "b", "label": nil]], as: "Album")
    try two.delete("Album", key: "a")
    _ = try ledger.applySynchronously(two)
    try ledger.read { view throws in
      #expect(try view.objects("Album", where: "label", equals: "Virgin").map(\.key.identity) == [[.string("c")]])
      #expect(try view.objects("Album", where: "year", equals: "1981").count == 1)
      #expect(try view.objects("Album", where: "label", equals: nil).map(\.key.identity) == [[.string("b")]])
    }
    let then = try ledger.read(asOf: 1) { view in
      try view.objects("Album", where: "label", equals: "Virgin").map(\.key.identity)
    }
    // Stored order: "b" was stored before "a".
    #expect(then == [[.string("b")], [.string("a")]])
    #expect(try ledger.verify().batches == 2)
  }

  @Test func aTamperedIndexIsFoundByVerify() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var batch = ledger.makeBatch()
    try batch.stage([["name": "a", "label": "Virgin"]], as: "Album")
    _ = try ledger.applySynchronously(batch)
    try ledger.environment.write { txn in
      try txn.put(
        [], forKey: StoreKeys.index(root: 1, attribute: "label", .string("EMI")) + StoreKeys.object(1),
        in: ledger.layout.indexes)
    }
    #expect(throws: LedgerError.self) { try ledger.verify() }
  }
}
