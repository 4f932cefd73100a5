import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// A revert that keeps later work keeps every list a later batch changed, the lists of
/// objects the reverted batch never touched among them (reliability round four, H3).
@Suite("Reverts that keep later work keep the lists later batches filled")
struct KeepLaterListTests {
  static let model: Model = {
    do {
      return try Model {
        Entity("Band", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("albums", to: "Album", many: true, inverse: "band")
          Relationship("favourites", to: "Album", many: true)
        }
        Entity("Album", identity: ["name"]) {
          Attribute("name", .string)
          Attribute("label", .string)
          Relationship("band", to: "Band", inverse: "albums")
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  static func apply(_ ledger: Ledger, _ payload: JSONValue, as entity: String) throws {
    var batch = ledger.makeBatch()
    try batch.stage(payload, as: entity)
    _ = try ledger.applySynchronously(batch)
  }

  /// - Reliability: `revert --keep-later` of a batch that created objects a later batch put in a list it did
  ///   not touch: the objects and the list kept (H3)
  /// - Size: 1 case
  @Test(.tags(.reliability)) func anObjectTheBatchCreatedStaysWhileAListItDidNotTouchHoldsIt() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    try Self.apply(ledger, [["name": "Japan"], ["name": "Can"]], as: "Band")
    // Batch 2 creates an album; batch 3 puts it in lists of bands batch 2 never touched.
    try Self.apply(ledger, [["name": "Tin Drum", "label": "Virgin"]], as: "Album")
    try Self.apply(
      ledger, [["name": "Japan", "albums": ["Tin Drum"]], ["name": "Can", "favourites": ["Tin Drum"]]], as: "Band")
    let before = try ledger.read { view in
      (try view.object("Band", key: "Japan")?.relationships, try view.object("Band", key: "Can")?.relationships)
    }
    let result = try ledger.revert(2, keepingLaterChanges: true)
    #expect(result.kept.contains { $0.object.entity == "Album" && $0.field == "(object)" })
    let after = try ledger.read { view in
      (try view.object("Band", key: "Japan")?.relationships, try view.object("Band", key: "Can")?.relationships)
    }
    #expect(after.0 == before.0)
    #expect(after.1 == before.1)
    #expect(try ledger.read { view in try view.object("Album", key: "Tin Drum")?.string("label") } == "Virgin")
    _ = try ledger.verify()
  }
}
