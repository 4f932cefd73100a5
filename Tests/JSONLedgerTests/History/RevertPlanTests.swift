import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// A revert's plan is worked out without a write, and is what the revert then does.
@Suite("Revert plans")
struct RevertPlanTests {
  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("label", .string)
      }
    }
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    for payload: JSONValue in [
      [["name": "Japan", "label": "Hansa"], ["name": "Can", "label": "Spoon"]],
      [["name": "Japan", "label": "Virgin"], ["name": "Faust", "label": "Polydor"]],
      [["name": "Japan", "label": "EMI"]],
    ] {
      var batch = ledger.makeBatch()
      try batch.stage(payload, as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    return ledger
  }

  @Test func aPlanListsTheConflictsAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let plan = try ledger.revertPlan(2)
    #expect(plan.isRefused)
    #expect(plan.conflicts.map(\.field) == ["label"])
    #expect(plan.conflicts.first?.changedBy == 3)
    #expect(try ledger.head == 3)
    let forced = try ledger.revertPlan(2, force: true)
    #expect(!forced.isRefused)
    #expect(forced.statistics.updated == 1 && forced.statistics.deleted == 1)
    #expect(try ledger.head == 3)
  }

  @Test func theRevertDoesWhatItsPlanSaid() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let plan = try ledger.revertPlan(2, keepingLaterChanges: true)
    let result = try ledger.revert(2, keepingLaterChanges: true)
    let record = try ledger.record(result.summary.batchID)
    #expect(record.changes == plan.changes)
    #expect(result.kept == plan.conflicts)
    let again = try ledger.revertPlan(2)
    #expect(again.isRefused)
    #expect(again.alreadyRevertedBy == result.summary.batchID)
  }

  /// Whether a batch stands reverted comes from the `reverts` projection: a revert counts
  /// until a later batch reverts it in turn; compact and verify rebuild the projection.
  @Test func aRevertCountsUntilItIsRevertedItselfAndTheProjectionRebuildsTheSame() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    func revertedBy(_ batch: UInt64) throws -> UInt64? {
      try ledger.environment.read { txn in
        try ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model).revert(of: batch)
      }
    }
    _ = try ledger.revert(3)  // 4 reverts 3
    #expect(try revertedBy(3) == 4)
    // The log says it too: in each entry, and as JSON.
    #expect(try ledger.log().map(\.revertedBy) == [nil, 4, nil, nil])
    #expect(try ledger.logEntryJSON(ledger.log()[1])["revertedBy"] == 4)
    #expect(try ledger.logEntryJSON(ledger.log()[0])["revertedBy"] == nil)
    _ = try ledger.revert(4)  // 5 reverts 4: 3 stands again
    #expect(try revertedBy(3) == nil)
    #expect(try revertedBy(4) == 5)
    #expect(try ledger.log().map(\.revertedBy) == [nil, 5, nil, nil, nil])
    #expect(try ledger.revertPlan(3).alreadyRevertedBy == nil)
    _ = try ledger.revert(3, force: true)  // 6 reverts 3 again
    #expect(try revertedBy(3) == 6)
    #expect(try ledger.revertPlan(3).alreadyRevertedBy == 6)
    #expect(try ledger.verify().batches == 6)
    // Compaction keeps the batches after its horizon and rebuilds the projections from them.
    _ = try ledger.compact(keepingBatches: 4, archive: nil, discarding: true)
    #expect(try revertedBy(3) == 6)
    #expect(try ledger.verify().batches == 5)
  }

  /// Found by the shrinking history test: batch 3 unlinked an album from its band (a forced
  /// revert of the band's creation), batch 4 linked it to another band. Reverting batch 3
  /// brings the first band back; the album's to-one, which batch 4 changed, is a conflict (a
  /// to-one is one value), and a forced revert moves the album off the second band on both
  /// sides. Before, no conflict was seen, nothing repaired, and the second band kept a link
  /// the album no longer had.
  @Test func aToOneALaterBatchChangedConflictsAndAForcedRevertKeepsItsLinksTwoSided() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsAndAlbums(),
      documents: [
        try JSONParser.parse(#"{"albums": [{"name": "Tin Drum", "band": "Japan"}]}"#),
        try JSONParser.parse(#"{"albums": [{"name": "Polaroids", "band": "Japan"}]}"#),
      ])
    _ = try ledger.revert(1, force: true)  // 3: Japan and Tin Drum gone, Polaroids unlinked
    var batch = ledger.makeBatch()
    try batch.stageDocument(try JSONParser.parse(#"{"albums": [{"name": "Polaroids", "band": "Rain Tree Crow"}]}"#))
    _ = try ledger.applySynchronously(batch)  // 4
    let plan = try ledger.revertPlan(3)
    #expect(plan.isRefused)
    #expect(plan.conflicts.map(\.field) == ["band"])
    #expect(plan.conflicts.first?.changedBy == 4)
    _ = try ledger.revert(3, force: true)
    try expectLinksAreTwoSided(ledger)
    let (band, albums) = try ledger.read { view in
      (
        try view.object("Album", key: "Polaroids")?.relationships["band"],
        try view.object("Band", key: "Rain Tree Crow")?.relationships["albums"]
      )
    }
    #expect(band == [ObjectKey(entity: "Band", identity: [.string("Japan")])])
    #expect(albums == [])
    #expect(try ledger.verify().batches == 5)
  }

  /// An album moved from one band to a second (batch 2), then to a third (batch 3). Reverting
  /// batch 2 keeping later work keeps the album's band, which batch 3 set: the first band's
  /// list, which batch 2 took the album off, must not take it back either, or the link repair
  /// moves the album to it (it did: the album reported kept ended on the first band).
  @Test func aRevertKeepingLaterWorkKeepsAToOneALaterBatchSetOnBothSides() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsAndAlbums(),
      documents: [
        try JSONParser.parse(#"{"albums": [{"name": "Tin Drum", "band": "Japan"}]}"#),
        try JSONParser.parse(#"{"albums": [{"name": "Tin Drum", "band": "Can"}]}"#),
        try JSONParser.parse(#"{"albums": [{"name": "Tin Drum", "band": "Faust"}]}"#),
      ])
    let result = try ledger.revert(2, keepingLaterChanges: true)
    #expect(result.kept.map(\.field).contains("band"))
    try expectLinksAreTwoSided(ledger)
    let (band, japan) = try ledger.read { view in
      (
        try view.object("Album", key: "Tin Drum")?.relationships["band"],
        try view.object("Band", key: "Japan")?.relationships["albums"]
      )
    }
    #expect(band == [ObjectKey(entity: "Band", identity: [.string("Faust")])])
    #expect(japan == [])
    _ = try ledger.verify()
  }

  /// A musician joins a band in batch 2; batch 3 reorders the band's members. Reverting batch
  /// 2 keeping later work keeps the members as batch 3 left them, so the musician batch 2
  /// created stays too, reported kept (it was deleted, and the list reported kept lost it).
  @Test func aRevertKeepingLaterWorkKeepsAnObjectTheBatchCreatedThatAKeptListHolds() throws {
    let model = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("members", to: "Musician", many: true, ordered: true, inverse: "bands")
      }
      Entity("Musician", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("bands", to: "Band", many: true, inverse: "members")
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    for members: JSONValue in [["David"], ["David", "Mick"], ["Mick", "David"]] {
      var batch = ledger.makeBatch()
      try batch.stage(["name": "Japan", "members": members], as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    let result = try ledger.revert(2, keepingLaterChanges: true)
    #expect(result.kept.map(\.field).sorted() == ["(object)", "members"])
    let mick = ObjectKey(entity: "Musician", identity: [.string("Mick")])
    #expect(result.kept.first { $0.field == "(object)" }?.object == mick)
    #expect(result.kept.allSatisfy { $0.changedBy == 3 })
    let members = try ledger.read { view in try view.object("Band", key: "Japan")?.relationships["members"] }
    #expect(members?.map(\.identity) == [[.string("Mick")], [.string("David")]])
    try expectLinksAreTwoSided(ledger)
    _ = try ledger.verify()
  }

  /// A conflict on a list says, in words, what the batch did to it and where it stands now.
  @Test func aConflictOnAListSaysWhatTheBatchDidAndWhereItStandsNow() {
    let band = ObjectKey(entity: "Band", identity: [.string("Japan")])
    let (a, b, c) = (
      ObjectKey(entity: "Album", identity: [.string("A")]), ObjectKey(entity: "Album", identity: [.string("B")]),
      ObjectKey(entity: "Album", identity: [.string("C")])
    )
    func conflict(_ set: RevertConflict.Value, _ now: RevertConflict.Value) -> String {
      RevertConflict(object: band, field: "albums", setByBatch: set, now: now, changedBy: 4).description
    }
    #expect(
      conflict(.links(linked: [a], unlinked: []), .links(linked: [], unlinked: [a]))
        == #"Band "Japan" albums: the batch linked Album "A", batch 4 changed it since (now Album "A" unlinked)"#)
    #expect(
      conflict(.links(linked: [a, b], unlinked: [c]), .links(linked: [b, c], unlinked: [a]))
        == #"Band "Japan" albums: the batch linked Album "A", Album "B" and unlinked Album "C", batch 4 changed it "#
        + #"since (now Album "B", Album "C" linked, Album "A" unlinked)"#)
    #expect(
      conflict(.order([a, b, c]), .order([c, a, b]))
        == #"Band "Japan" albums: the batch ordered it Album "A", Album "B", Album "C", batch 4 changed it since "#
        + #"(now Album "C", Album "A", Album "B")"#)
  }
}
