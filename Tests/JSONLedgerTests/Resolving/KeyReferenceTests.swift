import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// A relationship given as a key (`"band": "Can"`) names the object of that key: in the batch,
/// in the store, or a stub made for it. Staged from text and from values alike.
@Suite("Key references: found in the batch or the store, a stub, or a strict problem")
struct KeyReferenceTests {
  static func ledger(in directory: TemporaryDirectory) throws -> Ledger {
    try makeLedger(in: directory, model: Fixtures.bandsAndAlbums())
  }

  static let twoAlbumsOfCan = #"[{"name": "Tago Mago", "band": "Can"}, {"name": "Future Days", "band": "Can"}]"#

  /// Stages `albums` as text or as a value, as `fromText` says.
  static func stage(_ albums: String, in batch: inout ChangeBatch, fromText: Bool, strict: Bool = false) throws {
    let options = StagingOptions(strict: strict)
    if fromText {
      try batch.stage(json: Array(albums.utf8), as: "Album", options: options)
    } else {
      try batch.stage(JSONParser.parse(Array(albums.utf8)), as: "Album", options: options)
    }
  }

  static func band(of album: String, in ledger: Ledger) throws -> [ObjectKey]? {
    try ledger.read { view in try view.object("Album", key: album)?.relationships["band"] }
  }

  @Test(arguments: [true, false])
  func aKeyNamesTheObjectInTheBatchOrInTheStore(fromText: Bool) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var first = ledger.makeBatch()
    try first.stage([["name": "Can", "formed": 1968]], as: "Band")
    try Self.stage(#"[{"name": "Tago Mago", "band": "Can"}]"#, in: &first, fromText: fromText)
    #expect(try ledger.applySynchronously(first).created == 2)
    var second = ledger.makeBatch()
    try Self.stage(#"[{"name": "Ege Bamyasi", "band": "Can"}]"#, in: &second, fromText: fromText)
    #expect(try ledger.applySynchronously(second).created == 1)
    let band = try ledger.read { view in try view.object("Band", key: "Can") }
    #expect(band?.attributes["formed"] == .integer(1968))
    #expect(try Self.band(of: "Ege Bamyasi", in: ledger) == Self.band(of: "Tago Mago", in: ledger))
    #expect(try Self.band(of: "Ege Bamyasi", in: ledger)?.count == 1)
  }

  @Test(arguments: [true, false])
  func anUnknownKeyMakesAStubUnlessStrictWhoseProblemNamesThePlaceAndTheKey(fromText: Bool) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var strict = ledger.makeBatch()
    try Self.stage(Self.twoAlbumsOfCan, in: &strict, fromText: fromText, strict: true)
    #expect {
      try ledger.applySynchronously(strict)
    } throws: { error in
      guard let problems = (error as? LedgerError)?.mapping?.problems else { return false }
      return problems.map(\.path.description) == ["[0].band", "[1].band"]
        && problems.allSatisfy { $0.entity == "Band" && $0.reason.contains("no Band with key Can") }
    }
    #expect(try ledger.head == 0)
    var lenient = ledger.makeBatch()
    try Self.stage(Self.twoAlbumsOfCan, in: &lenient, fromText: fromText)
    // One stub for both references, holding only its key.
    #expect(try ledger.applySynchronously(lenient).created == 3)
    let stub = try ledger.read { view in try view.object("Band", key: "Can") }
    #expect(stub?.attributes == ["name": .string("Can")])
  }

  @Test(arguments: [true, false])
  func aDeletedObjectNamedByItsKeyComesBackUnderItsID(fromText: Bool) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var create = ledger.makeBatch()
    try create.stage([["name": "Can", "formed": 1968]], as: "Band")
    _ = try ledger.applySynchronously(create)
    let id = try #require(try ledger.read { view in try view.object("Band", key: "Can")?.objectID })
    var delete = ledger.makeBatch()
    try delete.delete("Band", key: "Can")
    _ = try ledger.applySynchronously(delete)
    #expect(try ledger.read { view in try view.object("Band", key: "Can") } == nil)
    var again = ledger.makeBatch()
    try Self.stage(#"[{"name": "Tago Mago", "band": "Can"}]"#, in: &again, fromText: fromText)
    _ = try ledger.applySynchronously(again)
    let stub = try ledger.read { view in try view.object("Band", key: "Can") }
    #expect(stub?.objectID == id)
    #expect(stub?.attributes == ["name": .string("Can")])
  }

  /// A payload's fingerprint takes a key as the identity of one value it is: stores keep the
  /// fingerprints of the payloads they took, so that a payload given again is skipped.
  @Test func aKeyIsFingerprintedAsAnIdentityOfOneValue() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let album = try #require(ledger.model.resolved("Album"))
    let band = try #require(ledger.model.resolved("Band"))
    let values: [AttributeValue] = [.string("Can"), .string(""), .integer(-3), .bool(true)]
    for value in values {
      var byValue = PayloadFingerprint(entity: album)
      byValue.add(key: band, CollectionOfOne(value))
      var byIdentity = PayloadFingerprint(entity: album)
      byIdentity.add(key: band, [value])
      #expect(byValue.value == byIdentity.value, "\(value)")
      #expect(byValue.value != nil)
    }
  }
}
