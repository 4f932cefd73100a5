import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Staging on its own: what a `ChangeBatch` holds before it is applied, and what it refuses.
/// A batch that is refused leaves the store as it was; each test checks that.
@Suite("Staging a batch")
struct StagingTests {
  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    try Ledger.open(at: directory.storePath, model: try Fixtures.bandsAndAlbums())
  }

  @Test func aBadObjectIsLeftOutAndItsProblemKeptWithItsPlace() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    #expect(batch.isEmpty)
    try batch.stage(
      [["name": "Japan", "formed": "nineteen seventy-four"], ["name": "Can", "formed": 1968], ["formed": 1970]],
      as: "Band")
    #expect(batch.problems.count == 2)
    #expect(batch.problems.map(\.entity) == ["Band", "Band"])
    #expect(batch.problems.first?.path.hasSuffix("[0].formed") == true, "\(batch.problems)")
    #expect(batch.problems.first?.value == #""nineteen seventy-four""#)
    // The object without an identity is left out; the value of the wrong type is.
    #expect(batch.stagedObjectCount == 2)
    // Apply refuses the batch whole, naming every problem.
    #expect(throws: LedgerError.self) { try ledger.applySynchronously(batch) }
    #expect(try ledger.head == 0)
  }

  @Test func everyBatchOfALedgerStagesThroughTheOneMapperItMadeForTheFirst() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let album = try #require(ledger.model.resolved("Album"))
    let first = ledger.makeBatch()
    var second = ledger.makeBatch()
    // The key tables are made once: the same boxes, not equal copies.
    #expect(first.mapper.box(of: album) != nil)
    #expect(first.mapper.box(of: album) === second.mapper.box(of: album))
    #expect(first.mapper.modelDigest == second.mapper.modelDigest)
    // And the shared mapper maps as a new one would.
    try second.stage([["name": "Tin Drum", "band": "Japan"]], as: "Album")
    _ = try ledger.applySynchronously(second)
    let band = try ledger.read { try $0.object("Album", key: "Tin Drum")?.relationships["band"] }
    #expect(band == [ObjectKey(entity: "Band", identity: [.string("Japan")])])
    // Another instance of the store makes its own.
    let other = try Self.ledger(directory)
    #expect(other.makeBatch().mapper.box(of: album) !== first.mapper.box(of: album))
  }

  @Test func aDocumentsKeysNameCollectionsAndAnUnknownOneListsTheKnown() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stageDocument(
      try JSONParser.parse(#"{"bands": [{"name": "Japan"}], "Albums": [{"name": "Tin Drum"}, {"name": "Polaroids"}]}"#))
    #expect(batch.stagedObjectCount == 3)
    #expect(batch.problems.isEmpty)
    var other = ledger.makeBatch()
    let error = #expect(throws: LedgerError.self) {
      try other.stageDocument(try JSONParser.parse(#"{"records": [{"name": "Tin Drum"}]}"#))
    }
    #expect(error?.message.contains("records") == true, "\(String(describing: error))")
    #expect(error?.message.contains("bands") == true, "\(String(describing: error))")
    #expect(other.isEmpty)
    #expect(try ledger.head == 0)
  }

  @Test func aFileIsNamedWithTheSystemsReasonOrTheLineAndColumnOfItsSyntaxError() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    let missing = #expect(throws: LedgerError.self) { try batch.stage(fileAt: directory.path + "/none.json") }
    #expect(missing?.code == .unreadableFile)
    #expect(missing?.message.contains("No such file or directory") == true, "\(String(describing: missing))")
    let broken = try directory.write("broken.json", "{\"bands\": [\n  {\"name\": \"Japan\" \"formed\": 1974}\n]}")
    let syntax = #expect(throws: LedgerError.self) { try batch.stage(fileAt: broken) }
    #expect(syntax?.syntax?.line == 2, "\(String(describing: syntax))")
    #expect(batch.isEmpty)
    #expect(try ledger.head == 0)
  }

  @Test func textStagedWithASourceNamesItInASyntaxError() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    let text = Array("[\n  {\"name\": \"Japan\" \"formed\": 1974}\n]".utf8)
    let named = #expect(throws: LedgerError.self) {
      try batch.stage(json: text, as: "Band", source: "https://api.example.com/bands")
    }
    #expect(named?.code == .invalidJSON)
    #expect(named?.syntax?.line == 2, "\(String(describing: named))")
    #expect(named?.message.contains("https://api.example.com/bands") == true, "\(String(describing: named))")
    let document = Array("{\"bands\": [\n  {\"name\": \"Japan\",, }\n]}".utf8)
    let inDocument = #expect(throws: LedgerError.self) { try batch.stageDocument(json: document, source: "page 2") }
    #expect(inDocument?.message.contains("page 2") == true, "\(String(describing: inDocument))")
    // Without a source, the error says where in the text alone.
    let unnamed = #expect(throws: LedgerError.self) { try batch.stage(json: text, as: "Band") }
    #expect(unnamed?.syntax?.line == 2)
    #expect(unnamed?.message.contains("https://") == false)
    #expect(batch.isEmpty)
    #expect(try ledger.head == 0)
  }

  @Test func aDeletionIsStagedByAKeyTheStoreNeedNotHave() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.delete("Band", key: "Nobody")
    #expect(!batch.isEmpty)
    #expect(throws: LedgerError.self) { try batch.delete("Label", key: "Virgin") }
    // Applied, a deletion of nothing changes nothing.
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.deleted == 0)
  }

  @Test func anEntityTheModelLacksIsAWrongCallAndStagesNothing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    let error = #expect(throws: LedgerError.self) { try batch.stage([["name": "Virgin"]], as: "Label") }
    #expect(error?.entity == "Label" || error?.message.contains("Label") == true, "\(String(describing: error))")
    #expect(batch.isEmpty)
  }
}
