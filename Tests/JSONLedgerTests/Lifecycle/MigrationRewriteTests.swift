import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Migrating by rewriting the stored states")
struct MigrationRewriteTests {
  /// The history test model with `Album.label` renamed `title` and `Band.formed` renamed
  /// `year` of type `year` (both now sort after `name`, so each state's attributes change
  /// order; `keepingOrder`: `lyric` and `founded`, which sort where the old names did),
  /// `Musician.favourite` renamed `favorite`. `removing`: attributes left out, by their new
  /// names.
  static func rewrittenModel(
    year: AttributeType, indexed: Bool = false, keepingOrder: Bool = false, removing: Set<String> = []
  ) throws -> Model {
    let (yearName, titleName) = Self.names(keepingOrder: keepingOrder)
    return try Model(keyCase: .snakeCase) {
      Entity("Band", identity: ["name"], collectionKey: "bands") {
        Attribute("name", .string)
        if !removing.contains(yearName) {
          Attribute(yearName, year, indexed: indexed, renamedFrom: "formed")
        }
        Relationship("albums", to: "Album", many: true, inverse: "band")
        Relationship("members", to: "Musician", many: true, ordered: true, inverse: "bands")
      }
      Entity("Album", identity: ["name"], collectionKey: "albums") {
        Attribute("name", .string)
        if !removing.contains(titleName) {
          Attribute(titleName, .string, renamedFrom: "label")
        }
        Relationship("band", to: "Band", inverse: "albums")
      }
      Entity("Musician", identity: ["name"], collectionKey: "musicians") {
        Attribute("name", .string)
        Relationship("bands", to: "Band", many: true, inverse: "members")
        Relationship("favorite", to: "Album", renamedFrom: "favourite")
      }
    }
  }

  static func names(keepingOrder: Bool) -> (year: String, title: String) {
    keepingOrder ? ("founded", "lyric") : ("year", "title")
  }

  /// - Reliability: Attributes renamed, retyped and removed by rewriting each stored state,
  ///   against the same store migrated by replaying its log: the state as of every batch equal,
  ///   the projections equal to a replay byte for byte (the undo images of updates that changed
  ///   only a removed attribute gone), the kept digest right
  /// - Size: 4 seeds × 12 batches × 8 changes (3 types × names in their old order or not, and
  ///   two that remove `Album.label`)
  @Test(
    .tags(.reliability), arguments: [1, 2, 3, 4] as [UInt64],
    [
      (.string, false, false), (.int64, false, false), (.double, false, false), (.string, true, false),
      (.int64, true, false), (.double, true, false), (.string, false, true), (.int64, true, true),
    ] as [(AttributeType, Bool, Bool)])
  func aRewriteLeavesTheProjectionsAReplayBuilds(
    seed: UInt64, change: (year: AttributeType, keepingOrder: Bool, removingLabel: Bool)
  ) throws {
    let (year, keepingOrder, removingLabel) = change
    let directory = try TemporaryDirectory()
    let (ledger, _) = try CompactTests.filledStore(directory.path + "/store", seed: seed)
    let head = try ledger.head
    ledger.close()
    try FileManager.default.copyItem(atPath: directory.path + "/store", toPath: directory.path + "/replayed")
    let model = try Self.rewrittenModel(
      year: year, keepingOrder: keepingOrder,
      removing: removingLabel ? [Self.names(keepingOrder: keepingOrder).title] : [])
    let yearName = Self.names(keepingOrder: keepingOrder).year

    let rewritten = try Ledger.open(at: directory.path + "/store")
    let plan = try rewritten.migrationPlan(to: model)
    #expect(plan.method == .rewrite)
    let report = try rewritten.migrate(following: plan, allowingRemovals: false)
    #expect(report.replayedBatches == 0)
    #expect(report.batchID == head + 1)
    rewritten.close()

    let replayed = try Ledger.open(at: directory.path + "/replayed")
    var replay = plan
    replay.method = .replay
    #expect(try replayed.migrate(following: replay, allowingRemovals: false).replayedBatches == Int(head))
    replayed.close()

    let stores = try ["store", "replayed"].map { try Ledger.open(at: directory.path + "/" + $0, model: model) }
    defer { for store in stores { store.close() } }
    for batch in 1...(head + 1) {
      #expect(
        try MigrationTests.snapshot(stores[0], asOf: batch) == MigrationTests.snapshot(stores[1], asOf: batch),
        "batch \(batch)")
    }
    // The replay compares every projection with the log's, byte for byte.
    #expect(try stores[0].verify(.fullReplay).batches == Int(head + 1))
    #expect(try stores[0].verify(.keptDigest).mode == .keptDigest)
    // And the store takes writes under the new names.
    var batch = stores[0].makeBatch()
    try batch.stage(try JSONParser.parse(#"[{"name": "A", "\#(yearName)": 1999}]"#), as: "Band")
    _ = try stores[0].applySynchronously(batch)
    let value: AttributeValue = year == .string ? .string("1999") : year == .double ? .double(1999) : .integer(1999)
    #expect(try stores[0].read { try $0.object("Band", key: "A")?[yearName] } == value)
    #expect(try stores[0].verify(.fullReplay).batches == Int(head + 2))
  }

  /// A store of the history test model whose one batch stages `bands`, migrated to `model`
  /// (by a rewrite) and opened under it.
  static func rewrittenStore(bands: String, to model: Model, in directory: TemporaryDirectory) throws -> Ledger {
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(bands), as: "Band")
    _ = try ledger.applySynchronously(batch)
    ledger.close()
    #expect(try Ledger.migrate(at: path, to: model).plan.method == .rewrite)
    return try Ledger.open(at: path, model: model)
  }

  @Test func anIndexedAttributeRenamedAndRetypedIsFoundUnderItsNewNameAndValue() throws {
    let directory = try TemporaryDirectory()
    let migrated = try Self.rewrittenStore(
      bands: #"[{"name": "Japan", "formed": 1974}, {"name": "Can", "formed": 1968}]"#,
      to: try Self.rewrittenModel(year: .string, indexed: true), in: directory)
    defer { migrated.close() }
    let found = try migrated.read { view in try view.objects("Band", where: "year", equals: "1974") }
    #expect(found.map(\.key.identity) == [[.string("Japan")]])
    #expect(try migrated.verify(.fullReplay).batches == 2)
  }

  @Test(arguments: [false, true])
  func aCoercedValueEqualToTheIdentityIsWrittenAsTheReplayWritesIt(keepingOrder: Bool) throws {
    let directory = try TemporaryDirectory()
    // "1974" the name, 1974 the year: as text, the year is the identity's value.
    let migrated = try Self.rewrittenStore(
      bands: #"[{"name": "1974", "formed": 1974}, {"name": "Can", "formed": 1968}]"#,
      to: try Self.rewrittenModel(year: .string, keepingOrder: keepingOrder), in: directory)
    defer { migrated.close() }
    let year = Self.names(keepingOrder: keepingOrder).year
    #expect(try migrated.read { try $0.object("Band", key: "1974")?[year] } == .string("1974"))
    #expect(try migrated.verify(.fullReplay).batches == 2)
  }

  /// Updates that changed only a removed attribute are no change under the new model: their
  /// undo images go, as the replay writes none, and an index of that attribute goes with it.
  @Test func anUpdateThatChangedOnlyARemovedAttributeLeavesNoUndoImage() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    for json in [
      #"[{"name": "Japan", "formed": 1974}, {"name": "Can", "formed": 1968}]"#,
      #"[{"name": "Japan", "formed": 1975}]"#, #"[{"name": "Can", "formed": 1969, "members": ["Holger"]}]"#,
      #"[{"name": "Japan", "formed": 1976}]"#,
    ] {
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse(json), as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    ledger.close()
    // Indexed first, then removed: its index entries must go.
    _ = try Ledger.migrate(at: path, to: try Self.rewrittenModel(year: .int64, indexed: true))
    let before = try Ledger.open(at: path)
    let imagesBefore = try before.environment.read { try $0.entries(in: before.layout.history, prefix: []).count }
    before.close()
    let model = try Self.rewrittenModel(year: .int64, indexed: true, removing: ["year"])
    let report = try Ledger.migrate(at: path, to: model)
    #expect(report.plan.method == .rewrite)
    #expect(report.replayedBatches == 0)
    let migrated = try Ledger.open(at: path, model: model)
    defer { migrated.close() }
    // Japan's two updates go; Can's changed a link too, and stays.
    let imagesAfter = try migrated.environment.read { try $0.entries(in: migrated.layout.history, prefix: []).count }
    #expect(imagesAfter == imagesBefore - 2)
    #expect(try migrated.environment.read { try $0.entries(in: migrated.layout.indexes, prefix: []).isEmpty })
    #expect(try migrated.record(2).changes.isEmpty)
    #expect(try migrated.record(3).changes.count == 2)
    #expect(try migrated.verify(.fullReplay).batches == 6)
    #expect(try migrated.verify(.keptDigest).mode == .keptDigest)
  }

  /// The change before an update of a removed attribute alone names the payload fingerprint
  /// the object keeps: in a compacted store, the checkpoint's.
  @Test func anUpdateOfARemovedAttributeAloneAfterACompactionKeepsTheCheckpointsFingerprint() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    for json in [
      #"[{"name": "Japan", "formed": 1974}]"#, #"[{"name": "Can", "formed": 1968}]"#, #"[{"name": "Faust"}]"#,
      #"[{"name": "Japan", "formed": 1975}]"#,
    ] {
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse(json), as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    _ = try ledger.compact(keepingBatches: 2, archive: directory.path + "/archive")
    ledger.close()
    let report = try Ledger.migrate(
      at: path, to: try Self.rewrittenModel(year: .int64, removing: [Self.names(keepingOrder: false).year]))
    #expect(report.plan.method == .rewrite)
    #expect(report.replayedBatches == 0)
    let migrated = try Ledger.open(at: path)
    defer { migrated.close() }
    #expect(try migrated.record(4).changes.isEmpty)
    #expect(try migrated.verify(.fullReplay).objects == 3)
  }

  /// - Reliability: An attribute removed from a band whose undo images keep its long list of
  ///   albums as changes (their chains reset as they grow), while random batches change the
  ///   attribute alone, the list alone or both: the rewrite gives way to the replay, and the
  ///   projections equal a replay's byte for byte
  /// - Size: 6 seeds × 24 batches
  @Test(.tags(.reliability), arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func aRemovalBesideLongListsLeavesTheProjectionsAReplayBuilds(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    var albums = 0
    func stageAlbums(_ count: Int, in batch: inout ChangeBatch) throws {
      let staged = (albums..<albums + count).map { #"{"name": "album \#($0)", "band": "Japan"}"# }
      albums += count
      try batch.stage(try JSONParser.parse("[\(staged.joined(separator: ","))]"), as: "Album")
    }
    var first = ledger.makeBatch()
    try stageAlbums(70, in: &first)
    _ = try ledger.applySynchronously(first)
    for _ in 0..<24 {
      var batch = ledger.makeBatch()
      let kind = Int.random(in: 0..<4, using: &generator)
      if kind != 1 {
        let formed = Int.random(in: 1960...1990, using: &generator)
        try batch.stage(try JSONParser.parse(#"[{"name": "Japan", "formed": \#(formed)}]"#), as: "Band")
      }
      if kind == 1 || kind == 2 { try stageAlbums(Int.random(in: 1...3, using: &generator), in: &batch) }
      if kind == 3, Bool.random(using: &generator) {
        try batch.delete("Album", key: .string("album \(Int.random(in: 0..<albums, using: &generator))"))
      }
      _ = try ledger.applySynchronously(batch)
    }
    ledger.close()
    let model = try Self.rewrittenModel(year: .int64, removing: ["year"])
    let report = try Ledger.migrate(at: path, to: model)
    #expect(report.plan.method == .rewrite)
    // An update of the year alone meets an undo image that keeps the list as a change.
    #expect(report.replayedBatches > 0)
    let migrated = try Ledger.open(at: path, model: model)
    defer { migrated.close() }
    #expect(try migrated.verify(.fullReplay).batches == Int(try migrated.head))
    #expect(try migrated.verify(.keptDigest).mode == .keptDigest)
  }

  /// A band holding thousands of albums: its state lies on overflow pages, and its undo
  /// images keep the long list as changes. Both are rewritten as the replay writes them.
  /// Removing the year its updates changed leaves them to the replay: an undo image that keeps
  /// a list as a change cannot tell whether the list changed too.
  @Test(arguments: [false, true])
  func aStateWithALongLinkListIsRewrittenAsTheReplayWritesIt(removingYear: Bool) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    for round in 0..<4 {
      // Each round adds a thousand albums to the band's list and changes its year.
      let albums = (0..<1_000).map { #"{"name": "album \#(round)-\#($0)", "label": "L", "band": "Japan"}"# }
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse("[\(albums.joined(separator: ","))]"), as: "Album")
      try batch.stage(try JSONParser.parse(#"[{"name": "Japan", "formed": \#(1970 + round)}]"#), as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    // A year changed alone: its undo image keeps the list as an unchanged change.
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(#"[{"name": "Japan", "formed": 1980}]"#), as: "Band")
    _ = try ledger.applySynchronously(batch)
    ledger.close()
    let model = try Self.rewrittenModel(year: .string, keepingOrder: true, removing: removingYear ? ["founded"] : [])
    let report = try Ledger.migrate(at: path, to: model)
    #expect(report.plan.method == .rewrite)
    #expect((report.replayedBatches > 0) == removingYear)
    let migrated = try Ledger.open(at: path, model: model)
    defer { migrated.close() }
    let band = try migrated.read { try $0.object("Band", key: "Japan") }
    #expect(band?["founded"] == (removingYear ? nil : .string("1980")))
    #expect(try migrated.read { try $0.objects("Album").count } == 4_000)
    #expect(try migrated.verify(.fullReplay).batches == 6)
  }

  @Test func aValueThatCannotTakeItsNewTypeRefusesTheRewriteNamingTheBatchAndNothingIsWritten() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    // Only an undo image holds 70000 once the second batch has changed it.
    for formed in [70_000, 1974] {
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse(#"[{"name": "Japan", "formed": \#(formed)}]"#), as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    let model = try Self.rewrittenModel(year: .int16)
    #expect(try ledger.migrationPlan(to: model).method == .rewrite)
    #expect {
      try ledger.migrate(to: model)
    } throws: { error in
      guard let error = error as? LedgerError, error.code == .migrationRefused else { return false }
      return error.differences.contains {
        $0.place == "Band.formed" && $0.change.contains("cannot become int16") && $0.change.contains("(batch 1)")
      }
    }
    #expect(try ledger.head == 2)
    #expect(ledger.versions.current == 1)
    #expect(try ledger.read { try $0.object("Band", key: "Japan")?["formed"] } == .integer(1974))
    #expect(try ledger.verify(.fullReplay).batches == 2)
    ledger.close()
  }

  /// Text to numbers can make two values one ("1.5" and "1.50"): each value is checked as it is
  /// rewritten, and one that does not come back as it was leaves the migration to the replay,
  /// which folds the update between them away.
  @Test(arguments: [(["1.5", "2.5"], false), (["1.5", "1.50"], true)] as [([String], Bool)])
  func aTypeChangeThatMakesTwoStoredValuesOneIsReplayed(labels: [String], replays: Bool) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let ledger = try Ledger.open(at: path, model: HistoryPropertyTests.model)
    for label in labels {
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse(#"[{"name": "Tin Drum", "label": "\#(label)"}]"#), as: "Album")
      _ = try ledger.applySynchronously(batch)
    }
    ledger.close()
    let model = try HistoryPropertyTests.model(label: .double)
    let report = try Ledger.migrate(at: path, to: model)
    #expect(report.plan.method == .rewrite)
    #expect((report.replayedBatches > 0) == replays)
    let migrated = try Ledger.open(at: path, model: model)
    defer { migrated.close() }
    let label = try migrated.read { try $0.object("Album", key: "Tin Drum")?["label"] }
    #expect(label == .double(Double(labels[1]) ?? 0))
    #expect(try migrated.verify(.fullReplay).batches == 3)
    // Folded away by the replay: "1.5" to "1.50" is no change as numbers.
    #expect(try migrated.record(2).changes.isEmpty == replays)
  }

}
