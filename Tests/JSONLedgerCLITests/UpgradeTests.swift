import Foundation
import JSONLedgerTestSupport
import Testing

/// A store of format 3, made by jsonledger 0.5.0 (the previous format) with imports, an
/// idempotency key, a deletion, a forced revert and a rewind, and what that version
/// exported as of each of its six batches.
private let format3Fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().appendingPathComponent("JSONLedgerTests/Fixtures/Format3Store")

@Suite("jsonledger upgrade")
struct UpgradeTests {
  /// A copy of the format-3 fixture store.
  private func format3Store(in directory: TemporaryDirectory) throws -> String {
    let store = directory.path + "/store"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: format3Fixture.appendingPathComponent("data.mdb").path, toPath: store + "/data.mdb")
    return store
  }

  /// A JSON document with each top-level array sorted: exports list objects in the order
  /// each store first stored them.
  private func normalized(_ text: String) throws -> [String: [String]] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    return try object.mapValues { value in
      try (value as? [Any] ?? []).map {
        String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
      }.sorted()
    }
  }

  @Test func aFormat3StoreIsRefusedWithTheWayOn() throws {
    let directory = try TemporaryDirectory()
    let store = try format3Store(in: directory)
    let result = try CommandRunner.run(["export", store])
    #expect(result.status != 0)
    #expect(result.error.contains("format version 3"), "\(result.error)")
    #expect(result.error.contains("jsonledger upgrade \(store)"), "\(result.error)")
  }

  /// - Reliability: A format-3 store made by jsonledger 0.5 (imports, an idempotency key, a deletion, a forced
  ///   revert, a rewind) upgraded: it verifies, its log reads the same, and its export as of each
  ///   of its 6 batches equals 0.5's
  /// - Size: 6 batches
  @Test(.tags(.reliability)) func upgradeReplaysTheLogAndKeepsEveryBatchAndEveryPointInTime() throws {
    let directory = try TemporaryDirectory()
    let store = try format3Store(in: directory)
    let upgrade = try CommandRunner.run(["upgrade", store])
    #expect(upgrade.status == 0, "\(upgrade.error)")
    #expect(upgrade.output.contains("from format 3 to 6: 6 batches replayed"), "\(upgrade.output)")
    #expect(FileManager.default.fileExists(atPath: store + ".format3/data.mdb"))
    let verify = try CommandRunner.run(["verify", store])
    #expect(verify.status == 0, "\(verify.error)")
    #expect(verify.output.contains("6 batches checked, 13 objects"), "\(verify.output)")
    for batch in 1...6 {
      let export = try CommandRunner.run(["export", store, "--as-of", "\(batch)", "--relationships", "ids"])
      #expect(export.status == 0, "\(export.error)")
      let before = try String(
        contentsOf: format3Fixture.appendingPathComponent("export-\(batch).json"), encoding: .utf8)
      #expect(try normalized(export.output) == normalized(before), "as of batch \(batch)")
    }
    let log = try CommandRunner.run(["log", store, "--json"])
    let before = try String(contentsOf: format3Fixture.appendingPathComponent("log.json"), encoding: .utf8)
    // The same log, less what 0.5 did not print: the model version of each batch (all 1) and
    // which revert undid a batch.
    let versionLines = log.output.split(separator: "\n", omittingEmptySubsequences: false).filter {
      $0.contains("\"modelVersion\"")
    }
    #expect(versionLines.count == 6 && versionLines.allSatisfy { $0.contains("\"modelVersion\": 1") })
    #expect(
      log.output.split(separator: "\n", omittingEmptySubsequences: false).filter {
        !$0.contains("\"modelVersion\"") && !$0.contains("\"revertedBy\"")
      }
      .joined(separator: "\n") == before)
    // Writing goes on from where the log was.
    let payload = try directory.write("more.json", #"{"bands": [{"name": "Gang", "formed": 1977}]}"#)
    let more = try CommandRunner.run(["import", store, payload, "--json"])
    #expect(more.output.contains("\"batch\": 7"), "\(more.output) \(more.error)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }

  @Test func upgradingACurrentStoreChangesNothing() throws {
    let directory = try TemporaryDirectory()
    let store = try format3Store(in: directory)
    _ = try CommandRunner.run(["upgrade", store])
    let again = try CommandRunner.run(["upgrade", store])
    #expect(again.status == 0, "\(again.error)")
    #expect(again.output.contains("already format 6"), "\(again.output)")
  }
}

/// Stores of formats 4 and 5, made by jsonledger 0.10.0 (the last release of format 4): seven
/// batches with idempotency keys, a revert (3 of 2), a revert of that revert (4 of 3) and a
/// revert of an import (6 of 5); the format-5 store then migrated its model (8), imported the
/// new attribute (9) and reverted that (10). Beside each: what 0.10.0 exported as of every
/// batch, and its `log --json`. `Format4Store/README.md` has the commands.
private let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().appendingPathComponent("JSONLedgerTests/Fixtures")

@Suite("jsonledger upgrade: formats 4 and 5 in place")
struct InPlaceUpgradeTests {
  private func copy(_ fixture: String, in directory: TemporaryDirectory) throws -> String {
    let store = directory.path + "/store"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: fixtures.appendingPathComponent("\(fixture)/data.mdb").path, toPath: store + "/data.mdb")
    return store
  }

  private func fixtureText(_ fixture: String, _ name: String) throws -> String {
    try String(contentsOf: fixtures.appendingPathComponent("\(fixture)/\(name)"), encoding: .utf8)
  }

  @Test(arguments: [("Format4Store", 4, 7), ("Format5Store", 5, 10)])
  func anOlderFormatIsRefusedWithNothingWrittenThenUpgradedInPlaceWithEveryBatchAndPointInTime(
    fixture: String, format: Int, head: Int
  ) throws {
    let directory = try TemporaryDirectory()
    let store = try copy(fixture, in: directory)
    let untouched = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
    let refused = try CommandRunner.run(["export", store])
    #expect(refused.status != 0)
    #expect(refused.error.contains("format version \(format)"), "\(refused.error)")
    #expect(refused.error.contains("jsonledger upgrade \(store)"), "\(refused.error)")
    // Nothing written: the release that made the store still opens it as it was.
    #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == untouched)

    let upgrade = try CommandRunner.run(["upgrade", store])
    #expect(upgrade.status == 0, "\(upgrade.error)")
    #expect(
      upgrade.output.contains("from format \(format) to 6 in place: \(head) batches read"), "\(upgrade.output)")
    #expect(!FileManager.default.fileExists(atPath: store + ".format\(format)"))
    let verify = try CommandRunner.run(["verify", store])
    #expect(verify.status == 0, "\(verify.error)")
    // The log is the same, record for record: ids, times, kinds, keys and model versions; it
    // now also says which revert undid a batch, which the release that made it did not print.
    let log = try CommandRunner.run(["log", store, "--json"]).output
    let printedBefore = log.split(separator: "\n", omittingEmptySubsequences: false).filter {
      !$0.contains("\"revertedBy\"")
    }
    #expect(printedBefore.joined(separator: "\n") == (try fixtureText(fixture, "log.json")))
    #expect(log.contains("\"revertedBy\": 4") && log.contains("\"revertedBy\": 6"), "\(log)")
    for batch in 1...head {
      let export = try CommandRunner.run(["export", store, "--as-of", "\(batch)", "--relationships", "ids"])
      #expect(export.status == 0, "\(export.error)")
      #expect(export.output == (try fixtureText(fixture, "export-\(batch).json")), "as of batch \(batch)")
    }
    // The reverts the log holds, found by the new projection: 3 undid 2 and 4 undid 3, so 2
    // stands again and 3 is the reverted one; 6 undid 5.
    for (batch, by) in [(3, 4), (5, 6)] {
      let again = try CommandRunner.run(["revert", store, "\(batch)"])
      #expect(again.status != 0)
      #expect(again.error.contains("batch \(batch) was already reverted by batch \(by)"), "\(again.error)")
    }
    let second = try CommandRunner.run(["revert", store, "2", "--force", "--json"])
    #expect(second.status == 0, "\(second.error)")
    #expect(try CommandRunner.run(["revert", store, "2"]).error.contains("already reverted by batch \(head + 1)"))
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    let again = try CommandRunner.run(["upgrade", store])
    #expect(again.output.contains("already format 6"), "\(again.output)")
    // Its states, numbered by position as every earlier store's were, take a new attribute
    // that sorts first without a rewrite, and still verify.
    let model = try fixtureText(fixture, format == 5 ? "model-2.json" : "../bands-model.json")
    var definition = try #require(try JSONSerialization.jsonObject(with: Data(model.utf8)) as? [String: Any])
    var entities = try #require(definition["entities"] as? [String: Any])
    var album = try #require(entities["Album"] as? [String: Any])
    var attributes = try #require(album["attributes"] as? [String: Any])
    attributes["aaa"] = "string"
    album["attributes"] = attributes
    entities["Album"] = album
    definition["entities"] = entities
    let widened = try directory.write(
      "model-next.json", String(decoding: try JSONSerialization.data(withJSONObject: definition), as: UTF8.self))
    let migrated = try CommandRunner.run(["migrate", store, "--model", widened])
    #expect(migrated.status == 0, "\(migrated.error)")
    #expect(migrated.output.contains("in place"), "\(migrated.output)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }
}
