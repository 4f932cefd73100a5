import Foundation
import JSONLedgerTestSupport
import LMDB
import Testing

@testable import JSONLedger

/// An object with many links that gains a few in each of many batches (a producer of
/// thousands of albums, imported in chunks): records and history must grow with what each
/// batch changed, not with the list.
@Suite("Long link lists")
struct LongLinkListTests {
  static let batches = 240

  /// Batch i adds album "a<i>" to band "Hub"; every 7th batch also deletes an earlier album,
  /// every 11th renames the band's label. Returns the band's album names after each batch.
  static func growHub(_ ledger: Ledger) throws -> [[String]] {
    var lists: [[String]] = []
    for index in 1...batches {
      var batch = ledger.makeBatch()
      try batch.stage([["name": .string("a\(index)"), "band": "Hub"]], as: "Album")
      if index % 7 == 0 { try batch.delete("Album", key: .string("a\(index / 2)")) }
      if index % 11 == 0 {
        try batch.stage([["name": "Hub", "formed": .number(JSONNumber(1960 + index))]], as: "Band")
      }
      _ = try ledger.applySynchronously(batch)
      lists.append(try albums(of: "Hub", ledger: ledger, asOf: nil))
    }
    return lists
  }

  static func albums(of band: String, ledger: Ledger, asOf batch: UInt64?) throws -> [String] {
    func names(_ view: borrowing View) throws -> [String] {
      guard let hub = try view.object("Band", key: .string(band)) else { return [] }
      return try view.related(hub, "albums").map { $0.key.identity.first?.keyText ?? "" }.sorted()
    }
    if let batch { return try ledger.read(asOf: batch) { view in try names(view) } }
    return try ledger.read { view in try names(view) }
  }

  /// Ids stored in the undo images of one object, whole lists and deltas together.
  static func storedIDs(of objectID: UInt64, ledger: Ledger) throws -> (ids: Int, entries: Int) {
    var ids = 0
    var entries = 0
    try ledger.environment.read { txn in
      try txn.forEach(in: ledger.layout.history, prefix: StoreKeys.object(objectID)) { entry in
        entries += 1
        if let image = try StateCoding.decode(entry.value, model: ledger.model, attributes: false) {
          for (_, targets) in image.state.links { ids += targets.count }
          for (_, delta) in image.deltas { ids += delta.change.added.count + delta.change.removed.count }
        }
        return true
      }
    }
    return (ids, entries)
  }

  static func hubID(_ ledger: Ledger) throws -> UInt64 {
    let band = try #require(ledger.model.resolved("Band"))
    var key: [UInt8] = []
    return try ledger.environment.read { txn in
      try #require(
        try ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model).objectID(
          rootID: band.rootID, identity: [.string("Hub")], encodingInto: &key))
    }
  }

  /// - Reliability: A list growing by one album per batch for 240 batches: every as-of read right; history
  ///   stores under a third of the ids that whole lists would; a record holds the one link added
  /// - Size: 240 batches
  @Test(.tags(.reliability)) func everyPointInTimeReadOfAGrowingListIsTheListAsItWasThen() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    let lists = try Self.growHub(ledger)
    #expect(lists.last?.count ?? 0 > 200)
    for (index, expected) in lists.enumerated() {
      #expect(
        try Self.albums(of: "Hub", ledger: ledger, asOf: UInt64(index + 1)) == expected, "as of batch \(index + 1)")
    }
    _ = try ledger.verify()
  }

  @Test func historyOfAGrowingListStaysLinearInWhatChanged() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    let lists = try Self.growHub(ledger)
    let (ids, entries) = try Self.storedIDs(of: try Self.hubID(ledger), ledger: ledger)
    // One undo image per batch but the first, which created the hub.
    #expect(entries == Self.batches - 1)
    // Whole lists every time would store the sum of the list lengths (~23,000 here). With
    // deltas, an entry of a long list costs about √n ids plus what its batch changed, spread
    // over its chain (`StoredLinkList`); lists shorter than the threshold are written whole.
    let wholeEveryTime = lists.reduce(0) { $0 + $1.count }
    let final = lists.last?.count ?? 0
    let short = StoredLinkList.minimumDeltaLength * StoredLinkList.minimumDeltaLength
    #expect(ids < 2 * Self.batches * (StoredLinkList.entryWeight(forLength: final) + 2) + short, "\(ids) ids stored")
    #expect(ids * 3 < wholeEveryTime, "\(ids) ids stored, \(wholeEveryTime) whole")
  }

  @Test func aRecordHoldsTheLinksABatchAddedNotTheWholeList() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    _ = try Self.growHub(ledger)
    let hub = try Self.hubID(ledger)
    let record = try ledger.record(UInt64(Self.batches))
    let hubChange = try #require(record.changes.first { $0.objectID == hub })
    #expect(hubChange.links.count == 1)
    #expect(hubChange.links.first?.added.count == 1)
    #expect(hubChange.links.first?.removed == [])
    #expect(hubChange.links.first?.order == nil)
    #expect(RecordCoding.encode(record).count < 200)
  }

  @Test func anOrderedListKeepsItsWholeOrderInTheRecord() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    var one = ledger.makeBatch()
    try one.stage([["name": "A", "members": ["p1", "p2", "p3"]]], as: "Band")
    _ = try ledger.applySynchronously(one)
    var two = ledger.makeBatch()
    try two.stage([["name": "A", "members": ["p3", "p1", "p2"]]], as: "Band")
    _ = try ledger.applySynchronously(two)
    let change = try #require(try ledger.record(2).changes.first { $0.entity == "Band" })
    let members = try #require(change.links.first)
    #expect(members.added == [] && members.removed == [])
    #expect(members.order.map { $0.old.count == 3 && $0.new.count == 3 && $0.old != $0.new } == true)
    _ = try ledger.verify()
  }

  @Test func revertingAnOldBatchOnALongListUndoesOnlyItsOwnLink() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    let lists = try Self.growHub(ledger)
    // Batch 201 created album a201 and linked it to the hub; later batches changed the hub's
    // album list, but never that link, so nothing conflicts.
    let result = try await ledger.revert(201)
    #expect(result.overridden == [])
    #expect(try Self.albums(of: "Hub", ledger: ledger, asOf: nil) == (lists.last ?? []).filter { $0 != "a201" })
    #expect(try await ledger.read { view in try view.object("Album", key: "a201") == nil })
    _ = try await ledger.verify()
  }

  @Test func revertingALinkThatALaterBatchUndidConflicts() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    _ = try Self.growHub(ledger)
    // Batch 7 created a7 (and deleted a3); batch 14 deleted a7: reverting 7 conflicts on the
    // album and on the hub's links, and only there; in the order the record lists its
    // objects, by id (the hub was stored first).
    let refusal = await #expect(throws: LedgerError.self) { _ = try await ledger.revert(7) }
    #expect(
      refusal?.conflicts.map(\.description) == [
        #"Band "Hub" albums: the batch linked Album "a7" and unlinked Album "a3", batch 14 changed it since (now Album "a3", Album "a7" unlinked)"#,
        #"Album "a7" (object): the batch created it, batch 14 deleted it since"#,
      ])
  }

  /// Random batches over two long lists: new albums, albums moving between the bands,
  /// deletions, reverts of the newest batch and of older ones, rewinds. Every point-in-time
  /// read must equal the state captured live, and replay must equal the live projections.
  ///
  /// - Reliability: Two long lists (200+ albums each) under random imports, moves, deletions, reverts (newest,
  ///   older, forced) and rewinds: as-of every batch = the live state captured then; links
  ///   two-sided; replay = live
  /// - Size: 3 seeds × 250 steps
  @Test(.tags(.reliability), arguments: [31, 32, 33] as [UInt64])
  func randomChangesToLongListsReadBackAtEveryBatch(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    var snapshots: [String] = []
    var created = 0
    var longest = 0
    for step in 1...250 {
      let head = UInt64(snapshots.count)
      switch Int.random(in: 0..<20, using: &generator) {
      case 0 where head > 1:
        _ = try? await ledger.revert(head)
      case 1 where head > 10:
        _ = try? await ledger.revert(
          UInt64.random(in: (head - 10)...head, using: &generator), force: Bool.random(using: &generator))
      case 2 where head > 20:
        _ = try await ledger.rewind(to: UInt64.random(in: (head - 20)...head, using: &generator))
      default:
        var batch = ledger.makeBatch()
        var albums: [JSONValue] = []
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
          created += 1
          albums.append(["name": .string("a\(created)"), "band": Bool.random(using: &generator) ? "H" : "G"])
        }
        if created > 5 {
          for _ in 0..<Int.random(in: 0...2, using: &generator) {
            albums.append([
              "name": .string("a\(Int.random(in: 1...created, using: &generator))"),
              "band": Bool.random(using: &generator) ? "H" : "G",
            ])
          }
        }
        try batch.stage(.array(albums), as: "Album")
        if created > 5, Int.random(in: 0..<4, using: &generator) == 0 {
          try batch.delete("Album", key: .string("a\(Int.random(in: 1...created, using: &generator))"))
        }
        _ = try ledger.applySynchronously(batch)
      }
      let newHead = try ledger.head
      while snapshots.count < newHead {
        snapshots.append(try await ledger.read { view in try HistoryPropertyTests.snapshot(view) })
      }
      if step % 25 == 0 { try expectLinksAreTwoSided(ledger) }
      longest = max(
        longest, try Self.albums(of: "H", ledger: ledger, asOf: nil).count,
        try Self.albums(of: "G", ledger: ledger, asOf: nil).count)
    }
    #expect(longest > 2 * StoredLinkList.minimumDeltaLength)
    for (index, snapshot) in snapshots.enumerated() {
      #expect(
        try await ledger.read(asOf: UInt64(index + 1)) { view in try HistoryPropertyTests.snapshot(view) } == snapshot,
        "as of batch \(index + 1)")
    }
    _ = try await ledger.verify()
  }

  /// A to-one is one value: a forced revert puts the old target back, and the target a later
  /// batch set loses its side of the link.
  @Test func aForcedRevertOfAToOneRestoresTheOldTargetOnBothSides() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    for band in ["A", "B", "C"] {
      var batch = ledger.makeBatch()
      try batch.stage([["name": "x", "band": .string(band)]], as: "Album")
      _ = try ledger.applySynchronously(batch)
    }
    let refused = await #expect(throws: LedgerError.self) { _ = try await ledger.revert(2) }

    #expect(refused?.code == .revertConflicts)
    _ = try await ledger.revert(2, force: true)
    let albums = try await ledger.read { view in
      try ["A", "B", "C"].map { band in
        try view.object("Band", key: .string(band)).map { try view.related($0, "albums").count }
      }
    }
    // Batch 2 created the stub B, so its revert deletes it.
    #expect(albums == [1, nil, 0])
    #expect(
      try await ledger.read { view in
        try view.related(try #require(try view.object("Album", key: "x")), "band").map(\.key.description)
      } == [#"Band "A""#])
    try expectLinksAreTwoSided(ledger)
    _ = try await ledger.verify()
  }
}
