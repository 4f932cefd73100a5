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

  @Test func upgradeReplaysTheLogAndKeepsEveryBatchAndEveryPointInTime() throws {
    let directory = try TemporaryDirectory()
    let store = try format3Store(in: directory)
    let upgrade = try CommandRunner.run(["upgrade", store])
    #expect(upgrade.status == 0, "\(upgrade.error)")
    #expect(upgrade.output.contains("from format 3 to 4: 6 batches replayed"), "\(upgrade.output)")
    #expect(FileManager.default.fileExists(atPath: store + ".format3/data.mdb"))
    let verify = try CommandRunner.run(["verify", store])
    #expect(verify.status == 0, "\(verify.error)")
    #expect(verify.output.contains("6 batches replayed, 13 objects"), "\(verify.output)")
    for batch in 1...6 {
      let export = try CommandRunner.run(["export", store, "--as-of", "\(batch)", "--relationships", "ids"])
      #expect(export.status == 0, "\(export.error)")
      let before = try String(
        contentsOf: format3Fixture.appendingPathComponent("export-\(batch).json"), encoding: .utf8)
      #expect(try normalized(export.output) == normalized(before), "as of batch \(batch)")
    }
    let log = try CommandRunner.run(["log", store, "--json"])
    let before = try String(contentsOf: format3Fixture.appendingPathComponent("log.json"), encoding: .utf8)
    // The same log, less what 0.5 did not print: the model version of each batch (all 1).
    let versionLines = log.output.split(separator: "\n", omittingEmptySubsequences: false).filter {
      $0.contains("\"modelVersion\"")
    }
    #expect(versionLines.count == 6 && versionLines.allSatisfy { $0.contains("\"modelVersion\": 1") })
    #expect(
      log.output.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("\"modelVersion\"") }
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
    #expect(again.output.contains("already format 4"), "\(again.output)")
  }
}
