import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// A dataset shaped like a real public API's (PokeAPI): pages in `{count, next, previous,
/// results}` envelopes; join rows with a natural field (`types[].slot`, keyed through their
/// owner) and without one (`abilities`, `stats`); references to objects outside the synced
/// set (`species`, `evolves_to`); and a second version of the backend with a handful of real
/// changes. The fixtures are in `Fixtures/RealAPI`.
@Suite("A real API's shapes: only real changes are recorded")
struct RealAPIShapeTests {
  static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/RealAPI").path

  static func model() throws -> Model { try Model(jsonFile: "\(fixtures)/model.json") }

  /// Both pages of a version staged into one batch, read inside their envelopes.
  static func pages(_ version: Int, _ ledger: Ledger, prune: Bool = false) throws -> ChangeBatch {
    var batch = ledger.makeBatch()
    for page in 1...2 {
      try batch.stage(
        fileAt: "\(fixtures)/v\(version)-page\(page).json", as: "Pokemon",
        options: StagingOptions(prune: prune, itemsAt: "results"))
    }
    return batch
  }

  /// The code of the ledger error `body` throws (nil: none).
  static func code(_ body: () throws -> Void) -> LedgerError.Code? {
    do { try body() } catch let error as LedgerError { return error.code } catch { return nil }
    return nil
  }

  static func lines(_ described: [ChangeDescription]) -> Set<String> {
    var lines: Set<String> = []
    for change in described {
      let mark = change.isPlaceholder ? " (placeholder)" : ""
      lines.insert("\(change.kind) \(change.key)\(mark)")
      for attribute in change.attributes {
        lines.insert(
          "\(change.key) \(attribute.name): \(attribute.old?.description ?? "nil") → \(attribute.new?.description ?? "nil")"
        )
      }
      for link in change.links {
        for key in link.added { lines.insert("\(change.key) \(link.relationship) + \(key)") }
        for key in link.removed { lines.insert("\(change.key) \(link.relationship) - \(key)") }
      }
    }
    return lines
  }

  @Test func anUnchangedReimportWritesNoRecord() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    let first = try ledger.applySynchronously(try Self.pages(1, ledger))
    #expect(first.batchID == 1 && first.wroteRecord)
    let again = try ledger.applySynchronously(try Self.pages(1, ledger))
    #expect(!again.wroteRecord)
    #expect(again.batchID == 1)
    #expect(again.created == 0 && again.updated == 0 && again.deleted == 0)
    #expect(try ledger.log().count == 1)
    // Staged as parsed values rather than text, the same.
    var parsed = ledger.makeBatch()
    for page in 1...2 {
      let json = try JSONParser.parse(
        try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/v1-page\(page).json")))
      try parsed.stage(json, as: "Pokemon", options: StagingOptions(itemsAt: "results"))
    }
    #expect(!(try ledger.applySynchronously(parsed)).wroteRecord)
    _ = try ledger.verify()
  }

  @Test func theEnvelopeIsKeptInTheRecord() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    _ = try ledger.applySynchronously(try Self.pages(1, ledger))
    let record = try ledger.record(1)
    let envelopes = record.metadata.envelope?.arrayValue ?? []
    #expect(envelopes.count == 2)
    #expect(envelopes.first?.objectValue?["count"] == 6)
    #expect(envelopes.first?.objectValue?["next"] == "https://api.example/pokemon?offset=3")
    #expect(envelopes.first?.objectValue?["results"] == nil)
    // The record reads back from its bytes the same.
    #expect(try RecordCoding.decode(RecordCoding.encode(record)).metadata.envelope == record.metadata.envelope)
  }

  @Test func anEnvelopeStagedWithoutItsPathIsNamedInTheError() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var batch = ledger.makeBatch()
    #expect(Self.code { try batch.stage(fileAt: "\(Self.fixtures)/v1-page1.json", as: "Pokemon") } == .envelope)
    #expect(Self.code { try batch.stage(fileAt: "\(Self.fixtures)/v1-page1.json") } == .envelope)
    do {
      try batch.stage(fileAt: "\(Self.fixtures)/v1-page1.json", as: "Pokemon")
    } catch {
      #expect(error.known == ["results"])
      #expect(error.message.contains("an array of 3 objects under \"results\""))
    }
    // A path to something that is not an array, or to nothing.
    #expect(
      Self.code {
        try batch.stage(
          fileAt: "\(Self.fixtures)/v1-page1.json", as: "Pokemon", options: StagingOptions(itemsAt: "count"))
      } == .invalidBatch)
    #expect(
      Self.code {
        try batch.stage(
          fileAt: "\(Self.fixtures)/v1-page1.json", as: "Pokemon", options: StagingOptions(itemsAt: "data.items"))
      } == .invalidBatch)
    #expect(batch.isEmpty)
  }

  /// - Reliability: A real API's two versions of two pages (nested rows without ids, references to objects
  ///   another page delivers, an envelope): an unchanged re-import writes no record; the second
  ///   version records only its real changes; a paged prune keeps referenced placeholders; export
  ///   → import restores every row
  /// - Size: 4 pages
  @Test(.tags(.reliability)) func theSecondVersionRecordsOnlyItsRealChanges() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    _ = try ledger.applySynchronously(try Self.pages(1, ledger))
    let summary = try ledger.applySynchronously(try Self.pages(2, ledger, prune: true))
    #expect(summary.wroteRecord)
    let described = try ledger.describe(try ledger.record(summary.batchID))
    let lines = Self.lines(described)
    // What the backend changed, worked out by hand from the two versions.
    let expected: Set<String> = [
      // bulbasaur: its weight, and the base stat of its second stat row.
      "updated Pokemon \"bulbasaur\"",
      "Pokemon \"bulbasaur\" weight: 69 → 70",
      "Pokemon \"bulbasaur\" stats[1].baseStat: 49 → 50",
      // charmander: its hidden ability dropped.
      "updated Pokemon \"charmander\"",
      "Pokemon \"charmander\" abilities[1].isHidden: true → nil",
      "Pokemon \"charmander\" abilities[1].slot: 3 → nil",
      "Pokemon \"charmander\" abilities[1].ability - Ability \"solar-power\"",
      // squirtle: its first type is now ice, a type the store did not know.
      "updated Pokemon \"squirtle\"",
      "Pokemon \"squirtle\" types[0].type + Type \"ice\"",
      "Pokemon \"squirtle\" types[0].type - Type \"water\"",
      "created Type \"ice\"",
      "Type \"ice\" name: nil → \"ice\"",
      "Type \"ice\" url: nil → \"https://api.example/type/15/\"",
      // eevee: new, with its rows, a new ability and three placeholders it refers to.
      "created Pokemon \"eevee\"",
      "created Ability \"run-away\"",
      "created Species \"eevee\" (placeholder)",
      "created Pokemon \"vaporeon\" (placeholder)",
      "created Pokemon \"jolteon\" (placeholder)",
      // pidgey: gone from the backend, pruned with its rows; its placeholder next form,
      // referred to by nothing else, goes with it.
      "deleted Pokemon \"pidgey\"",
      "deleted Pokemon \"pidgeotto\" (placeholder)",
    ]
    #expect(expected.isSubset(of: lines), "missing: \(expected.subtracting(lines).sorted())")
    // Nothing else is named but the fields of the objects created and deleted.
    let described2 = described.filter { $0.kind == .updated }.map { "\($0.key)" }.sorted()
    #expect(described2 == ["Pokemon \"bulbasaur\"", "Pokemon \"charmander\"", "Pokemon \"squirtle\""])
    let touched = described.map { "\($0.kind) \($0.key)" }.sorted()
    #expect(
      touched == [
        "created Ability \"run-away\"", "created Pokemon \"eevee\"", "created Pokemon \"jolteon\"",
        "created Pokemon \"vaporeon\"", "created Species \"eevee\"", "created Type \"ice\"",
        "deleted Pokemon \"pidgeotto\"", "deleted Pokemon \"pidgey\"", "updated Pokemon \"bulbasaur\"",
        "updated Pokemon \"charmander\"", "updated Pokemon \"squirtle\"",
      ])
    #expect(lines.contains("Pokemon \"pidgey\" types[1].slot: 2 → nil"))
    #expect(lines.contains("Pokemon \"eevee\" abilities[0].ability + Ability \"run-away\""))
    // Again: nothing.
    #expect(!(try ledger.applySynchronously(try Self.pages(2, ledger, prune: true))).wroteRecord)
    _ = try ledger.verify()
  }

  /// A page of a description is the same slice of the whole one, an object's owned rows
  /// told with it on its page: the console describes only the 50 changes it shows.
  @Test func aPageOfDescribedChangesIsThatSliceOfTheWhole() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    for (version, prune) in [(1, false), (2, true)] {
      let summary = try ledger.applySynchronously(try Self.pages(version, ledger, prune: prune))
      let record = try ledger.record(summary.batchID)
      let whole = try ledger.describe(record)
      for size in [1, 2, 7] {
        var pages: [ChangeDescription] = []
        var offset = 0
        while true {
          let page = try ledger.describe(
            record.changes, from: record.batchID - 1, to: record.batchID,
            page: ChangePage.Request(offset: offset, limit: size))
          #expect(page.counts.reduce(0) { $0 + $1.count } == page.matching)
          // The batch's page, read from its record's outline, is the same page.
          let batchPage = try ledger.describe(
            batch: record.batchID, page: ChangePage.Request(offset: offset, limit: size))
          #expect(batchPage.changes == page)
          if page.changes.isEmpty && offset >= page.matching { break }
          pages += page.changes
          offset += size
        }
        #expect(pages == whole, "pages of \(size), version \(version)")
      }
      // Picked by entity and kind: the same objects as the whole, filtered.
      for kind in [ObjectChange.Kind.created, .updated, .deleted] {
        let picked = try ledger.describe(
          record.changes, from: record.batchID - 1, to: record.batchID,
          page: ChangePage.Request(entity: "Pokemon", kind: kind))
        #expect(picked.changes == whole.filter { $0.key.entity == "Pokemon" && $0.kind == kind })
        let batchPage = try ledger.describe(
          batch: record.batchID, page: ChangePage.Request(entity: "Pokemon", kind: kind))
        #expect(batchPage.changes == picked)
      }
    }
  }

  @Test func aPagedPruneKeepsThePlaceholdersStillReferredTo() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    _ = try ledger.applySynchronously(try Self.pages(1, ledger))
    let placeholdersBefore = try ledger.read { view in
      try view.objects("Pokemon").filter(\.isPlaceholder).map(\.key.description).sorted()
    }
    #expect(placeholdersBefore.count == 6)
    let summary = try ledger.applySynchronously(try Self.pages(2, ledger, prune: true))
    // Five of the six are still referred to (pidgey's pidgeotto went with it), and the two
    // eevee refers to are new.
    #expect(summary.placeholdersKept == 7)
    let (real, placeholders, evolves) = try ledger.read { view in
      let all = try view.objects("Pokemon")
      let evolves = try view.object("Pokemon", key: "bulbasaur")?.relationships["evolvesTo"]?.count
      return (
        all.filter { !$0.isPlaceholder }.map(\.key.identity[0].keyText).sorted(),
        all.filter(\.isPlaceholder).map(\.key.identity[0].keyText).sorted(), evolves
      )
    }
    #expect(real == ["bulbasaur", "charmander", "eevee", "jigglypuff", "pikachu", "squirtle"])
    #expect(placeholders == ["charmeleon", "ivysaur", "jolteon", "raichu", "vaporeon", "wartortle", "wigglytuff"])
    #expect(evolves == 1)
    // An import of a placeholder's own entity delivers it.
    var delivery = ledger.makeBatch()
    try delivery.stage([["name": "ivysaur", "id": 2, "weight": 130]], as: "Pokemon")
    let delivered = try ledger.applySynchronously(delivery)
    let described = try ledger.describe(try ledger.record(delivered.batchID))
    #expect(described.first?.deliversPlaceholder == true)
    #expect(try ledger.read { view in try view.object("Pokemon", key: "ivysaur")?.isPlaceholder } == false)
    // Reverting the delivery makes it a placeholder again.
    _ = try ledger.revert(delivered.batchID)
    #expect(try ledger.read { view in try view.object("Pokemon", key: "ivysaur")?.isPlaceholder } == true)
    _ = try ledger.verify()
  }

  @Test(arguments: [RelationshipExport.none, .ids, .nested(depth: 2)])
  func anExportImportsIntoANewStoreAndExportsTheSame(_ mode: RelationshipExport) throws {
    let model = try Self.model()
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    _ = try ledger.applySynchronously(try Self.pages(1, ledger))
    _ = try ledger.applySynchronously(try Self.pages(2, ledger, prune: true))
    let writer = JSONWriter(options: [.sortedKeys])
    let options = ExportOptions(relationships: mode)
    let first = try ledger.read { view in try writer.bytes(from: view.exportDocument(options: options)) }
    // Owned rows are inline, never `{}`; placeholders are not exported.
    #expect(!String(decoding: first, as: UTF8.self).contains("{}"))
    #expect(!String(decoding: first, as: UTF8.self).contains("\"name\":\"vaporeon\""))
    let copy = try TemporaryDirectory()
    let (restored, second) = try ExportRoundTripTests.exportedAgain(first, model: model, options: options, into: copy)
    #expect(String(decoding: second, as: UTF8.self) == String(decoding: first, as: UTF8.self))
    // The streamed export writes the same text.
    var streamed: [UInt8] = []
    try restored.read { view in try view.writeJSON(nil, options: options, writer: writer) { streamed += $0 } }
    #expect(streamed == second)
    // Importing the export again changes nothing.
    var again = restored.makeBatch()
    try again.stageDocument(json: second)
    #expect(!(try restored.applySynchronously(again)).wroteRecord)
  }

  @Test func aRevertOfTheSecondVersionNamesOnlyItsChangesAndConflictsWithNothing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    _ = try ledger.applySynchronously(try Self.pages(1, ledger))
    _ = try ledger.applySynchronously(try Self.pages(2, ledger, prune: true))
    // A nightly sync of the unchanged backend between them writes nothing to conflict with.
    _ = try ledger.applySynchronously(try Self.pages(2, ledger, prune: true))
    let result = try ledger.revert(2)
    #expect(result.overridden.isEmpty)
    // Back to version 1, exactly.
    let writer = JSONWriter(options: [.sortedKeys])
    let reverted = try ledger.read { view in try writer.bytes(from: view.exportDocument()) }
    let asOfOne = try ledger.read(asOf: 1) { view in try writer.bytes(from: view.exportDocument()) }
    #expect(reverted == asOfOne)
    let blame = try ledger.blame("Pokemon", key: "bulbasaur")
    #expect(blame.first { $0.field == "weight" }?.batchID == 3)
    #expect(blame.first { $0.field == "name" }?.batchID == 1)
    _ = try ledger.verify()
  }
}
