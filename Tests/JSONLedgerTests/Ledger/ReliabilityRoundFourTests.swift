import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Regressions of the fourth reliability round (`RELIABILITY.md`) that the library alone
/// shows: resumable imports, idempotency keys across a compaction, malformed files, and
/// migrations that change nothing or rename back.
@Suite("Reliability, round four")
struct ReliabilityRoundFourTests {
  static let model = HistoryPropertyTests.model

  static func albums(_ prefix: String, _ count: Int, label: String = "L") -> String {
    "[" + (0..<count).map { #"{"name": "\#(prefix)\#($0)", "label": "\#(label)"}"# }.joined(separator: ",") + "]"
  }

  static func labels(_ ledger: Ledger) throws -> [String: String] {
    try ledger.read { view in
      Dictionary(
        uniqueKeysWithValues: try view.objects("Album").map { ($0.key.identity[0].keyText, $0.string("label") ?? "") })
    }
  }

  /// H1: a part of a chunked import is skipped on a re-run only when it is the very part
  /// applied before; a corrected file, or another chunk size, is applied, never claimed.
  ///
  /// - Reliability: A chunked import re-run with its key after the file changed, another chunk size, or a
  ///   single earlier import keyed `K#1`: parts whose bytes were applied are skipped (a part's key
  ///   is its ordinal and a digest of its bytes), the rest applied (round four, H1)
  /// - Size: 3 re-runs
  @Test(.tags(.reliability)) func aRerunOfAChunkedImportAppliesWhatItsPartsSayNotWhatTheirNumbersWere() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let first = try directory.write("first.json", Self.albums("a", 6, label: "old"))
    let parts = try ledger.importFile(at: first, entity: "Album", chunkSize: 2, idempotencyKey: "nightly")
    #expect(parts.count == 3 && parts.allSatisfy { !$0.wasAlreadyApplied })
    // The same file again: every part was applied.
    let again = try ledger.importFile(at: first, entity: "Album", chunkSize: 2, idempotencyKey: "nightly")
    #expect(again.allSatisfy { $0.wasAlreadyApplied })
    // A corrected file under the same key: its parts differ, so they are applied.
    let corrected = try directory.write("corrected.json", Self.albums("a", 6, label: "new"))
    let applied = try ledger.importFile(at: corrected, entity: "Album", chunkSize: 2, idempotencyKey: "nightly")
    #expect(applied.allSatisfy { !$0.wasAlreadyApplied })
    #expect(try Self.labels(ledger).values.allSatisfy { $0 == "new" })
    // Another chunk size: other parts, applied (and changing nothing, they write nothing).
    let resized = try ledger.importFile(at: corrected, entity: "Album", chunkSize: 4, idempotencyKey: "nightly")
    #expect(resized.allSatisfy { !$0.wasAlreadyApplied && !$0.wroteRecord })
    // A single import keyed as a part number once was does not stand for a part.
    var single = ledger.makeBatch()
    try single.stage(json: Array(Self.albums("b", 1).utf8), as: "Album")
    _ = try ledger.applySynchronously(single, idempotencyKey: "other#1")
    let other = try directory.write("other.json", Self.albums("c", 2))
    let chunked = try ledger.importFile(at: other, entity: "Album", chunkSize: 2, idempotencyKey: "other")
    #expect(chunked.allSatisfy { !$0.wasAlreadyApplied })
    #expect(try Self.labels(ledger)["c0"] == "L")
    _ = try ledger.verify()
  }

  /// H7: a retry of a batch `compact` archived is still known by its key.
  ///
  /// - Reliability: A batch with an idempotency key compacted into a checkpoint: the retry answers the archived
  ///   batch and writes nothing (H7)
  /// - Size: 1 key
  @Test(.tags(.reliability)) func anIdempotencyKeyOutlivesTheCompactionOfItsBatch() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var old = ledger.makeBatch()
    try old.stage(json: Array(Self.albums("a", 2, label: "old").utf8), as: "Album")
    let first = try ledger.applySynchronously(old, idempotencyKey: "sync-1")
    var newer = ledger.makeBatch()
    try newer.stage(json: Array(Self.albums("a", 2, label: "new").utf8), as: "Album")
    _ = try ledger.applySynchronously(newer, idempotencyKey: "sync-2")
    var third = ledger.makeBatch()
    try third.stage(json: Array(Self.albums("z", 1).utf8), as: "Album")
    _ = try ledger.applySynchronously(third)
    _ = try ledger.compact(keepingBatches: 1, archive: directory.path + "/archive")
    // The late retry of batch 1 changes nothing: it was applied (and archived).
    let retry = try ledger.applySynchronously(old, idempotencyKey: "sync-1")
    #expect(retry.wasAlreadyApplied && retry.batchID == first.batchID)
    #expect(try Self.labels(ledger)["a0"] == "new")
    // The projections rebuilt from the log (the checkpoint) know it too.
    _ = try ledger.verify()
    let restored = directory.path + "/restored"
    _ = try Ledger.restoreLog(from: directory.path + "/archive", to: restored)
    let reopened = try Ledger.open(at: restored)
    #expect(try reopened.applySynchronously(reopened.makeBatch(), idempotencyKey: "sync-2").wasAlreadyApplied)
  }

  /// H15 and H14: an empty element in a file with an entity is a syntax error with its line
  /// and column (it trapped), and one object staged in parts is one element.
  ///
  /// - Reliability: `[,]`, `[{…},,{…}]` and `{"albums": [,]}` from a file with `--entity`, whole and chunked: a
  ///   syntax error naming the place, never a trap (H15); one object with `--entity` imports in
  ///   parts (H14)
  /// - Size: 3 inputs × 2
  @Test(.tags(.reliability), arguments: ["[,]", #"[{"name": "a"},,{"name": "b"}]"#, #"{"albums": [,]}"#])
  func aCommaWhereAValueBelongsIsASyntaxErrorInEveryPath(text: String) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let file = try directory.write("bad.json", text)
    let entity: String? = text.hasPrefix("[") ? "Album" : nil
    for chunkSize in [nil, 1] as [Int?] {
      #expect {
        if let chunkSize {
          _ = try ledger.importFile(at: file, entity: entity, chunkSize: chunkSize)
        } else {
          _ = try ledger.importFile(at: file, entity: entity)
        }
      } throws: { error in
        let ledgerError = error as? LedgerError
        let syntax = ledgerError?.syntax ?? ledgerError?.cause?.syntax
        return syntax != nil && !"\(error)".contains("empty")
      }
      // Read whole, nothing is applied; in parts, the parts before the bad one are.
      if chunkSize == nil { #expect(try ledger.head == 0) }
    }
  }

  @Test func oneObjectWithAnEntityIsImportedInParts() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let file = try directory.write("one.json", #"{"name": "Tin Drum", "label": "Virgin"}"#)
    let parts = try ledger.importFile(at: file, entity: "Album", chunkSize: 5)
    #expect(parts.count == 1 && parts[0].created == 1)
  }

  /// H16: migrating to the model the store has is nothing to do.
  ///
  /// - Reliability: `migrate` to the identical model writes nothing (H16); an attribute renamed `label` →
  ///   `publisher` → `label` exports as the first version did (H18)
  /// - Size: 2 cases
  @Test(.tags(.reliability)) func migratingToTheSameModelWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let text = try String(contentsOf: Fixtures.url("bands-model.json"), encoding: .utf8)
    let model = try Model(json: JSONParser.parse(Array(text.utf8)))
    _ = try Ledger.open(at: directory.storePath, model: model).close()
    let report = try Ledger.migrate(at: directory.storePath, to: try Model(json: JSONParser.parse(Array(text.utf8))))
    #expect(report.batchID == nil && report.plan.method == .nothing)
    #expect(try Ledger.open(at: directory.storePath).head == 0)
  }

  /// H18: renamed back (`label` → `publisher` → `label`), an attribute keeps the JSON key the
  /// backend sends, `label`, read and written.
  @Test func anAttributeRenamedBackKeepsItsJSONKey() throws {
    func model(_ name: String, renamedFrom: String?) throws -> Model {
      try Model {
        Entity("Album", identity: ["name"]) {
          Attribute("name", .string)
          Attribute(name, .string, renamedFrom: renamedFrom)
        }
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try model("label", renamedFrom: nil))
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Tin Drum", "label": "Virgin"]], as: "Album")
    _ = try ledger.applySynchronously(batch)
    let v1 = try ledger.read { view in try view.exportJSON("Album") }
    ledger.close()
    _ = try Ledger.migrate(at: directory.storePath, to: try model("publisher", renamedFrom: "label"))
    let v3 = try model("label", renamedFrom: "publisher")
    _ = try Ledger.migrate(at: directory.storePath, to: v3)
    let reopened = try Ledger.open(at: directory.storePath, model: v3)
    #expect(try reopened.read { view in try view.exportJSON("Album") } == v1)
    var again = reopened.makeBatch()
    try again.stage([["name": "Tin Drum", "label": "EMI"]], as: "Album")
    #expect(again.ignoredKeys.isEmpty)
    _ = try reopened.applySynchronously(again)
    #expect(try Self.labels(reopened)["Tin Drum"] == "EMI")
  }
}
