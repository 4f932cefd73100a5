import Foundation
import JSONLedgerTestSupport
import LMDB
import Testing

@testable import JSONLedger

@Suite("Verify by the projections' kept digest")
struct VerifyTests {
  /// The digest the store keeps, and the one its projections sum to now.
  static func digests(_ ledger: Ledger) throws -> (kept: ProjectionDigest.Kept?, computed: ProjectionDigest) {
    try ledger.environment.read { txn in
      (try ProjectionDigest.Kept.read(txn, ledger.layout), try ProjectionDigest.computed(txn, ledger.layout).digest)
    }
  }

  /// Checks that the kept digest is the projections' own, taken at the store's head.
  static func expectKeptDigestHolds(_ ledger: Ledger, _ comment: Comment? = nil) throws {
    let (kept, computed) = try digests(ledger)
    #expect(kept?.head == (try ledger.head), comment)
    #expect(kept?.digest == computed, comment)
  }

  /// Random batches (creations, updates, deletions, prunes), reverts, idempotency keys and
  /// indexed attributes: after each, the kept digest is the projections', and a verify by it
  /// agrees with a full replay.
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func everyWriteKeepsTheDigestOfTheProjections(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    for index in 0..<16 {
      switch index {
      case 6: _ = try ledger.revert(3, force: true)
      case 11: _ = try ledger.revert(try ledger.head, force: true)
      default:
        let batch = try HistoryPropertyTests.randomBatch(ledger, using: &generator)
        _ = try ledger.applySynchronously(batch, idempotencyKey: index.isMultiple(of: 3) ? "key \(index)" : nil)
      }
      try Self.expectKeptDigestHolds(ledger, "after batch \(index + 1)")
    }
    let report = try ledger.verify()
    #expect(report.mode == .keptDigest)
    let full = try ledger.verify(.fullReplay)
    #expect(full.mode == .fullReplay)
    #expect(full.batches == report.batches && full.objects == report.objects)
    #expect(full.entriesCompared == report.entriesCompared)
  }

  @Test func indexEntriesAreCountedAsTheyComeAndGo() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try IndexTests.model())
    var one = ledger.makeBatch()
    try one.stage([["name": "b", "label": "Virgin", "year": 1981], ["name": "a", "label": "Virgin"]], as: "Album")
    _ = try ledger.applySynchronously(one)
    var two = ledger.makeBatch()
    try two.stage([["name": "b", "label": nil], ["name": "c", "label": "EMI"]], as: "Album")
    try two.delete("Album", key: "a")
    _ = try ledger.applySynchronously(two)
    try Self.expectKeptDigestHolds(ledger)
    #expect(try ledger.verify().mode == .keptDigest)
  }

  /// A store no digest-keeping version wrote (or one an older version wrote to since) is
  /// replayed; the replay's digest is kept, and the next verify reads the store once.
  @Test func aStoreWithoutADigestIsReplayedOnceAndKeepsTheDigestItProved() throws {
    let directory = try TemporaryDirectory()
    let ledger = try ReliabilityTests().filledLedger(directory)
    try ledger.environment.write { txn in _ = try txn.delete(MetaKey.projectionDigest, in: ledger.layout.meta) }
    // A write without a digest to carry on from keeps none.
    _ = try ReliabilityTests().filledLedger(directory, batches: 1)
    #expect(try Self.digests(ledger).kept == nil)
    ledger.close()
    // Open read-only, verify replays and writes nothing.
    var options = Ledger.Options()
    options.readOnly = true
    let readOnly = try Ledger.open(at: directory.storePath, options: options)
    #expect(try readOnly.verify().mode == .fullReplay)
    #expect(try Self.digests(readOnly).kept == nil)
    readOnly.close()
    let reopened = try Ledger.open(at: directory.storePath)
    #expect(try reopened.verify().mode == .fullReplay)
    try Self.expectKeptDigestHolds(reopened)
    #expect(try reopened.verify().mode == .keptDigest)
  }

  /// A digest kept at another head (an older version appended a batch without updating it)
  /// is not trusted, nor carried on by the next write.
  @Test func aDigestLeftBehindByAnOlderWriterIsNotTrusted() throws {
    let directory = try TemporaryDirectory()
    let ledger = try ReliabilityTests().filledLedger(directory)
    try ledger.environment.write { txn in
      var kept = try #require(try ProjectionDigest.Kept.read(txn, ledger.layout))
      kept.head -= 1
      try kept.write(txn, ledger.layout)
    }
    var batch = ledger.makeBatch()
    try batch.stage([["name": "one more", "label": "EMI", "band": "Japan"]], as: "Album")
    _ = try ledger.applySynchronously(batch)
    #expect(try Self.digests(ledger).kept == nil)
    #expect(try ledger.verify().mode == .fullReplay)
    try Self.expectKeptDigestHolds(ledger)
  }

  /// Compact, a migration in place, one by rewriting the stored states and one by replay all
  /// leave the digest the projections'.
  @Test func compactAndMigrationsKeepTheDigest() throws {
    let directory = try TemporaryDirectory()
    let (ledger, _) = try CompactTests.filledStore(directory.storePath, seed: 7)
    _ = try ledger.compact(keepingBatches: 4, archive: directory.path + "/archive")
    try Self.expectKeptDigestHolds(ledger, "after compact")
    // A new indexed attribute: a migration in place, which renumbers and rebuilds `indexes`.
    let text = JSONWriter().string(from: HistoryPropertyTests.model.jsonValue)
    let edited = text.replacingOccurrences(of: #""label":"string""#, with: #""label":"string","rating":"int32""#)
      .replacingOccurrences(of: #""name":"string""#, with: #""name":{"type":"string","indexed":true}"#)
    #expect(edited.contains("rating") && edited.contains("indexed"), "\(text)")
    let added = try Model(json: JSONParser.parse(edited))
    #expect(try ledger.migrate(to: added).replayedBatches == 0)
    ledger.close()
    let migrated = try Ledger.open(at: directory.storePath)
    try Self.expectKeptDigestHolds(migrated, "after a migration in place")
    migrated.close()
    // Renames, a type change and a removal: a migration by rewriting the stored states, and
    // the same by replaying the log in a copy.
    try FileManager.default.copyItem(atPath: directory.storePath, toPath: directory.path + "/replayed")
    for (path, method) in [
      (directory.storePath, MigrationPlan.Method.rewrite), (directory.path + "/replayed", .replay),
    ] {
      let store = try Ledger.open(at: path)
      var plan = try store.migrationPlan(to: try MigrationTests.renamedModel())
      #expect(plan.method == .rewrite)
      plan.method = method
      #expect(try (store.migrate(following: plan, allowingRemovals: true).replayedBatches > 0) == (method == .replay))
      store.close()
      let reopened = try Ledger.open(at: path)
      try Self.expectKeptDigestHolds(reopened, "after a migration \(method.rawValue)")
      #expect(try reopened.verify().mode == .keptDigest)
      reopened.close()
    }
  }

  /// A damaged digest beside sound projections: a full verify finds them equal to the log and
  /// keeps the digest it proved in its place.
  @Test func aFullVerifyReplacesADamagedDigest() throws {
    let directory = try TemporaryDirectory()
    let ledger = try ReliabilityTests().filledLedger(directory)
    try ledger.environment.write { txn in
      var bytes = try #require(try txn.value(forKey: MetaKey.projectionDigest, in: ledger.layout.meta))
      bytes[bytes.count - 1] ^= 1
      try txn.put(bytes, forKey: MetaKey.projectionDigest, in: ledger.layout.meta)
    }
    #expect(try ledger.verify(.fullReplay).mode == .fullReplay)
    try Self.expectKeptDigestHolds(ledger)
    #expect(try ledger.verify().mode == .keptDigest)
  }

  /// The digest finds a change to any projection; the replay it falls back on names it.
  @Test(arguments: ProjectionDigest.Part.allCases)
  func aTamperedEntryOfAnyProjectionIsNamed(part: ProjectionDigest.Part) throws {
    let directory = try TemporaryDirectory()
    let ledger = try ReliabilityTests().filledLedger(directory)
    _ = try ledger.revert(2, force: true)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "with a key", "label": "EMI", "band": "Japan"]], as: "Album")
    _ = try ledger.applySynchronously(batch, idempotencyKey: "k")
    let database = ledger.layout.database(of: part)
    try ledger.environment.write { txn in
      let entry = try txn.withCursor(on: database) { cursor in try cursor.first() }
      if let entry {
        try txn.put(entry.value + [1], forKey: entry.key, in: database)
      } else {
        try txn.put([1], forKey: [9, 9, 9], in: database)
      }
    }
    #expect {
      try ledger.verify()
    } throws: { error in
      (error as? LedgerError)?.code == .verificationFailed && "\(error)".contains("\(database.name)")
    }
  }
}
