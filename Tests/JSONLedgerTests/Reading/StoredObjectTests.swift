import Foundation
import JSONLedgerTestSupport
import PropertyBased
import Testing

@testable import JSONLedger

/// Objects read in place (`View.withObject`, `View.forEachObjectInPlace`) against the
/// snapshots the same views build: the same values, keys and links, now and as of each batch.
@Suite("Objects read in place")
struct StoredObjectTests {
  static let model: Model = {
    do {
      return try Model {
        Entity("Band", identity: ["name"]) {
          Attribute("name", .string)
          Attribute("formed", .int32)
          Relationship("albums", to: "Album", many: true, inverse: "band")
          Relationship("members", to: "Musician", many: true, ordered: true, inverse: "bands")
        }
        Entity("Album", identity: ["name"]) {
          Attribute("name", .string)
          Attribute("label", .string)
          Attribute("sales", .int64)
          Attribute("rating", .double)
          Attribute("released", .date)
          Attribute("tags", .json)
          Relationship("band", to: "Band", inverse: "albums")
        }
        Entity("Live", parent: "Album") { Attribute("venue", .string) }
        Entity("Musician", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("bands", to: "Band", many: true, inverse: "members")
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  /// One batch read from a number: an album (sometimes live) with some of its values and a band,
  /// a band with members, or a deletion; smaller numbers make simpler batches.
  static func apply(_ step: Int, to ledger: Ledger) throws {
    var batch = ledger.makeBatch()
    let album = "a\((step / 4) % 5)"
    let band = "b\((step / 20) % 3)"
    switch step % 4 {
    case 0, 1:
      var object: JSONObject = ["name": .string(album), "band": .string(band)]
      if step % 3 == 0 { object["label"] = .string("l\(step % 7)") }
      if step % 5 == 0 { object["sales"] = .number(JSONNumber(step * 1000)) }
      if step % 7 == 0 { object["rating"] = .number(JSONNumber(Double(step) / 8)) }
      if step % 11 == 0 { object["released"] = "2001-02-03T04:05:06Z" }
      if step % 13 == 0 { object["tags"] = ["live", .number(JSONNumber(step))] }
      if step % 2 == 1 { object["venue"] = .string("v\(step % 3)") }
      try batch.stage([.object(object)], as: step % 2 == 1 ? "Live" : "Album")
    case 2:
      try batch.stage(
        [
          [
            "name": .string(band), "formed": .number(JSONNumber(1970 + step % 20)),
            "members": [.string("m\(step % 3)"), "m0"],
          ]
        ],
        as: "Band")
    default:
      try batch.delete("Album", key: .string(album))
    }
    _ = try ledger.applySynchronously(batch)
  }

  /// Every object of every entity, read in place and as a snapshot, in one view.
  static func checkAgreement(_ view: borrowing View) throws {
    for entity in ["Band", "Album", "Live", "Musician"] {
      let snapshots = try view.objects(entity)
      var seen: [ObjectSnapshot] = []
      try view.forEachObjectInPlace(entity) { object in
        let snapshot = try object.snapshot()
        seen.append(snapshot)
        #expect(try object.key == snapshot.key)
        #expect(object.entity == snapshot.entity)
        #expect(object.objectID == snapshot.objectID)
        let declared = try #require(view.model.resolved(object.entity))
        for attribute in declared.attributes {
          #expect(
            try object[attribute.name] == snapshot.attributes[attribute.name], "\(snapshot.key) \(attribute.name)")
        }
        for (name, keys) in snapshot.relationships { #expect(try object.relatedKeys(name) == keys) }
      }
      #expect(seen == snapshots, "\(entity)")
      for snapshot in snapshots {
        let key = JSONValue.array(snapshot.key.identity.map { $0.jsonValue(dateFormat: view.model.dateFormat) })
        let read = try view.withObject(entity, key: key) { object in try object.snapshot() }
        #expect(read == snapshot)
        // The usual read, by a bare text, which a live album is found by as an album too.
        if snapshot.key.identity.count == 1, case .string(let text) = snapshot.key.identity[0] {
          #expect(try view.withObject(entity, key: text) { object in try object.snapshot() } == snapshot)
        }
      }
    }
  }

  @Test func inPlaceReadsAgreeWithSnapshotsNowAndAsOfEveryBatch() async throws {
    await propertyCheck(count: 60, input: Gen.int(in: 0...299).array(of: 1...16)) { steps in
      do {
        let directory = try TemporaryDirectory()
        let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
        for step in steps { try Self.apply(step, to: ledger) }
        try ledger.read { view in try Self.checkAgreement(view) }
        for batch in 1...max(1, try ledger.head) where try ledger.head > 0 {
          try ledger.read(asOf: batch) { view in try Self.checkAgreement(view) }
        }
      } catch {
        Issue.record("\(steps): \(error)")
      }
    }
  }

  @Test func aMissingKeyAnotherEntityAndAnUnknownNameReadAsNothing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    try Self.apply(0, to: ledger)
    let (missing, notLive, unknown, label) = try ledger.read { view in
      (
        try view.withObject("Album", key: "nope") { _ in true },
        // a0 is an album, not a live one: the sub-entity does not find it.
        try view.withObject("Live", key: "a0") { _ in true },
        try view.withObject("Album", key: "a0") { album in try album["no such attribute"] },
        try view.withObject("Album", key: "a0") { album in try album["label"] }
      )
    }
    #expect(missing == nil)
    #expect(notLive == nil)
    #expect(unknown == .some(nil))
    #expect(label == .string("l0"))
    #expect {
      try ledger.read { view in try view.withObject("Album", key: "a0") { album in try album.relatedKeys("producer") } }
    } throws: { error in (error as? LedgerError)?.code == .invalidQuery }
    #expect {
      try ledger.read { view in try view.withObject("Nope", key: "a0") { _ in true } }
    } throws: { error in (error as? LedgerError)?.code == .unknownEntity }
  }

  /// A view writes a short key on the stack and encodes any other into one buffer it reuses:
  /// keys of every length in turn (a long one the store keeps hashed, then a short one, then a
  /// missing one; the longest kept whole and the shortest hashed; one holding a NUL, which is
  /// escaped) each find their own object, whatever the key before left in the buffer.
  @Test func oneViewReadsKeysOfEveryLengthInTurnEachToItsOwnObject() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    // An identity of one text is its root (4 bytes), a tag, the text and an end mark (2),
    // kept whole up to 400 bytes.
    let names = [
      "a", String(repeating: "long ", count: 120), "ab", String(repeating: "x", count: 401), "b",
      String(repeating: "y", count: 393), String(repeating: "y", count: 394), "a\u{0}b", "日本",
    ]
    var batch = ledger.makeBatch()
    try batch.stage(.array(names.map { ["name": .string($0), "label": .string("label of \($0.count)")] }), as: "Album")
    _ = try ledger.applySynchronously(batch)
    let order = names + names.reversed() + ["missing", "a", String(repeating: "long ", count: 119)] + names
    let labels = try ledger.read { view in
      try order.map { name in try view.withObject("Album", key: name) { album in try album["label"] } }
    }
    let expected: [AttributeValue??] = order.map { name in
      names.contains(name) ? .some(.string("label of \(name.count)")) : nil
    }
    #expect(labels == expected)
  }

  @Test func aSingleKeyIsCoercedToItsAttributesTypeInEveryShape() throws {
    let model = try Model {
      Entity("Issue", identity: ["number"]) {
        Attribute("number", .int64)
        // More attributes than an entity's names are compared one by one for: found by hash.
        for index in 0..<20 { Attribute("field\(index)", .string) }
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage([["number": 42, "field0": "first", "field19": "last"]], as: "Issue")
    _ = try ledger.applySynchronously(batch)
    let found = try ledger.read { view in
      try [42, "42", [42], ["number": 42]].map { (key: JSONValue) in
        try view.withObject("Issue", key: key) { issue in [try issue["field0"], try issue["field19"]] }
      }
    }
    #expect(found == Array(repeating: [.string("first"), .string("last")], count: 4))
    #expect(try ledger.read { view in try view.object("Issue", key: 7) } == nil)
    #expect(try ledger.read { view in try view.withObject("Issue", key: 7) { _ in true } } == nil)
    for key: JSONValue in ["forty-two", true, [1, 2]] {
      let refused = #expect(throws: LedgerError.self) {
        try ledger.read { view in try view.withObject("Issue", key: key) { _ in true } }
      }
      #expect(refused?.code == .invalidKey)
      #expect(refused?.entity == "Issue")
    }
  }

  @Test func aStateThatDoesNotDecodeIsAnErrorNotATrap() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    try Self.apply(0, to: ledger)
    let id = try #require(try ledger.read { view in try view.withObject("Album", key: "a0") { $0.objectID } })
    let key = StoreKeys.object(id)
    let stored = try #require(
      try ledger.environment.read { txn in
        try txn.value(forKey: key, in: ledger.layout.state)
      })
    // Each cut of the real state, and a few bytes of noise after the entity.
    var damaged: [[UInt8]] = (1..<stored.count).map { Array(stored.prefix($0)) }
    damaged.append([stored[0], 1, 200, 255, 255, 255, 255, 255, 255, 255, 255, 255])
    for bytes in damaged {
      try ledger.environment.write { txn in
        try txn.put(bytes, forKey: key, in: ledger.layout.state)
      }
      #expect(throws: LedgerError.self) {
        try ledger.read { view in
          try view.withObject("Album", key: "a0") { album in
            _ = try album.key
            _ = try album["tags"]
            _ = try album.relatedKeys("band")
            _ = try album.snapshot()
          }
        }
      }
      #expect(throws: LedgerError.self) {
        try ledger.read { view in try view.forEachObjectInPlace("Album") { album in _ = try album.snapshot() } }
      }
      #expect(throws: LedgerError.self) {
        try ledger.read { view in try view.writeJSON("Album") { _ in } }
      }
    }
  }
}
