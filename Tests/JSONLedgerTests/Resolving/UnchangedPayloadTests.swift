import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// The resolver skips an object whose payload is the one that last made it what it is
/// (`PayloadFingerprint`), and must apply it again whenever anything else changed it since.
@Suite("Unchanged payloads: skipped unread, applied again after any other change")
struct UnchangedPayloadTests {
  static let model = #"""
    {"entities": {
      "Band": {"identity": "name", "collectionKey": "bands", "attributes": {"name": "string", "formed": "int32"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
      "Album": {"identity": "name", "collectionKey": "albums", "attributes": {"name": "string", "label": "string"},
        "relationships": {"band": {"to": "Band", "inverse": "albums"}, "producer": {"to": "Producer", "inverse": "albums"}}},
      "Producer": {"identity": "name", "attributes": {"name": "string", "country": "string"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "producer"}}}
    }}
    """#

  /// Two bands; three albums by key of their band, each with a nested producer.
  static let document: JSONValue = [
    "bands": [["name": "Japan", "formed": 1974], ["name": "Roxy Music", "formed": 1970]],
    "albums": [
      ["name": "Tin Drum", "label": "Virgin", "band": "Japan", "producer": ["name": "Steve Nye", "country": "UK"]],
      [
        "name": "Quiet Life", "label": "Ariola", "band": "Japan", "producer": ["name": "John Punter", "country": "UK"],
      ],
      ["name": "Avalon", "label": "EG", "band": "Roxy Music", "producer": ["name": "Rhett Davies", "country": "UK"]],
    ],
  ]

  func makeLedger(_ directory: TemporaryDirectory) throws -> Ledger {
    try Ledger.open(at: directory.storePath, model: try Model(json: JSONParser.parse(Self.model)))
  }

  @discardableResult
  func apply(_ ledger: Ledger, _ stage: (inout ChangeBatch) throws -> Void) throws -> BatchSummary {
    var batch = ledger.makeBatch()
    try stage(&batch)
    return try ledger.applySynchronously(batch)
  }

  /// Resolves `batch` against the store without applying it: the changes, the counts, and the
  /// objects whose state was read. `hidingFingerprints`: every payload merged, none skipped
  /// (neither for the store's fingerprints nor as met again in the batch).
  func resolve(_ batch: ChangeBatch, in ledger: Ledger, hidingFingerprints: Bool = false) throws
    -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics, readIDs: Set<UInt64>)
  {
    try ledger.environment.read { txn in
      let store = ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model)
      let source = StateReadRecorder(store: store, hidingFingerprints: hidingFingerprints)
      var resolver = try BatchResolver(model: ledger.model, source: source)
      resolver.mergesEveryPayload = hidingFingerprints
      let resolved = try resolver.resolve(batch)
      return (resolved.changes, resolved.statistics, source.readIDs)
    }
  }

  func album(_ ledger: Ledger, _ name: String) throws -> ObjectSnapshot? {
    try ledger.read { view in try view.object("Album", key: .string(name)) }
  }

  @Test func aPayloadImportedAgainUnchangedIsSkippedWithoutReadingItsObjects() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try apply(ledger) { try $0.stageDocument(Self.document) }
    var albumIDs: Set<UInt64> = []
    try ledger.read { view in
      for name in ["Tin Drum", "Quiet Life", "Avalon"] {
        albumIDs.insert(try #require(try view.object("Album", key: .string(name))).objectID)
      }
    }

    var batch = ledger.makeBatch()
    try batch.stageDocument(Self.document)
    let resolved = try resolve(batch, in: ledger)
    #expect(resolved.changes.isEmpty)
    // Every object the payload names: 2 bands, 3 albums, 3 producers.
    #expect(resolved.statistics.unchanged == 8)
    // Nothing is read: the bands and producers gained links after their payloads (from the
    // albums), but in lists their payloads do not name.
    #expect(resolved.readIDs.isDisjoint(with: albumIDs))
    #expect(resolved.readIDs.isEmpty)

    let summary = try ledger.applySynchronously(batch)
    #expect((summary.created, summary.updated, summary.deleted, summary.unchanged) == (0, 0, 0, 8))
    // What changes nothing writes no record.
    #expect(!summary.wroteRecord)
    #expect(try ledger.verify().batches == 1)
  }

  @Test func aNestedObjectRepeatedUnderManyParentsIsSkippedToo() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let albums: JSONValue = .array(
      (0..<5).map { index in
        ["name": .string("album \(index)"), "producer": ["name": "Brian Eno", "country": "UK"]]
      })
    try apply(ledger) { try $0.stage(albums, as: "Album") }

    var batch = ledger.makeBatch()
    try batch.stage(albums, as: "Album")
    let resolved = try resolve(batch, in: ledger)
    #expect(resolved.changes.isEmpty)
    #expect(resolved.statistics.unchanged == 6)  // five albums, one producer
    #expect(resolved.readIDs.isEmpty)
  }

  @Test func anObjectUnlinkedFromTheOtherSideIsLinkedAgainByItsSamePayload() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try apply(ledger) { try $0.stageDocument(Self.document) }
    // Japan's payload empties its albums: Tin Drum and Quiet Life lose their band.
    try apply(ledger) { try $0.stage([["name": "Japan", "albums": []]], as: "Band") }
    #expect(try album(ledger, "Tin Drum")?.relationships["band"] == [])

    let summary = try apply(ledger) { try $0.stageDocument(Self.document) }
    #expect(summary.updated == 3)  // the two albums and Japan
    #expect(
      try album(ledger, "Tin Drum")?.relationships["band"] == [ObjectKey(entity: "Band", identity: [.string("Japan")])])
    #expect(
      try album(ledger, "Avalon")?.relationships["band"] == [
        ObjectKey(entity: "Band", identity: [.string("Roxy Music")])
      ])
    #expect(try ledger.verify().batches == 3)
  }

  @Test func aDeletedObjectComesBackWhenItsPayloadIsImportedAgain() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try apply(ledger) { try $0.stageDocument(Self.document) }
    try apply(ledger) { try $0.delete("Album", key: "Avalon") }
    #expect(try album(ledger, "Avalon") == nil)

    let summary = try apply(ledger) { try $0.stageDocument(Self.document) }
    #expect(summary.created == 1)
    #expect(try album(ledger, "Avalon")?["label"] == .string("EG"))
    #expect(try ledger.verify().batches == 3)
  }

  @Test func aRevertedChangeIsMadeAgainByTheSamePayload() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try apply(ledger) { try $0.stageDocument(Self.document) }
    let relabel: JSONValue = [["name": "Avalon", "label": "Polydor"]]
    let relabelled = try apply(ledger) { try $0.stage(relabel, as: "Album") }
    _ = try await ledger.revert(relabelled.batchID)
    #expect(try album(ledger, "Avalon")?["label"] == .string("EG"))

    let summary = try apply(ledger) { try $0.stage(relabel, as: "Album") }
    #expect(summary.updated == 1)
    #expect(try album(ledger, "Avalon")?["label"] == .string("Polydor"))
    #expect(try await ledger.verify().batches == 4)
  }

  @Test func aNestedObjectChangedElsewhereIsRestoredThoughItsParentIsSkipped() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try apply(ledger) { try $0.stageDocument(Self.document) }
    try apply(ledger) { try $0.stage([["name": "Steve Nye", "country": "US"]], as: "Producer") }

    let summary = try apply(ledger) { try $0.stageDocument(Self.document) }
    #expect(summary.updated == 1)
    try ledger.read { view throws in
      #expect(try view.object("Producer", key: "Steve Nye")?["country"] == .string("UK"))
    }
    #expect(try ledger.verify().batches == 3)
  }

  @Test func aPayloadAfterAnotherForTheSameObjectInOneBatchIsApplied() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let original: JSONValue = [["name": "Avalon", "label": "EG"]]
    try apply(ledger) { try $0.stage(original, as: "Album") }

    try apply(ledger) { batch in
      try batch.stage([["name": "Avalon", "label": "Polydor"]], as: "Album")
      try batch.stage(original, as: "Album")
    }
    #expect(try album(ledger, "Avalon")?["label"] == .string("EG"))
    // Polydor then EG again: no change, no record.
    #expect(try ledger.verify().batches == 1)
  }

  @Test func aPayloadOutdoneLaterInItsOwnBatchIsAppliedAgainNextTime() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let japan: JSONValue = [["name": "Japan", "albums": ["Tin Drum"]]]
    // Japan's payload lists one album; an album later in the same batch adds itself.
    try apply(ledger) { batch in
      try batch.stage(japan, as: "Band")
      try batch.stage([["name": "Quiet Life", "band": "Japan"]], as: "Album")
    }
    try ledger.read { view throws in
      #expect(try view.object("Band", key: "Japan")?.relationships["albums"]?.count == 2)
    }

    let summary = try apply(ledger) { try $0.stage(japan, as: "Band") }
    #expect(summary.updated == 2)  // Japan, and Quiet Life, which loses its band
    try ledger.read { view throws in
      #expect(
        try view.object("Band", key: "Japan")?.relationships["albums"] == [
          ObjectKey(entity: "Album", identity: [.string("Tin Drum")])
        ])
    }
    #expect(try ledger.verify().batches == 2)
  }

  /// Random batches drawn again and again from a small pool (so that payloads repeat, across
  /// batches and within one), over overlapping keys, with deletes and prunes: each resolves to
  /// the same changes and counts with skipping as with every payload merged, and the skips do
  /// happen.
  @Test(arguments: Array(1...30) as [UInt64])
  func skippingUnchangedPayloadsGivesTheChangesOfMergingThem(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    var pool: [ChangeBatch] = []
    var readsSkipping = 0
    var readsMerging = 0
    for _ in 0..<60 {
      if pool.count < 5 || Int.random(in: 0..<4, using: &generator) == 0 {
        var batch = try HistoryPropertyTests.randomBatch(ledger, using: &generator)
        if Bool.random(using: &generator) {
          // A band listing its albums after the albums' own payloads: it may take an album
          // from the band its payload named, so that payload no longer stands for it.
          let albums = (0..<6).map { "album \($0)" }.shuffled(using: &generator).prefix(
            Int.random(in: 0...2, using: &generator))
          try batch.stage(
            [
              [
                "name": .string(["A", "B", "C"].randomElement(using: &generator)!),
                "albums": .array(albums.map { .string($0) }),
              ]
            ], as: "Band")
        }
        pool.append(batch)
      }
      let batch = pool.randomElement(using: &generator)!
      let skipped = try resolve(batch, in: ledger)
      let merged = try resolve(batch, in: ledger, hidingFingerprints: true)
      // A skipped object touched later in the batch takes its place in the record later:
      // the order of changes may differ, the changes may not.
      #expect(
        skipped.changes.sorted { $0.objectID < $1.objectID } == merged.changes.sorted { $0.objectID < $1.objectID })
      #expect(skipped.statistics == merged.statistics)
      readsSkipping += skipped.readIDs.count
      readsMerging += merged.readIDs.count
      _ = try ledger.applySynchronously(batch)
    }
    #expect(readsSkipping < readsMerging)
    // A batch that changed nothing wrote no record.
    #expect(try ledger.verify().batches == (try ledger.head))
  }

  @Test func aPayloadWithANestedObjectWithoutIdentityIsAppliedEveryTime() throws {
    let directory = try TemporaryDirectory()
    let model = try Model(
      json: JSONParser.parse(
        #"""
        {"entities": {
          "Album": {"identity": "name", "attributes": {"name": "string"},
            "relationships": {"cover": {"to": "Cover", "inverse": "album"}}},
          "Cover": {"attributes": {"url": "string"}, "relationships": {"album": {"to": "Album", "inverse": "cover"}}}
        }}
        """#))
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let payload: JSONValue = [["name": "Avalon", "cover": ["url": "https://example.org/avalon.jpg"]]]
    try apply(ledger) { try $0.stage(payload, as: "Album") }

    // Each application makes a new cover (it has no key to be found by) and links it.
    let summary = try apply(ledger) { try $0.stage(payload, as: "Album") }
    #expect((summary.created, summary.updated) == (1, 2))  // the new cover; the album and the old cover
    #expect(try ledger.verify().batches == 2)
  }

  /// A payload typed as the parent updates a stored sub-entity object with the sub-entity's
  /// keys (Groot): it is skipped when it is what last made the object, and applied otherwise.
  @Test func parentTypedPayloadsAreSkippedOnlyWhenTheyLastMadeTheObject() throws {
    let model = try Model(entities: [
      Entity(
        "Abstract", identity: ["identifier"], subentityKey: "type", abstract: true,
        attributes: [Attribute("identifier", .int64, jsonKey: "id")]),
      Entity("ConcreteA", parent: "Abstract", attributes: [Attribute("foo", .string)]),
    ])
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let typed: JSONValue = [["id": 1, "type": "ConcreteA", "foo": "x"]]
    let untyped: JSONValue = [["id": 1, "foo": "y"]]
    // Each payload, and whether it changes the object.
    let steps: [(JSONValue, Bool)] = [
      (typed, true), (untyped, true), (untyped, false), (typed, true), (untyped, true), (untyped, false),
    ]
    for (payload, changes) in steps {
      var batch = ledger.makeBatch()
      try batch.stage(payload, as: "Abstract")
      let skipped = try resolve(batch, in: ledger)
      let merged = try resolve(batch, in: ledger, hidingFingerprints: true)
      #expect(skipped.changes == merged.changes)
      #expect(skipped.statistics == merged.statistics)
      #expect(skipped.changes.isEmpty == !changes)
      if !changes { #expect(skipped.readIDs.isEmpty) }
      _ = try ledger.applySynchronously(batch)
    }
    try ledger.read { view throws in
      #expect(try view.object("Abstract", key: 1)?.entity == "ConcreteA")
      #expect(try view.object("Abstract", key: 1)?["foo"] == .string("y"))
    }
    // The two that change nothing wrote no record.
    #expect(try ledger.verify().batches == 4)
  }

  /// Stages `text` as objects of `entity`: from the text, or parsed first, as `fromText` says.
  static func stage(_ text: String, as entity: String, in batch: inout ChangeBatch, fromText: Bool) throws {
    if fromText {
      try batch.stage(json: Array(text.utf8), as: entity)
    } else {
      try batch.stage(JSONParser.parse(Array(text.utf8)), as: entity)
    }
  }

  /// Albums that each nest the producer Steve Nye, from the country in `countries` at its place.
  static func albums(producedIn countries: [String]) -> String {
    let albums = countries.enumerated().map { index, country in
      #"{"name": "Album \#(index)", "producer": {"name": "Steve Nye", "country": "\#(country)"}}"#
    }
    return "[" + albums.joined(separator: ", ") + "]"
  }

  /// A payload met again in a batch with nothing changed since is not merged again (the
  /// resolver's `isMadeAgain`); the batch ends as merging every payload in order would.
  @Test(arguments: [true, false])
  func aNestedObjectRepeatedInOneBatchEndsAsItsLastPayloadSays(fromText: Bool) throws {
    for countries in [["UK", "UK", "Ireland"], ["UK", "Ireland", "UK"], ["Ireland", "UK", "UK", "UK"]] {
      let directory = try TemporaryDirectory()
      let ledger = try makeLedger(directory)
      let text = Self.albums(producedIn: countries)
      try apply(ledger) { try Self.stage(text, as: "Album", in: &$0, fromText: fromText) }
      try ledger.read { view throws in
        let producer = try #require(try view.object("Producer", key: "Steve Nye"))
        #expect(producer["country"] == .string(countries.last ?? ""))
        #expect(producer.relationships["albums"]?.count == countries.count)
      }
      #expect(try ledger.verify().batches == 1)
    }
  }

  /// Between two of its payloads, a list the payload names was changed from the other side:
  /// the second payload is merged again and puts the list back as it says.
  @Test(arguments: [true, false])
  func aRepeatedPayloadIsMergedAgainAfterAListItNamesChanged(fromText: Bool) throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let producer = #"[{"name": "Steve Nye", "country": "UK", "albums": ["Tin Drum"]}]"#
    let album = #"[{"name": "Quiet Life", "producer": "Steve Nye"}]"#
    try apply(ledger) { batch in
      for (text, entity) in [(producer, "Producer"), (album, "Album"), (producer, "Producer")] {
        try Self.stage(text, as: entity, in: &batch, fromText: fromText)
      }
    }
    try ledger.read { view throws in
      #expect(
        try view.object("Producer", key: "Steve Nye")?.relationships["albums"] == [
          ObjectKey(entity: "Album", identity: [.string("Tin Drum")])
        ])
      #expect(try view.object("Album", key: "Quiet Life")?.relationships["producer"] == [])
    }
  }

  /// A payload with a problem, met again, reports it again: one run names every place.
  @Test func aRepeatedPayloadWithAProblemReportsItEachTime() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let producer = #"[{"name": "Steve Nye", "albums": ["Nowhere"]}]"#
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(producer.utf8), as: "Producer", options: StagingOptions(strict: true))
    try batch.stage(json: Array(producer.utf8), as: "Producer", options: StagingOptions(strict: true))
    #expect {
      try ledger.applySynchronously(batch)
    } throws: { error in
      (error as? LedgerError)?.mapping?.problems.filter { $0.reason.contains("Nowhere") }.count == 2
    }
  }

  @Test func aPayloadThatOnlyInsertsLeavesNoFingerprintForALaterUpdate() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try apply(ledger) { try $0.stage([["name": "Avalon", "label": "EG"]], as: "Album") }
    var insertOnly = StagingOptions()
    insertOnly.operations = .insert
    // Not applied to Avalon (it exists): must not count as applied later.
    try apply(ledger) { try $0.stage([["name": "Avalon", "label": "Polydor"]], as: "Album", options: insertOnly) }
    #expect(try album(ledger, "Avalon")?["label"] == .string("EG"))

    try apply(ledger) { try $0.stage([["name": "Avalon", "label": "Polydor"]], as: "Album") }
    #expect(try album(ledger, "Avalon")?["label"] == .string("Polydor"))
    // The insert-only payload changed nothing: no record.
    #expect(try ledger.verify().batches == 2)
  }
}

/// A real projection store that records which objects' states are read from it, and can
/// hide the stored payload fingerprints (so that the resolver merges every payload).
final class StateReadRecorder: StateSource {
  let store: ProjectionStore
  let hidingFingerprints: Bool
  private(set) var readIDs: Set<UInt64> = []

  init(store: ProjectionStore, hidingFingerprints: Bool = false) {
    self.store = store
    self.hidingFingerprints = hidingFingerprints
  }

  func registration(encodedIdentity: [UInt8]) throws -> (id: UInt64, payloadFingerprint: UInt64)? {
    guard let found = try store.registration(encodedIdentity: encodedIdentity) else { return nil }
    return hidingFingerprints ? (found.id, 0) : found
  }

  func holdsIdentities(root: UInt32) throws -> Bool { try store.holdsIdentities(root: root) }

  func state(of objectID: UInt64) throws -> ObjectState? {
    readIDs.insert(objectID)
    return try store.state(of: objectID)
  }

  func objectIDs(root: String) throws -> [UInt64] { try store.objectIDs(root: root) }

  func nextObjectSequence() throws -> UInt64 { try store.nextObjectSequence() }

  /// The store's head; with the fingerprints hidden, a head no staging saw, so that nothing
  /// found while staging is taken as still true.
  func head() throws -> UInt64 { hidingFingerprints ? .max : try store.head() }
}
