import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Models of public apps that use none of the four libraries (copied into the fixtures), with
/// payloads of our own: imported twice, exported, and imported again from the export.
@Suite("Real apps' Core Data models")
struct RealAppModelTests {
  static func model(_ name: String) throws -> Model {
    try Model(contentsOf: try Fixtures.url("RealModels/\(name).xcdatamodel").path)
  }

  static func importDocument(_ ledger: Ledger, _ document: JSONValue) throws -> BatchSummary {
    var batch = ledger.makeBatch()
    try batch.stageDocument(document)
    return try ledger.applySynchronously(batch)
  }

  @Test func bitwardenKeepsOneCipherPerUserAndIDFromItsCompositeUniquenessConstraint() throws {
    let model = try Self.model("Bitwarden")
    #expect(model.resolved("CipherData")?.identity == ["userId", "id"])
    #expect(model.insertOnlyEntities == ["PasswordHistoryData"])
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let document = try Fixtures.json("RealModels/bitwarden-sync.json")
    let first = try Self.importDocument(ledger, document)
    #expect(first.created == 6)
    let second = try Self.importDocument(ledger, document)
    // Keyed objects are unchanged; the insert-only password history is inserted again.
    #expect(second.created == 1)
    #expect(second.unchanged == 5)
    try ledger.read { view in
      #expect(try view.count("CipherData") == 3)
      let shared = try #require(try view.object("CipherData", key: ["userId": "user-b", "id": "0b1f"]))
      #expect(shared["modelData"] == .binary(Data(#"{"name":"Shared"}"#.utf8)))
      let own = try #require(try view.object("CipherData", key: ["userId": "user-a", "id": "0b1f"]))
      #expect(own["modelData"] == .binary(Data(#"{"name":"Bank"}"#.utf8)))
    }
    let exported = try ledger.read { view in try view.exportDocument() }
    #expect(exported.objectValue?["cipher_datas"]?.arrayValue?.count == 3)
    let again = try TemporaryDirectory()
    let copy = try Ledger.open(at: again.storePath, model: model)
    _ = try Self.importDocument(copy, exported)
    #expect(try copy.read { view in try view.exportDocument() } == exported)
  }

  @Test func simplenoteNeverInstantiatesItsAbstractParentAndRoundTripsItsExport() throws {
    let model = try Self.model("Simplenote")
    #expect(model.entity(named: "SPManagedObject")?.isAbstract == true)
    // Not annotated and no constraint: simperiumKey is not an identity, so notes are inserted.
    #expect(model.insertOnlyEntities == ["Note", "Preferences", "Settings", "Tag"])
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let document = try Fixtures.json("RealModels/simplenote-export.json")
    _ = try Self.importDocument(ledger, document)
    _ = try Self.importDocument(ledger, document)
    try ledger.read { view in
      #expect(try view.count("Note") == 4)
      #expect(try view.count("SPManagedObject") == 6)
      #expect(try view.objects("SPManagedObject").allSatisfy { $0.entity != "SPManagedObject" })
      let pinned = try view.objects("Note").filter { $0["pinned"] == .bool(true) }
      #expect(pinned.count == 2)
      #expect(pinned.first?["content"] == .string("Groceries\nmilk, eggs"))
    }
    let exported = try ledger.read { view in try view.exportDocument() }
    let keys = try #require(exported.objectValue).map(\.key)
    #expect(Set(keys) == ["notes", "preferences", "settings", "tags"])
    let again = try TemporaryDirectory()
    let copy = try Ledger.open(at: again.storePath, model: model)
    _ = try Self.importDocument(copy, exported)
    #expect(try copy.read { view in try view.exportDocument() } == exported)
    // A payload for the abstract parent itself is refused.
    var batch = ledger.makeBatch()
    try batch.stage([["simperium_key": "x"]], as: "SPManagedObject")
    #expect(throws: LedgerError.self) { try ledger.applySynchronously(batch) }
  }

  @Test func mastodonTimelineWithNestedAuthorsReblogsAndCascadingDeletes() throws {
    let model = try Self.model("Mastodon")
    #expect(model.resolved("Status")?.identity == ["id"])
    #expect(model.resolved("Status")?.attributeIndex["isSensitiveToggled"] == nil)  // transient
    #expect(model.resolved("DomainBlock")?.identity == ["userID", "domain", "blockedDomain"])
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let timeline = try Fixtures.json("RealModels/mastodon-timeline.json")
    for round in 0..<2 {
      var batch = ledger.makeBatch()
      try batch.stage(timeline, as: "Status")
      let summary = try ledger.applySynchronously(batch)
      #expect(summary.created == (round == 0 ? 4 : 0))
    }
    try ledger.read { view in
      let bob = try #require(try view.object("MastodonUser", key: "2"))
      #expect(bob.relationships["following"]?.map(\.description) == [#"MastodonUser "1""#])
      let alice = try #require(try view.object("MastodonUser", key: "1"))
      #expect(alice.relationships["followingBy"]?.map(\.description) == [#"MastodonUser "2""#])
      let reblog = try #require(try view.object("Status", key: "110002"))
      #expect(reblog.relationships["reblog"]?.map(\.description) == [#"Status "110001""#])
    }
    let exported = try ledger.read { view in try view.exportJSON("Status") }
    let first = try #require(exported.arrayValue?.first?.objectValue)
    #expect(first["created_at"] == .string("2024-05-01T12:00:00.123Z"))
    #expect(first["is_sensitive_toggled"] == nil)
    // Deleting the original status cascades to its reblogs (`reblogFrom`, Cascade).
    var delete = ledger.makeBatch()
    try delete.delete("Status", key: "110001")
    let summary = try ledger.applySynchronously(delete)
    #expect(summary.deleted == 2)
    #expect(try ledger.read { view in try view.count("Status") } == 0)
    #expect(try ledger.read { view in try view.count("MastodonUser") } == 2)
    // The timeline imported again changed nothing: no record.
    #expect(try ledger.verify().batches == 2)
  }
}
