import Foundation
import JSONLedgerSupport
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Every write runs through one engine (`Ledger.perform(_:)`): each reserves room in the map
/// before its transaction, checks what every write checks, and is announced the same way.
@Suite("The write engine")
struct WriteEngineTests {
  static let discs = 4_000

  /// A store of `discs` discs written in two batches (created, then every label changed),
  /// closed: its `data.mdb` is copied for each write tried.
  static func template(_ directory: TemporaryDirectory) throws -> String {
    let path = directory.path + "/template"
    let ledger = try Ledger.open(at: path, model: LifecycleEdgeTests.model)
    defer { ledger.close() }
    for round in 1...2 {
      var batch = ledger.makeBatch()
      let discs: [JSONValue] = (0..<discs).map { index in
        [
          "name": .string("disc \(index)"), "label": .string("label \(round) " + String(repeating: "x", count: 60)),
          "year": .string("\(1970 + index % 50)"),
        ]
      }
      try batch.stage(.array(discs), as: "Disc")
      _ = try ledger.applySynchronously(batch)
    }
    return path
  }

  /// The template's copy at `name`, opened with a map no larger than its data: a write that
  /// reserves no room fills it and runs again.
  static func tightCopy(of template: String, _ directory: TemporaryDirectory, _ name: String) throws -> Ledger {
    let path = directory.path + "/" + name
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: template + "/data.mdb", toPath: path + "/data.mdb")
    var options = Ledger.Options()
    options.initialMapSize = 1 << 16
    return try Ledger.open(at: path, model: LifecycleEdgeTests.model, options: options)
  }

  /// The times `write` ran a transaction again because the map was full.
  static func runsAgain(_ ledger: Ledger, _ write: () throws -> Void) throws -> Int {
    let before = try ledger.environment.writesRunAgain
    try write()
    return try ledger.environment.writesRunAgain - before
  }

  @Test func everyKindOfWriteReservesItsRoomAndNoneRunsAgainOnAFullMap() throws {
    let directory = try TemporaryDirectory()
    let template = try Self.template(directory)
    let changeAll: (Ledger) throws -> Void = { ledger in
      var batch = ledger.makeBatch()
      try batch.stage(
        .array((0..<Self.discs).map { ["name": .string("disc \($0)"), "label": .string("label 3")] }), as: "Disc")
      _ = try ledger.applySynchronously(batch)
    }
    let apply = try Self.tightCopy(of: template, directory, "apply")
    #expect(try Self.runsAgain(apply) { try changeAll(apply) } == 0)
    let rewind = try Self.tightCopy(of: template, directory, "rewind")
    #expect(try Self.runsAgain(rewind) { _ = try rewind.rewind(to: 1) } == 0)
    #expect(try LifecycleEdgeTests.values(rewind, "label")["disc 7"]?.hasPrefix("label 1") == true)
    let revert = try Self.tightCopy(of: template, directory, "revert")
    #expect(try Self.runsAgain(revert) { _ = try revert.revert(2) } == 0)
    let compact = try Self.tightCopy(of: template, directory, "compact")
    let compacting = { _ = try compact.compact(keepingBatches: 1, archive: nil, discarding: true) }
    #expect(try Self.runsAgain(compact, compacting) == 0)
    // A replica takes the leader's third record as its bytes.
    let leader = try Self.tightCopy(of: template, directory, "leader")
    try changeAll(leader)
    let replica = try Self.tightCopy(of: template, directory, "replica")
    let bytes = try AppendPathTests.storedBytes(leader, 3)
    #expect(try Self.runsAgain(replica) { _ = try replica.appendEncoded([bytes]) } == 0)
    #expect(try replica.head == 3)
  }

  @Test func anEmptyIdempotencyKeyIsRefusedByEveryImportAndNothingIsWritten() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    let file = try directory.write("discs.json", #"[{"name": "a", "label": "b"}]"#)
    #expect(throws: LedgerError.self) { try ledger.importFile(at: file, entity: "Disc", idempotencyKey: "") }
    #expect(throws: LedgerError.self) {
      try ledger.importFile(at: file, entity: "Disc", chunkSize: 10, idempotencyKey: "")
    }
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(#"[{"name": "a"}]"#), as: "Disc")
    await #expect(throws: LedgerError.self) { try await ledger.apply(batch, idempotencyKey: "") }
    #expect(try ledger.head == 0)
  }

  /// Local values given with a batch are kept in its transaction: with a record, with a batch
  /// that changes nothing or was applied already, and not with one that fails.
  @Test func localValuesGivenWithABatchAreKeptInItsTransactionUnlessItFails() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    func batch(_ json: String) throws -> ChangeBatch {
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse(json), as: "Disc")
      return batch
    }
    let written = try ledger.applySynchronously(
      try batch(#"[{"name": "a"}]"#), idempotencyKey: "run 1", keeping: [("since", Array("1".utf8))])
    #expect(written.wroteRecord)
    #expect(try ledger.localValue(forKey: "since") == Array("1".utf8))
    // Nothing changed, and already applied: still kept (and a nil value removes one).
    let unchanged = try await ledger.apply(try batch(#"[{"name": "a"}]"#), keeping: [("since", Array("2".utf8))])
    #expect(!unchanged.wroteRecord)
    #expect(try ledger.localValue(forKey: "since") == Array("2".utf8))
    let again = try ledger.applySynchronously(
      try batch(#"[{"name": "a"}]"#), idempotencyKey: "run 1", keeping: [("since", nil), ("etag", [1])])
    #expect(again.wasAlreadyApplied)
    #expect(try ledger.localValue(forKey: "since") == nil)
    #expect(try ledger.localValue(forKey: "etag") == [1])
    // A batch that fails keeps none of them.
    #expect(throws: LedgerError.self) {
      try ledger.applySynchronously(
        try batch(#"[{"name": "b"}]"#), expectedHead: 7, keeping: [("etag", [2]), ("since", [3])])
    }
    #expect(try ledger.localValue(forKey: "etag") == [1])
    #expect(try ledger.localValue(forKey: "since") == nil)
    #expect(throws: LedgerError.self) { try ledger.applySynchronously(try batch("[]"), keeping: [("", [1])]) }
    #expect(try ledger.head == 1)
  }

  @Test func aWriteThatHoldsTheWriterThreadRunsItsTransactionThereAndOthersWaitForIt() async throws {
    // Compact holds the writer thread across its reads and its one write (its checkpoint);
    // applies queued meanwhile follow it, each whole.
    let directory = try TemporaryDirectory()
    let ledger = try LifecycleEdgeTests.store(directory.storePath, batches: 6)
    async let compacted = runBlocking("compact") {
      try ledger.compact(keepingBatches: 2, archive: nil, discarding: true)
    }
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(#"[{"name": "late", "label": "x"}]"#), as: "Disc")
    let applied = try await ledger.apply(batch)
    let report = try await compacted
    #expect(report.firstBatch == 4 || report.firstBatch == 5)
    #expect(applied.batchID == 7)
    #expect(try ledger.head == 7)
    _ = try await ledger.verify()
  }
}
