import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// `WorkingSet` on its own, over a real store: what it loads on first touch, and the changes,
/// counts and payload marks `finish` makes of the working states.
@Suite("WorkingSet: the objects a batch touches")
struct WorkingSetTests {
  static let model: Model = {
    do { return try Fixtures.bandsAndAlbums() } catch { preconditionFailure("the test model is valid: \(error)") }
  }()

  /// A store holding the bands Japan (formed 1974) and Can (formed 1968), and a working set
  /// over it, with the stored ids by name.
  static func withWorkingSet(_ body: (inout WorkingSet, [String: UInt64], ProjectionStore) throws -> Void) throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: Self.model,
      documents: [
        try JSONParser.parse(#"{"bands": [{"name": "Japan", "formed": 1974}, {"name": "Can", "formed": 1968}]}"#)
      ])
    try ledger.environment.read { txn in
      let store = ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model)
      var ids: [String: UInt64] = [:]
      for id in try store.objectIDs(root: "Band") {
        if case .string(let name)? = try store.state(of: id)?.identity.first { ids[name] = id }
      }
      var objects = WorkingSet(model: ledger.model, source: store)
      try body(&objects, ids, store)
    }
  }

  @Test func anObjectIsLoadedFromTheStoreOnItsFirstTouchAndKeepsItsSlot() throws {
    try Self.withWorkingSet { objects, ids, store in
      let japan = try #require(ids["Japan"])
      #expect(objects.existingSlot(japan) == nil)
      let slot = try objects.slot(japan)
      #expect(objects.existingSlot(japan) == slot)
      #expect(try objects.slot(japan) == slot)
      #expect(try objects.state(of: japan) == store.state(of: japan))
      #expect(try objects.exists(japan))
      #expect(try objects.concreteEntity(of: japan) == "Band")
      // A second object gets the next slot: slots follow first touch.
      #expect(try objects.slot(try #require(ids["Can"])) == slot + 1)
    }
  }

  /// New objects are found by their sequence number, not hashed: each keeps its slot among
  /// stored objects touched between them, an id of another root with a new object's sequence
  /// number is not taken for it, and a new id out of sequence is still found.
  @Test func newObjectsKeepTheirSlotsBesideStoredOnesWithoutTheTable() throws {
    try Self.withWorkingSet { objects, ids, store in
      let albumRoot = try #require(Self.model.resolved("Album")).rootID
      let bandRoot = try #require(Self.model.resolved("Band")).rootID
      let first = try store.nextObjectSequence()
      let albums = (0..<3).map { ObjectIDs.make(root: albumRoot, sequence: first + UInt64($0)) }
      let japan = try #require(ids["Japan"])
      let can = try #require(ids["Can"])
      #expect(objects.addNewSlot(albums[0]) == 0)
      #expect(try objects.slot(japan) == 1)
      #expect(objects.addNewSlot(albums[1]) == 2)
      #expect(objects.addNewSlot(albums[2]) == 3)
      #expect(try objects.slot(can) == 4)
      for (slot, album) in zip([0, 2, 3], albums) {
        #expect(objects.existingSlot(album) == slot)
        #expect(try objects.slot(album) == slot)
      }
      #expect(objects.existingSlot(japan) == 1)
      #expect(objects.existingSlot(can) == 4)
      // A band id with the first album's sequence number: not that album, and not stored.
      let stranger = ObjectIDs.make(root: bandRoot, sequence: first)
      #expect(objects.existingSlot(stranger) == nil)
      #expect(try !objects.exists(stranger))
      #expect(try objects.slot(stranger) == 5)
      // A new id past a gap goes to the table and is found there.
      let late = ObjectIDs.make(root: albumRoot, sequence: first + 10)
      #expect(objects.addNewSlot(late) == 6)
      #expect(objects.existingSlot(late) == 6)
      #expect(objects.existingSlot(albums[2]) == 3)
      for album in albums + [late] {
        try objects.set(album, to: ObjectState(entity: "Album", identity: [.string("\(album)")]))
      }
      let (changes, _) = objects.finish(ignoredKeys: [])
      #expect(changes.map(\.objectID) == [albums[0], albums[1], albums[2], late])
    }
  }

  /// The store says whether it holds any identity of a root entity, which is what lets the
  /// resolver stop asking it for one of a root it holds none of: bands yes, albums no; after
  /// every band is deleted their keys stay registered, so bands still yes.
  @Test func theStoreSaysWhichRootEntitiesItHoldsIdentitiesOf() throws {
    try Self.withWorkingSet { _, _, store in
      let band = try #require(Self.model.resolved("Band")).rootID
      let album = try #require(Self.model.resolved("Album")).rootID
      #expect(try store.holdsIdentities(root: band))
      #expect(try !store.holdsIdentities(root: album))
      #expect(try !store.holdsIdentities(root: 999))
    }
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: Self.model,
      documents: [try JSONParser.parse(#"{"bands": [{"name": "Can"}]}"#), try JSONParser.parse(#"{"bands": []}"#)])
    let band = try #require(Self.model.resolved("Band")).rootID
    func bands() throws -> (holds: Bool, ids: [UInt64]) {
      try ledger.environment.read { txn in
        let store = ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model)
        return (try store.holdsIdentities(root: band), try store.objectIDs(root: "Band"))
      }
    }
    let original = try bands().ids
    var batch = ledger.makeBatch()
    try batch.delete("Band", key: .string("Can"))
    _ = try ledger.applySynchronously(batch)
    #expect(try bands().holds && bands().ids.isEmpty)
    // A band of that name staged again is the same object brought back, under its old id.
    var again = ledger.makeBatch()
    try again.stage([["name": "Can"]], as: "Band")
    _ = try ledger.applySynchronously(again)
    #expect(original.count == 1)
    #expect(try bands().ids == original)
  }

  @Test func touchedObjectsThatEndAsTheyBeganMakeNoChange() throws {
    try Self.withWorkingSet { objects, ids, _ in
      let japan = try #require(ids["Japan"])
      let can = try #require(ids["Can"])
      try objects.mention(japan)
      _ = try objects.slot(can)
      // Changed and changed back: still no change.
      try objects.update(can) { $0.attributes["formed"] = .integer(1969) }
      try objects.update(can) { $0.attributes["formed"] = .integer(1968) }
      let (changes, statistics) = objects.finish(ignoredKeys: ["note"])
      #expect(changes.isEmpty)
      // Only the object the payload named counts as unchanged.
      #expect(statistics.unchanged == 1)
      #expect(statistics.ignoredKeys == ["note"])
    }
  }

  @Test func finishTellsCreatedUpdatedAndDeletedObjectsApartInTouchOrder() throws {
    try Self.withWorkingSet { objects, ids, store in
      let japan = try #require(ids["Japan"])
      let can = try #require(ids["Can"])
      let root = try #require(Self.model.resolved("Album")).rootID
      let album = ObjectIDs.make(root: root, sequence: try store.nextObjectSequence())
      try objects.update(japan) { $0.attributes["formed"] = .integer(1973) }
      _ = objects.addNewSlot(album)
      try objects.set(album, to: ObjectState(entity: "Album", identity: [.string("Tin Drum")]))
      try objects.set(can, to: nil)
      #expect(try !objects.exists(can))
      let (changes, statistics) = objects.finish(ignoredKeys: [])
      #expect(changes.map(\.objectID) == [japan, album, can])
      #expect(changes.map(\.kind) == [.updated, .created, .deleted])
      #expect(changes[0].attributes.map(\.name) == ["formed"])
      #expect(changes[0].attributes.first?.old == .integer(1974) && changes[0].attributes.first?.new == .integer(1973))
      #expect((statistics.created, statistics.updated, statistics.deleted) == (1, 1, 1))
      // The after-states: the projector is handed the updated one, and works out the rest.
      let afterStates = objects.takeAfterStates()
      let after = try #require(afterStates)
      #expect(after.count == 3)
      #expect(after[0]?.attributes["formed"] == .integer(1973))
      #expect(after[1] == nil && after[2] == nil)
    }
  }

  /// A batch that only creates hands the projector no states (it works each out from its
  /// change) and holds no states before; one whose first update follows creations has a nil
  /// for each creation before it. A creation holds its state's attributes, and lists them as
  /// a creation's changes.
  @Test func creationsHoldTheirStatesAttributesAndNeedNoStatesAfter() throws {
    try Self.withWorkingSet { objects, ids, store in
      let root = try #require(Self.model.resolved("Album")).rootID
      let first = try store.nextObjectSequence()
      let albums = (0..<2).map { ObjectIDs.make(root: root, sequence: first + UInt64($0)) }
      for (index, album) in albums.enumerated() {
        _ = objects.addNewSlot(album)
        var state = ObjectState(entity: "Album", identity: [.string("Album \(index)")])
        state.attributes["label"] = .string("Hansa")
        state.attributes["name"] = .string("Album \(index)")
        try objects.set(album, to: state)
      }
      let (created, _) = objects.finish(ignoredKeys: [])
      let afterStates = objects.takeAfterStates()
      #expect(afterStates == nil)
      #expect(created.map(\.kind) == [.created, .created])
      #expect(
        created[0].attributes == [
          AttributeChange(name: "label", old: nil, new: .string("Hansa")),
          AttributeChange(name: "name", old: nil, new: .string("Album 0")),
        ])
      #expect(created[0].inverted.attributes.map(\.old) == [.string("Hansa"), .string("Album 0")])
      #expect(created[0].createdState?.attributes["label"] == .string("Hansa"))
      // Equal however each holds its attributes.
      var listed = created[0]
      listed.attributes = created[0].attributes
      #expect(listed == created[0])
      listed.attributes[0].new = .string("EMI")
      #expect(listed != created[0])
    }
    try Self.withWorkingSet { objects, ids, store in
      let japan = try #require(ids["Japan"])
      let root = try #require(Self.model.resolved("Album")).rootID
      let album = ObjectIDs.make(root: root, sequence: try store.nextObjectSequence())
      _ = objects.addNewSlot(album)
      try objects.set(album, to: ObjectState(entity: "Album", identity: [.string("Tin Drum")]))
      try objects.update(japan) { $0.attributes["formed"] = .integer(1973) }
      // The state before of an object touched after a new one is still its own.
      #expect(objects.before(0) == nil && objects.before(1)?.attributes["formed"] == .integer(1974))
      let (changes, _) = objects.finish(ignoredKeys: [])
      #expect(changes.map(\.kind) == [.created, .updated])
      #expect(changes[1].attributes.map(\.old) == [.integer(1974)])
      let afterStates = objects.takeAfterStates()
      let after = try #require(afterStates)
      #expect(after.count == 2)
      #expect(after[0] == nil && after[1]?.attributes["formed"] == .integer(1973))
    }
  }

  @Test func anUpdateOfAnAbsentObjectChangesNothing() throws {
    try Self.withWorkingSet { objects, _, store in
      let root = try #require(Self.model.resolved("Band")).rootID
      let missing = ObjectIDs.make(root: root, sequence: try store.nextObjectSequence() + 5)
      try objects.update(missing) { $0.attributes["formed"] = .integer(2000) }
      #expect(try objects.state(of: missing) == nil)
      #expect(objects.finish(ignoredKeys: []).changes.isEmpty)
    }
  }

  @Test func aPayloadMarkIsKeptOnlyWhileNothingElseChangedTheObject() throws {
    try Self.withWorkingSet { objects, ids, _ in
      let japan = try #require(ids["Japan"])
      let can = try #require(ids["Can"])
      let albums = try #require(Self.model.resolved("Band")?.relationshipIndex["albums"]).id
      // Japan: changed by its payload, then a link added in a list its payload does not name.
      try objects.update(japan) { $0.attributes["formed"] = .integer(1973) }
      objects.setPayload(japan, fingerprint: 42, mask: 0)
      try objects.update(japan, changingLinksOf: albums) { $0.links[albums] = [7] }
      // Can: changed by its payload, then by something else.
      try objects.update(can) { $0.attributes["formed"] = .integer(1969) }
      objects.setPayload(can, fingerprint: 43, mask: PayloadFingerprint.maskBit(albums))
      try objects.update(can, changingLinksOf: albums) { $0.links[albums] = [8] }
      // What the resolver asks of a payload met again in the batch.
      #expect(objects.isMade(byPayload: 42, japan))
      #expect(!objects.isMade(byPayload: 43, japan))
      #expect(!objects.isMade(byPayload: 43, can))
      let (changes, _) = objects.finish(ignoredKeys: [])
      let byID = Dictionary(uniqueKeysWithValues: changes.map { ($0.objectID, $0) })
      #expect(byID[japan]?.payloadFingerprint == 42)
      #expect(byID[can]?.payloadFingerprint == 0)
    }
  }

  /// A created object that a part of the batch went by without touching is held packed:
  /// checked for, it stays so; read or changed, it is unpacked as it was; `finish` makes a
  /// packed change of one still packed, equal to the change of its state. A payload's mark
  /// holds through packing.
  @Test func createdObjectsAPartWentByArePackedUntilTouched() throws {
    try Self.withWorkingSet { objects, ids, store in
      let japan = try #require(ids["Japan"])
      let root = try #require(Self.model.resolved("Album")).rootID
      let band = try #require(Self.model.resolved("Album")?.relationshipIndex["band"]).id
      let first = try store.nextObjectSequence()
      let albums = (0..<4).map { ObjectIDs.make(root: root, sequence: first + UInt64($0)) }
      var states: [ObjectState] = []
      for (index, album) in albums.enumerated() {
        _ = objects.addNewSlot(album)
        var state = ObjectState(entity: "Album", identity: [.string("Album \(index)")])
        state.attributes["name"] = .string("Album \(index)")
        state.links[band] = [japan]
        try objects.set(album, to: state)
        states.append(state)
      }
      objects.setPayload(albums[0], fingerprint: 42, mask: 0)
      // The first part touched every album: none is packed at its end (nor would be if the
      // batch held fewer than `objectsBeforePacking` objects).
      objects.objectsBeforePacking = 4
      objects.packColdStates()
      try objects.update(albums[3]) { $0.attributes["label"] = .string("Hansa") }
      states[3].attributes["label"] = .string("Hansa")
      // The second part touched album 3 alone: 0, 1 and 2 are packed at its end.
      objects.packColdStates()
      #expect(try objects.exists(albums[0]) && objects.concreteEntity(of: albums[1]) == "Album")
      #expect(objects.peek(try objects.slot(albums[2])) { $0 } == states[2])
      // Album 1 is read, and so unpacked; album 2 deleted.
      #expect(try objects.state(of: albums[1]) == states[1])
      try objects.set(albums[2], to: nil)
      objects.packColdStates()
      let (changes, statistics) = objects.finish(ignoredKeys: [])
      #expect(objects.takeAfterStates() == nil)
      #expect(statistics.created == 3)
      #expect(changes.map(\.objectID) == [albums[0], albums[1], albums[3]])
      for (change, state) in zip(changes, [states[0], states[1], states[3]]) {
        var expected = try #require(
          ObjectChange(objectID: change.objectID, before: nil, after: state, model: Self.model))
        expected.payloadFingerprint = change.objectID == albums[0] ? 42 : 0
        #expect(change == expected)
      }
      // Album 0 stayed packed; album 1, read in the last part, is whole; album 3, last
      // touched in the part before, is packed at the last part's end.
      let packed = changes.map { if case .packed = $0.changedAttributes { true } else { false } }
      #expect(packed == [true, false, true])
    }
  }

  /// A created state unpacked again (its object touched by a later part) is packed again only
  /// once twice as many parts as before went by without touching it: an object the parts keep
  /// coming back to is not decoded and encoded again for each of them. Touched again while it
  /// waits, it waits from that touch (it is looked at when its wait ends, not in every part).
  @Test(arguments: [false, true], [(untouchedParts: 1, packed: false), (untouchedParts: 2, packed: true)])
  func aStateUnpackedAgainWaitsTwiceAsLongBeforeItIsPackedAgain(
    touchedWhileWaiting: Bool, parts: (untouchedParts: Int, packed: Bool)
  ) throws {
    try Self.withFourAlbumsPackedOnce { objects, albums in
      // Album 0 is changed, and so unpacked; the part after leaves it whole, as the first time.
      try objects.update(albums[0]) { $0.attributes["label"] = .string("Hansa") }
      objects.packColdStates()
      if touchedWhileWaiting {
        // Touched again in the next part: its wait starts again there.
        try objects.update(albums[0]) { $0.attributes["label"] = .string("Mute") }
        objects.packColdStates()
      }
      for _ in 0..<parts.untouchedParts { objects.packColdStates() }
      let (changes, _) = objects.finish(ignoredKeys: [])
      let isPacked = changes.map { if case .packed = $0.changedAttributes { true } else { false } }
      #expect(isPacked == [parts.packed, true, true, true])
      let label = changes[0].attributes.first { $0.name == "label" }?.new
      #expect(label == .string(touchedWhileWaiting ? "Mute" : "Hansa"))
    }
  }

  /// Four albums the batch creates, of Japan, in a working set that packs states from four
  /// objects on, after two parts: the first touched every album, the second none, so each is
  /// packed, once.
  static func withFourAlbumsPackedOnce(_ body: (inout WorkingSet, [UInt64]) throws -> Void) throws {
    try withWorkingSet { objects, ids, _ in
      let japan = try #require(ids["Japan"])
      let root = try #require(Self.model.resolved("Album")).rootID
      let band = try #require(Self.model.resolved("Album")?.relationshipIndex["band"]).id
      let first = try objects.source.nextObjectSequence()
      let albums = (0..<4).map { ObjectIDs.make(root: root, sequence: first + UInt64($0)) }
      for (index, album) in albums.enumerated() {
        _ = objects.addNewSlot(album)
        var state = ObjectState(entity: "Album", identity: [.string("Album \(index)")])
        state.links[band] = [japan]
        try objects.set(album, to: state)
      }
      objects.objectsBeforePacking = 4
      objects.packColdStates()
      objects.packColdStates()
      try body(&objects, albums)
    }
  }

  @Test func seededStatesAreNotReadAgain() throws {
    try Self.withWorkingSet { objects, ids, _ in
      let japan = try #require(ids["Japan"])
      // What the caller already read stands, even where the store says otherwise.
      let seeded = ObjectState(entity: "Band", identity: [.string("Japan")], attributes: ["formed": .integer(1)])
      objects.seed([(japan, seeded)])
      #expect(try objects.state(of: japan) == seeded)
    }
  }
}
