import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Properties of the log over random sequences of batches.
@Suite("History properties")
struct HistoryPropertyTests {
  static let model: Model = {
    do {
      return try model(label: .string)
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  /// The test model, with `Album.label` of type `label` (a migration test changes it).
  static func model(label: AttributeType) throws -> Model {
    try Model(keyCase: .snakeCase) {
      Entity("Band", identity: ["name"], collectionKey: "bands") {
        Attribute("name", .string)
        Attribute("formed", .int32)
        Relationship("albums", to: "Album", many: true, inverse: "band")
        Relationship("members", to: "Musician", many: true, ordered: true, inverse: "bands")
      }
      Entity("Album", identity: ["name"], collectionKey: "albums") {
        Attribute("name", .string)
        Attribute("label", label)
        Relationship("band", to: "Band", inverse: "albums")
      }
      Entity("Musician", identity: ["name"], collectionKey: "musicians") {
        Attribute("name", .string)
        Relationship("bands", to: "Band", many: true, inverse: "members")
        Relationship("favourite", to: "Album")
      }
    }
  }

  /// A random batch over a small key space, so that batches overlap.
  static func randomBatch(_ ledger: Ledger, using generator: inout SeededGenerator) throws -> ChangeBatch {
    var batch = ledger.makeBatch()
    let bands = ["A", "B", "C"]
    let albums = (0..<6).map { "album \($0)" }
    let people = (0..<5).map { "p\($0)" }
    var albumObjects: [JSONValue] = []
    for _ in 0..<Int.random(in: 0...4, using: &generator) {
      var album: JSONObject = ["name": .string(albums.randomElement(using: &generator)!)]
      if Bool.random(using: &generator) {
        album["label"] =
          Bool.random(using: &generator) ? .string("L\(Int.random(in: 0..<3, using: &generator))") : .null
      }
      if Bool.random(using: &generator) {
        album["band"] = Bool.random(using: &generator) ? .string(bands.randomElement(using: &generator)!) : .null
      }
      albumObjects.append(.object(album))
    }
    try batch.stage(.array(albumObjects), as: "Album")
    var bandObjects: [JSONValue] = []
    for _ in 0..<Int.random(in: 0...2, using: &generator) {
      var band: JSONObject = ["name": .string(bands.randomElement(using: &generator)!)]
      if Bool.random(using: &generator) {
        band["formed"] = .number(JSONNumber(Int.random(in: 1960...1990, using: &generator)))
      }
      if Bool.random(using: &generator) {
        band["members"] = .array(
          people.shuffled(using: &generator).prefix(Int.random(in: 0...3, using: &generator)).map { .string($0) })
      }
      bandObjects.append(.object(band))
    }
    try batch.stage(.array(bandObjects), as: "Band")
    if Int.random(in: 0..<4, using: &generator) == 0 {
      try batch.stage(
        [
          [
            "name": .string(people.randomElement(using: &generator)!),
            "favourite": .string(albums.randomElement(using: &generator)!),
          ]
        ], as: "Musician")
    }
    if Int.random(in: 0..<5, using: &generator) == 0 {
      try batch.delete("Album", key: .string(albums.randomElement(using: &generator)!))
    }
    if Int.random(in: 0..<8, using: &generator) == 0 {
      try batch.stage(.array(albumObjects), as: "Album", options: StagingOptions(prune: true))
    }
    return batch
  }

  static func snapshot(_ view: borrowing View) throws -> String {
    JSONWriter(options: [.sortedKeys]).string(from: try view.exportDocument())
  }

  /// Every key a random batch can name, with its entity.
  static let everyKey: [(String, String)] =
    ["A", "B", "C"].map { ("Band", $0) } + (0..<6).map { ("Album", "album \($0)") }
    + (0..<5).map { ("Musician", "p\($0)") }

  /// An object read by key as of a batch (read in place from its undo image or current state,
  /// or resolved from list changes) is the one read by key right after that batch: deleted,
  /// brought back, not yet created, relinked.
  @Test(arguments: [6, 7, 8] as [UInt64])
  func anObjectReadByKeyAsOfEveryBatchIsTheOneReadThen(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    func objects(_ view: borrowing View) throws -> [ObjectSnapshot?] {
      try Self.everyKey.map { entity, key in try view.object(entity, key: .string(key)) }
    }
    var captured: [(UInt64, [ObjectSnapshot?])] = []
    for _ in 0..<40 {
      // A batch that changes nothing writes no record: the head is the batch to read as of.
      let summary = try ledger.applySynchronously(try Self.randomBatch(ledger, using: &generator))
      captured.append((summary.batchID, try ledger.read { view in try objects(view) }))
    }
    for (batch, expected) in captured {
      let read = try ledger.read(asOf: batch) { view in try objects(view) }
      for (key, (then, asOf)) in zip(Self.everyKey, zip(expected, read)) {
        #expect(asOf == then, "\(key) as of batch \(batch)")
      }
    }
  }

  /// - Reliability: Random batch sequences: as-of every batch = the live state captured then; reverting the
  ///   last batch = as of the one before; reverting the revert re-applies; rewind = as-of
  /// - Size: 5+6+3 seeds × 12–25 batches
  @Test(.tags(.reliability), arguments: [1, 2, 3, 4, 5] as [UInt64])
  func asOfEveryBatchEqualsTheLiveStateCapturedThen(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var captured: [(UInt64, String)] = []
    for _ in 0..<25 {
      // A batch that changes nothing writes no record: the head is the batch to read as of.
      let summary = try ledger.applySynchronously(try Self.randomBatch(ledger, using: &generator))
      captured.append((summary.batchID, try ledger.read { view in try Self.snapshot(view) }))
    }
    for (batch, expected) in captured {
      #expect(try ledger.read(asOf: batch) { view in try Self.snapshot(view) } == expected, "as of \(batch)")
    }
    #expect(try ledger.verify().batches == (try ledger.head))
  }

  @Test(arguments: [11, 12, 13, 14, 15, 16] as [UInt64])
  func revertingTheLastBatchGivesTheStateBeforeIt(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    for _ in 0..<12 { _ = try ledger.applySynchronously(try Self.randomBatch(ledger, using: &generator)) }
    // A batch that changed nothing wrote no record: the last batch is the head.
    let last = try ledger.head
    let before = try await ledger.read(asOf: last - 1) { view in try Self.snapshot(view) }
    let after = try await ledger.read { view in try Self.snapshot(view) }
    let revert = try await ledger.revert(last)
    #expect(revert.overridden.isEmpty)
    #expect(try await ledger.read { view in try Self.snapshot(view) } == before)
    _ = try await ledger.revert(revert.summary.batchID)  // revert of the revert re-applies the last batch
    #expect(try await ledger.read { view in try Self.snapshot(view) } == after)
    #expect(try await ledger.verify().batches == Int(last) + 2)
  }

  /// - Reliability: Random batch sequences with forced reverts of older batches: every link has its counterpart
  ///   after each step; replay = live
  /// - Size: 6 seeds × 30 steps
  @Test(.tags(.reliability), arguments: [41, 42, 43, 44, 45, 46] as [UInt64])
  func forcedRevertsOfOlderBatchesKeepEveryLinkTwoSided(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var forced = 0
    for step in 1...30 {
      let head = try ledger.head
      if step % 3 == 0, head > 1 {
        let result = try? await ledger.revert(UInt64.random(in: 1...head, using: &generator), force: true)
        if let result, !result.overridden.isEmpty { forced += 1 }
      } else {
        _ = try ledger.applySynchronously(try Self.randomBatch(ledger, using: &generator))
      }
      try expectLinksAreTwoSided(ledger)
    }
    #expect(forced > 0)
    _ = try await ledger.verify()
  }

  // The other seeds once found a list reported kept that the revert still changed: 68 and
  // 241 by deleting an object the batch created and the kept list holds; 86, 95 and 136
  // through the link repair, for a partner the revert put back (seeds 51–450 pass).
  @Test(arguments: [51, 52, 53, 54, 55, 56, 68, 86, 95, 136, 241] as [UInt64])
  func revertsThatKeepLaterWorkKeepEveryLinkTwoSidedAndLeaveLaterValues(seed: UInt64) async throws {
    try await Self.revertKeepingLaterWork(seed: seed)
  }

  static func revertKeepingLaterWork(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var kept = 0
    for step in 1...30 {
      let head = try ledger.head
      if step % 3 == 0, head > 1 {
        let before = try await ledger.read { view in try Self.snapshot(view) }
        let batch = UInt64.random(in: 1...head, using: &generator)
        guard let result = try? await ledger.revert(batch, keepingLaterChanges: true) else { continue }
        if !result.kept.isEmpty { kept += 1 }
        // Each field it says it kept is as it was before the revert.
        for conflict in result.kept where conflict.field != "(object)" {
          guard let identity = conflict.object.identity.first?.jsonValue(dateFormat: .iso8601) else { continue }
          @Sendable func field(_ view: borrowing View) throws -> String {
            let object = try view.object(conflict.object.entity, key: identity)
            let attribute = object?.attributes[conflict.field].map { "\($0)" } ?? ""
            return attribute + "\(object?.relationships[conflict.field] ?? [])"
          }
          let was = try await ledger.read(asOf: head) { view in try field(view) }
          let now = try await ledger.read { view in try field(view) }
          #expect(now == was, "batch \(batch): \(conflict.object).\(conflict.field) was reported kept")
        }
        // Nothing a later batch changed is reverted: reverting the revert gives the state back.
        if result.summary.batchID == head + 1,
          result.summary.created + result.summary.updated + result.summary.deleted > 0
        {
          _ = try await ledger.revert(result.summary.batchID, force: true)
          #expect(try await ledger.read { view in try Self.snapshot(view) } == before)
        }
      } else {
        _ = try ledger.applySynchronously(try Self.randomBatch(ledger, using: &generator))
      }
      try expectLinksAreTwoSided(ledger)
    }
    #expect(kept > 0)
    _ = try await ledger.verify()
  }

  @Test(arguments: [21, 22, 23] as [UInt64])
  func rewindMakesTheCurrentStateEqualTheStateAsOf(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    for _ in 0..<15 { _ = try ledger.applySynchronously(try Self.randomBatch(ledger, using: &generator)) }
    let written = try ledger.head
    for target in [10, 3, 0] as [UInt64] {
      _ = try await ledger.rewind(to: target)
      let expected = target == 0 ? "" : try await ledger.read(asOf: target) { view in try Self.snapshot(view) }
      if target > 0 { #expect(try await ledger.read { view in try Self.snapshot(view) } == expected) }
    }
    #expect(
      try await ledger.read { view in try view.count("Album") + view.count("Band") + view.count("Musician") } == 0)
    // A batch that changed nothing wrote no record; each rewind wrote one.
    #expect(try await ledger.verify().batches == Int(written) + 3)
  }

  @Test func diffListsCreatedUpdatedAndDeletedObjects() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var one = ledger.makeBatch()
    try one.stage([["name": "x", "label": "L1"], ["name": "y"]], as: "Album")
    _ = try ledger.applySynchronously(one)
    var two = ledger.makeBatch()
    try two.stage([["name": "x", "label": "L2"], ["name": "z"]], as: "Album")
    try two.delete("Album", key: "y")
    _ = try ledger.applySynchronously(two)
    let diff = try ledger.diff(from: 1, to: 2)
    #expect(diff.changes.map(\.kind) == [.updated, .deleted, .created])
    #expect(diff.changes[0].attributes == [AttributeChange(name: "label", old: .string("L1"), new: .string("L2"))])
    let backwards = try ledger.diff(from: 2, to: 1)
    #expect(backwards.changes.map(\.kind) == [.updated, .created, .deleted])
    #expect(try ledger.record(2).kind == .import)
  }

  @Test func revertRestoresADeletedObjectWithItsLinks() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var one = ledger.makeBatch()
    try one.stage([["name": "A", "members": ["p1", "p2"]]], as: "Band")
    try one.stage([["name": "x", "band": "A"]], as: "Album")
    _ = try ledger.applySynchronously(one)
    let before = try await ledger.read { view in try Self.snapshot(view) }
    var two = ledger.makeBatch()
    try two.delete("Band", key: "A")
    let summary = try ledger.applySynchronously(two)
    #expect(summary.kind == .delete)
    #expect(try await ledger.read { view in try view.object("Album", key: "x")?.relationships["band"] } == [])
    _ = try await ledger.revert(2)
    #expect(try await ledger.read { view in try Self.snapshot(view) } == before)
  }

  @Test func anObjectImportedAgainAfterItsDeletionKeepsItsIdAmongNewerObjects() throws {
    // The projector appends a created object's entries; one whose id comes back sorts before
    // newer objects' entries and must be put the usual way.
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var one = ledger.makeBatch()
    try one.stage([["name": "x", "label": "L1", "band": "A"]], as: "Album")
    _ = try ledger.applySynchronously(one)
    let firstID = try ledger.read { view in try #require(try view.object("Album", key: "x")).objectID }
    var two = ledger.makeBatch()
    try two.delete("Album", key: "x")
    _ = try ledger.applySynchronously(two)
    var three = ledger.makeBatch()
    try three.stage([["name": "y", "band": "B"]], as: "Album")
    _ = try ledger.applySynchronously(three)
    var four = ledger.makeBatch()
    try four.stage([["name": "x", "label": "L2", "band": "B"], ["name": "z", "band": "B"]], as: "Album")
    #expect(try ledger.applySynchronously(four).created == 2)
    try ledger.read { view in
      let x = try #require(try view.object("Album", key: "x"))
      #expect(x.objectID == firstID)
      #expect(x.attributes["label"] == .string("L2"))
      let band = try #require(try view.object("Band", key: "B"))
      #expect(band.relationships["albums"]?.count == 3)
    }
    #expect(try ledger.verify().batches == 4)
  }

  @Test func aRelationshipWithoutInverseIsTraversedFromTheOtherSide() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage(
      [["name": "p1", "favourite": "x"], ["name": "p2", "favourite": "x"], ["name": "p3", "favourite": "y"]],
      as: "Musician")
    _ = try ledger.applySynchronously(batch)
    let fans = try ledger.read { view in
      try view.objects(pointingTo: try #require(try view.object("Album", key: "x")), through: "Musician.favourite").map(
        \.key.identity)
    }
    #expect(fans == [[.string("p1")], [.string("p2")]])
    var delete = ledger.makeBatch()
    try delete.delete("Album", key: "x")
    _ = try ledger.applySynchronously(delete)
    #expect(try ledger.read { view in try view.object("Musician", key: "p1")?.relationships["favourite"] } == [])
  }

  @Test func expectedHeadAndIdempotencyKey() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "x"]], as: "Album")
    let first = try await ledger.apply(batch, idempotencyKey: "k1", expectedHead: 0)
    let again = try await ledger.apply(batch, idempotencyKey: "k1")
    #expect(again.wasAlreadyApplied && again.batchID == first.batchID)
    await #expect {
      try await ledger.apply(batch, expectedHead: 0)
    } throws: { error in
      if let error = error as? LedgerError, error.code == .headMoved, error.expectedHead == 0, error.head == 1 {
        return true
      }
      return false
    }
  }

  @Test func changesStreamDeliversAppliedBatches() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let stream = ledger.changes
    var batch = ledger.makeBatch()
    try batch.stage([["name": "x"]], as: "Album")
    _ = try await ledger.apply(batch)
    var iterator = stream.makeAsyncIterator()
    let summary = await iterator.next()
    #expect(summary?.batchID == 1)
    #expect(summary?.created == 1)
  }
}
