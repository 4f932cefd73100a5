import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Testing

/// Every version of the Brave iOS app's Core Data model (Model, Model2 … Model27).
private let braveModels = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .appendingPathComponent("JSONLedgerTests/Fixtures/RealModels/Brave.xcdatamodeld")

@Suite("jsonledger migrate")
struct MigrateCLITests {
  /// A JSON value of `type`, different for each `seed`, that every later type of the same
  /// attribute in the Brave models still accepts.
  private static func value(_ type: AttributeType, _ seed: Int) -> Any {
    switch type {
    case .string: "text \(seed)"
    case .int16, .int32, .int64: seed % 100
    case .double, .float, .decimal: Double(seed % 100) + 0.5
    case .bool: seed % 2 == 0
    case .date: String(format: "2026-01-%02dT10:00:00Z", seed % 28 + 1)
    case .uuid: String(format: "00000000-0000-4000-8000-%012d", seed)
    case .url: "https://example.com/\(seed)"
    case .binary: Data("bytes \(seed)".utf8).base64EncodedString()
    case .json: ["seed": seed]
    }
  }

  /// Every attribute of `entity`, inherited ones included.
  private static func attributes(of entity: Entity, in model: Model) -> [Attribute] {
    let inherited = entity.parent.flatMap { model.entity(named: $0) }.map { attributes(of: $0, in: model) } ?? []
    return inherited + entity.attributes
  }

  /// One object of `entity` with a value for each attribute and, when `nesting`, a nested
  /// object (or a list of one) for each relationship to a concrete entity.
  private static func object(_ entity: Entity, in model: Model, seed: Int, nesting: Bool) -> [String: Any] {
    var object: [String: Any] = [:]
    for attribute in attributes(of: entity, in: model) { object[attribute.name] = value(attribute.type, seed) }
    guard nesting else { return object }
    for relationship in entity.relationships {
      guard let destination = model.entity(named: relationship.destination), !destination.isAbstract else { continue }
      let nested = Self.object(destination, in: model, seed: seed + 1, nesting: false)
      object[relationship.name] = relationship.isToMany ? [nested] : nested
    }
    return object
  }

  /// Imports two objects of each concrete entity of `model` into `store`, one batch per entity.
  private static func importData(_ model: Model, into store: String, round: Int, directory: String) throws {
    for (index, entity) in model.entities.enumerated() where !entity.isAbstract {
      let objects = (0..<2).map { object(entity, in: model, seed: round * 100 + index * 2 + $0, nesting: true) }
      let file = directory + "/\(entity.name)-\(round).json"
      try JSONSerialization.data(withJSONObject: objects).write(to: URL(fileURLWithPath: file))
      let result = try CommandRunner.run(["import", store, file, "--entity", entity.name])
      #expect(result.status == 0, "round \(round), \(entity.name): \(result.error)")
    }
  }

  /// - Reliability: The 27 versions of the Brave iOS app's Core Data model migrated one to the next through the
  ///   CLI, with imports under each: `verify` passes after each migration and each import
  /// - Size: 26 migrations
  @Test(.tags(.reliability)) func theVersionsOfARealAppsModelMigrateOneToTheNextWithImportsBetween() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let versions = ["Model"] + (2...27).map { "Model\($0)" }
    let first = braveModels.appendingPathComponent("Model.xcdatamodel").path
    #expect(try CommandRunner.run(["init", store, "--model", first]).status == 0)
    try Self.importData(try Model(contentsOf: first), into: store, round: 0, directory: directory.path)
    var methods: [String: Int] = [:]
    for (round, version) in versions.enumerated().dropFirst() {
      let path = braveModels.appendingPathComponent("\(version).xcdatamodel").path
      // Brave removed entities that hold objects along the way (TopSite in version 8).
      let migrate = try CommandRunner.run(["migrate", store, "--model", path, "--json", "--allow-removals"])
      #expect(migrate.status == 0, "\(version): \(migrate.error)")
      let report = try JSONSerialization.jsonObject(with: Data(migrate.output.utf8)) as? [String: Any] ?? [:]
      methods[report["method"] as? String ?? "?", default: 0] += 1
      #expect(report["toVersion"] as? Int == round + 1, "\(version): \(migrate.output)")
      let verify = try CommandRunner.run(["verify", store])
      #expect(verify.status == 0, "after \(version): \(verify.error)")
      // The migration record's batch reads as the batch before it, in the new model's terms.
      let batch = report["batch"] as? Int ?? 0
      let asOf = try CommandRunner.run(["export", store, "--as-of", "\(batch - 1)"])
      #expect(asOf.status == 0, "\(version): \(asOf.error)")
      #expect(try CommandRunner.run(["export", store]).output == asOf.output, "\(version)")
      try Self.importData(try Model(contentsOf: path), into: store, round: round, directory: directory.path)
      #expect(try CommandRunner.run(["verify", store]).status == 0, "after importing under \(version)")
    }
    let log = try CommandRunner.run(["log", store]).output
    #expect(log.components(separatedBy: "  migration  ").count - 1 == versions.count - 1)
    // Both ways were taken: new entities and attributes in place, removed entities by replay.
    #expect(methods["in place", default: 0] > 0 && methods["by replaying the log", default: 0] > 0, "\(methods)")
  }

  /// A JSON model file at `path`.
  private static func write(_ json: String, to path: String) throws {
    try Data(json.utf8).write(to: URL(fileURLWithPath: path))
  }

  private static let bands = """
    {"entities": {
      "Band": {"identity": "name", "attributes": {"name": "string", "formed": "string", "genre": "string"},
               "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
      "Album": {"identity": "title", "attributes": {"title": "string", "year": "string"},
                "relationships": {"band": {"to": "Band", "inverse": "albums"}}}}}
    """

  /// `genre` renamed `style`, `formed` and `year` from strings to integers (`formed` indexed).
  private static let bandsRenamed = """
    {"entities": {
      "Group": {"renamedFrom": "Band", "identity": "name",
                "attributes": {"name": "string", "formed": {"type": "int32", "indexed": true},
                               "style": {"type": "string", "renamedFrom": "genre"}},
               "relationships": {"albums": {"to": "Album", "many": true, "inverse": "group"}}},
      "Album": {"identity": "title", "attributes": {"title": "string", "year": "int32"},
                "relationships": {"group": {"to": "Group", "inverse": "albums", "renamedFrom": "band"}}}}}
    """

  /// A store of the `bands` model with two batches: Japan with two albums, then a new style
  /// for Japan and a second band.
  private static func bandsStore(in directory: TemporaryDirectory) throws -> String {
    let store = directory.path + "/store"
    try write(bands, to: directory.path + "/bands.json")
    try write(
      """
      {"bands": [{"name": "Japan", "formed": "1974", "genre": "new wave",
                  "albums": [{"title": "Tin Drum", "year": "1981"}, {"title": "Quiet Life", "year": "1979"}]}]}
      """, to: directory.path + "/first.json")
    try write(
      #"[{"name": "Japan", "genre": "art rock"}, {"name": "Talk Talk", "formed": "1981"}]"#,
      to: directory.path + "/second.json")
    #expect(try CommandRunner.run(["init", store, "--model", directory.path + "/bands.json"]).status == 0)
    #expect(try CommandRunner.run(["import", store, directory.path + "/first.json"]).status == 0)
    #expect(try CommandRunner.run(["import", store, directory.path + "/second.json", "--entity", "Band"]).status == 0)
    return store
  }

  @Test func renamesAndATypeChangeRewriteTheStatesAndHistoryReadsInTheNewTerms() throws {
    let directory = try TemporaryDirectory()
    let store = try Self.bandsStore(in: directory)
    let renamed = directory.path + "/renamed.json"
    try Self.write(Self.bandsRenamed, to: renamed)
    let dryRun = try CommandRunner.run(["migrate", store, "--model", renamed, "--dry-run"])
    #expect(dryRun.status == 0, "\(dryRun.error)")
    #expect(dryRun.output.contains("Band: renamed to Group"), "\(dryRun.output)")
    #expect(dryRun.output.contains("Group.style: renamed from genre"), "\(dryRun.output)")
    #expect(dryRun.output.contains("Album.year: type: string → int32"), "\(dryRun.output)")
    #expect(try CommandRunner.run(["log", store]).output.components(separatedBy: "\n").count == 3)
    let migrate = try CommandRunner.run(["migrate", store, "--model", renamed])
    #expect(migrate.status == 0, "\(migrate.error)")
    #expect(migrate.output.contains("by rewriting the stored states; batch 3 records it"), "\(migrate.output)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    let japan = try CommandRunner.run(["get", store, "Group", "Japan", "--as-of", "1"]).output
    #expect(japan.contains("formed: 1974") && japan.contains("style: \"new wave\""), "\(japan)")
    #expect(japan.contains("albums → \"Tin Drum\"; \"Quiet Life\""), "\(japan)")
    let show = try CommandRunner.run(["show", store, "2"]).output
    #expect(show.contains("style: \"new wave\" → \"art rock\""), "\(show)")
    #expect(show.contains("written under model version 1; shown in version 2's terms"), "\(show)")
    // The log keeps which model version each batch was written under.
    let log = try CommandRunner.run(["log", store, "--json"]).output
    let versions = (try JSONSerialization.jsonObject(with: Data(log.utf8)) as? [[String: Any]] ?? []).map {
      ($0["batch"] as? Int ?? 0, $0["modelVersion"] as? Int ?? 0)
    }
    #expect(versions.map(\.0) == [3, 2, 1] && versions.map(\.1) == [2, 1, 1], "\(versions)")
    let query = try CommandRunner.run(["export", store, "--entity", "Album", "--where", "year=1981"]).output
    // A renamed relationship keeps the backend's key.
    #expect(query.contains("\"band\": \"Japan\""), "\(query)")
    // A revert of a batch written under the old model is told in the new model's terms.
    let revert = try CommandRunner.run(["revert", store, "2"])
    #expect(revert.status == 0, "\(revert.error)")
    #expect(try CommandRunner.run(["get", store, "Group", "Japan"]).output.contains("style: \"new wave\""))
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    let migration = try CommandRunner.run(["revert", store, "3"])
    #expect(migration.status == 1 && migration.error.contains("migration"), "\(migration.error)")
    // Removing an attribute rewrites the states too.
    let removed = directory.path + "/removed.json"
    let withoutYear = Self.bandsRenamed.replacingOccurrences(of: #", "year": "int32""#, with: "")
    try Self.write(withoutYear, to: removed)
    let rewrite = try CommandRunner.run(["migrate", store, "--model", removed])
    #expect(rewrite.status == 0, "\(rewrite.error)")
    #expect(rewrite.output.contains("by rewriting the stored states"), "\(rewrite.output)")
    // Removing a relationship replays the log: the batches before the migration's record.
    let unlinked = directory.path + "/unlinked.json"
    try Self.write(
      """
      {"entities": {
        "Group": {"identity": "name", "attributes": {"name": "string", "formed": {"type": "int32", "indexed": true},
                                                     "style": "string"}},
        "Album": {"identity": "title", "attributes": {"title": "string"}}}}
      """, to: unlinked)
    let replay = try CommandRunner.run(["migrate", store, "--model", unlinked, "--allow-removals"])
    #expect(replay.status == 0, "\(replay.error)")
    #expect(replay.output.contains("by replaying the log (5 batches); batch 6 records it"), "\(replay.output)")
    #expect(try CommandRunner.run(["verify", store, "--full"]).status == 0)
  }

  @Test func aChangeThatCannotBeDerivedIsRefusedWithItsReasonsAndNothingWritten() throws {
    let directory = try TemporaryDirectory()
    let store = try Self.bandsStore(in: directory)
    let before = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
    let refused = directory.path + "/refused.json"
    // `genre` becomes a date, which "new wave" is not; `Album.band` points elsewhere.
    try Self.write(
      Self.bands.replacingOccurrences(of: #""genre": "string""#, with: #""genre": "date""#), to: refused)
    let result = try CommandRunner.run(["migrate", store, "--model", refused])
    #expect(result.status == 1)
    #expect(result.error.contains("Band.genre: \"new wave\" cannot become date"), "\(result.error)")
    #expect(result.error.contains("(batch 1)") && result.error.contains("nothing was written"), "\(result.error)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == before)
    let ordered = directory.path + "/ordered.json"
    try Self.write(
      Self.bands.replacingOccurrences(
        of: #""many": true, "inverse""#, with: #""many": true, "ordered": true, "inverse""#),
      to: ordered)
    let dryRun = try CommandRunner.run(["migrate", store, "--model", ordered, "--dry-run"])
    #expect(dryRun.status == 1)
    #expect(dryRun.output.contains("cannot migrate: Band.albums: it becomes ordered"), "\(dryRun.output)")
    let open = try CommandRunner.run(["import", store, directory.path + "/second.json", "--entity", "Band"])
    #expect(open.status == 0, "the store still opens with its own model: \(open.error)")
  }

  /// An export as comparable values: each collection's objects, with `label` called
  /// `publisher` and no `country` (the rename and the addition the crash trial migrates
  /// to), in a set.
  private static func objects(_ export: String) throws -> [String: Set<NSDictionary>] {
    let document = try JSONSerialization.jsonObject(with: Data(export.utf8)) as? [String: [[String: Any]]] ?? [:]
    return document.mapValues { objects in
      Set(
        objects.map { object in
          var renamed = object
          if let label = renamed.removeValue(forKey: "label") { renamed["publisher"] = label }
          renamed["country"] = nil
          return renamed as NSDictionary
        })
    }
  }

  /// A migrate killed at a random moment leaves the store under the old model or the new
  /// one, verifying either way, with the same objects.
  ///
  /// - Reliability: A `migrate` (a rename and an addition, by replay) killed with SIGKILL at a random moment
  ///   (100–700 ms in): the store verifies, under the old model or the new one, with the same
  ///   objects
  /// - Size: 10 trials in CI
  @Test(.tags(.reliability)) func killedMigrateLeavesTheStoreAsBeforeOrAsAfter() throws {
    let directory = try TemporaryDirectory()
    let original = directory.path + "/original"
    _ = try CommandRunner.run(["stress", original, "--batches", "40", "--objects", "400", "--durability", "noSync"])
    let lastState = try Self.objects(try CommandRunner.run(["export", original]).output)
    let renamed = directory.path + "/renamed.json"
    try Self.write(
      """
      {"entities": {
        "Band": {"identity": "name", "attributes": {"name": "string", "country": "string"},
                 "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
        "Album": {"identity": "name",
                  "attributes": {"name": "string", "publisher": {"type": "string", "renamedFrom": "label"}},
                  "relationships": {"band": {"to": "Band", "inverse": "albums"}}}}}
      """, to: renamed)
    var generator = SystemRandomNumberGenerator()
    var outcomes: [String: Int] = [:]
    for trial in 0..<max(4, CrashTests.trials / 2) {
      let store = directory.path + "/store-\(trial)"
      try FileManager.default.copyItem(atPath: original, toPath: store)
      try CommandRunner.runKilled(
        ["migrate", store, "--model", renamed], afterMilliseconds: Int.random(in: 100...700, using: &generator))
      let verify = try CommandRunner.run(["verify", store])
      #expect(verify.status == 0, "trial \(trial): \(verify.error)")
      let migrated = try CommandRunner.run(["log", store]).output.contains("migration")
      outcomes[migrated ? "after" : "before", default: 0] += 1
      let export = try CommandRunner.run(["export", store]).output
      // Renamed or not, the attribute is exported under the backend's key.
      #expect(export.contains("\"label\""), "trial \(trial)")
      #expect(try Self.objects(export) == lastState, "trial \(trial)")
      try FileManager.default.removeItem(atPath: store)
    }
    print("killed migrations:", outcomes)
  }
}
