import Foundation
import JSONLedgerSupport
import LMDB

/// How `Ledger.verify(_:)` checks the projections against the log.
public enum VerificationMode: String, Sendable, Equatable {
  /// Reads every entry of the projections once and checks them against the digest the
  /// projector kept as it wrote them; replays the log only when the store keeps no digest
  /// for its current head, or to name the entry that differs. The default.
  case keptDigest
  /// Replays the whole log into scratch projections and compares them with the live ones byte
  /// for byte: also finds a projection that was written wrong in the first place.
  case fullReplay
}

/// What `Ledger.verify(_:)` checked.
public struct VerificationReport: Sendable, Equatable {
  /// Records read and checksummed.
  public var batches: Int
  /// Live objects in the projections.
  public var objects: Int
  /// Projection entries checked: compared byte for byte with a replay's, or summed into the
  /// digest compared with the kept one.
  public var entriesCompared: Int
  /// How the projections were checked: `.fullReplay` when asked for, and when the store kept
  /// no digest to check against.
  public var mode: VerificationMode = .fullReplay
}

extension Ledger {
  /// Checks the store against its log: every page of the data file; every record's checksum,
  /// and that batch ids run from the first batch to the head with no gap; and the projections,
  /// by the digest kept as they were written (`.keptDigest`, the default) or by a replay of the
  /// whole log compared byte for byte (`.fullReplay`).
  ///
  /// A store kept no digest before version 0.14, or after an older version wrote to it: such a
  /// store is replayed, and the digest the replay proves is kept for the next verify (unless
  /// the store is open read-only). When the projections do not add up to the kept digest, the
  /// log is replayed to name the entry that differs.
  ///
  /// Throws `LedgerError.corruptRecord` naming the first bad batch, or
  /// `LedgerError.verificationFailed` naming the first differing entry.
  public func verify(_ mode: VerificationMode = .keptDigest) throws -> VerificationReport {
    try LedgerError.wrappingStorageErrors { try verifyNow(mode) }
  }

  private func verifyNow(_ mode: VerificationMode) throws -> VerificationReport {
    // The pages first: LMDB would crash on a damaged one rather than say so.
    try checkPages()
    var differsFromKeptDigest = false
    if mode == .keptDigest {
      switch try verifyByKeptDigest() {
      case .passed(let report): return report
      case .noDigest: break
      case .differs: differsFromKeptDigest = true
      }
    }
    let (report, proven) = try verifyByReplay()
    #if JSONLEDGER_INTERNAL_CHECKS
      // Tests end with a verify: a digest a write failed to keep up to date fails them.
      if differsFromKeptDigest {
        throw LedgerError.verificationFailed("internal check: the kept digest is not the projections'")
      }
    #endif
    // The projections equal the log's replay: a kept digest that differs is what is damaged.
    // It is derived from them, and replaced by the one the replay proved.
    if let proven, !isReadOnly { try keepDigest(proven) }
    if differsFromKeptDigest {
      logger.warning(
        "the projections equal the replay of the log but not the digest kept of them",
        metadata: ["store": "\(path)", "digest": "\(isReadOnly ? "kept (the store is open read-only)" : "replaced")"])
    }
    return report
  }

  /// How a check against the kept digest ended.
  private enum DigestCheck {
    case passed(VerificationReport)
    /// The store keeps no digest taken at its current head and first batch.
    case noDigest
    /// The projections do not sum to the kept digest.
    case differs
  }

  /// Checks the log's records and the projections' digest, each entry read in place once.
  private func verifyByKeptDigest() throws -> DigestCheck {
    try environment.read { txn in
      try checkModelVersion(txn)
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let extent = try store.extent()
      let kept = try ProjectionDigest.Kept.read(txn, layout)
      let expected: ProjectionDigest
      if let kept, kept.head == extent.head, kept.firstBatch == extent.firstBatch {
        expected = kept.digest
      } else if extent.head == 0 {
        expected = ProjectionDigest()
      } else {
        return .noDigest
      }
      try checkRecords(txn, extent)
      var objects = 0
      var highestSequence: UInt64 = 0
      let (digest, entries) = try ProjectionDigest.computed(txn, layout) { part, key in
        guard part == .state else { return }
        objects += 1
        if key.count == 8 {
          highestSequence = max(highestSequence, ObjectIDs.sequence(of: UInt64(bigEndianBytes: key)))
        }
      }
      guard digest == expected else { return .differs }
      let next = try store.nextObjectSequence()
      guard objects == 0 || highestSequence < next else {
        throw LedgerError.verificationFailed(
          "meta.nextObjectSequence (\(next)) is not past every object's sequence (\(highestSequence))")
      }
      return .passed(
        VerificationReport(
          batches: extent.head >= extent.firstBatch ? Int(extent.head - extent.firstBatch + 1) : 0, objects: objects,
          entriesCompared: entries, mode: .keptDigest))
    }
  }

  /// Checks every record's header and checksum in place, and that batch ids run from the
  /// first batch to the head with no gap.
  private func checkRecords(_ txn: Transaction, _ extent: LogExtent) throws {
    var expected = extent.firstBatch
    try txn.forEachInPlace(in: layout.log, prefix: []) { key, value in
      let batchID = key.count == 8 ? UInt64(bigEndianBytes: key) : 0
      guard key.count == 8, batchID == expected else {
        throw LedgerError.verificationFailed("the log skips from batch \(expected - 1) to \(batchID)")
      }
      do { try RecordCoding.check(stored: value) } catch {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "\(error)")
      }
      expected += 1
      return true
    }
    guard expected - 1 == extent.head else {
      throw LedgerError.verificationFailed("the log ends at batch \(expected - 1) but the head says \(extent.head)")
    }
  }

  /// Keeps `proven` (the digest a replay proved, with the extent it was taken at) as the
  /// store's, unless a write moved the store on since.
  private func keepDigest(_ proven: ProjectionDigest.Kept) throws {
    try perform {
      Write(room: .bytes(64 << 10), checksModelVersion: false) { [self] txn in
        let extent = try ProjectionStore(transaction: txn, layout: layout, model: model).extent()
        guard extent.head == proven.head, extent.firstBatch == proven.firstBatch else { return }
        try proven.write(txn, layout)
      }
    }
  }

  /// Replays the whole log into scratch projections and compares them with the live ones;
  /// returns the report and, when the store keeps no digest for its extent, the live
  /// projections' digest, proven by the comparison.
  private func verifyByReplay() throws -> (VerificationReport, proven: ProjectionDigest.Kept?) {
    let scratchPath = FileManager.default.temporaryDirectory.appendingPathComponent(
      "jsonledger-verify-\(UUID().uuidString)"
    ).path
    try FileManager.default.createDirectory(
      atPath: scratchPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(atPath: scratchPath) }
    var options = Environment.Options()
    options.durability = .noSync
    options.mapSize = max(64 << 20, (try? environment.info().usedBytes * 2) ?? 0)
    let scratch = try Environment(path: scratchPath, options: options)
    let scratchLayout = try StoreLayout(environment: scratch)

    return try environment.read { txn in
      try checkModelVersion(txn)
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      let kept = try ProjectionDigest.Kept.read(txn, layout)
      // After a compact, the log starts at its checkpoint.
      let firstBatch = try store.firstBatch()
      // Identities are read from the live store: an object's never changes.
      let lookup = identities(txn)
      var expected = firstBatch
      var pending: [ChangeRecord] = []
      func flush() throws {
        guard !pending.isEmpty else { return }
        try scratch.write { scratchTxn in
          let projector = Projector(transaction: scratchTxn, layout: scratchLayout, model: model)
          for record in pending { try projector.apply(record) }
        }
        pending.removeAll(keepingCapacity: true)
      }
      try txn.forEach(in: layout.log, prefix: []) { entry in
        let batchID = UInt64(bigEndianBytes: entry.key)
        guard entry.key.count == 8, batchID == expected else {
          throw LedgerError.verificationFailed("the log skips from batch \(expected - 1) to \(batchID)")
        }
        pending.append(try Self.decodeRecord(entry.value, batchID: batchID, versions: versions, identities: lookup))
        expected += 1
        if pending.count >= 500 { try flush() }
        return true
      }
      try flush()
      guard expected - 1 == head else {
        throw LedgerError.verificationFailed("the log ends at batch \(expected - 1) but the head says \(head)")
      }
      var compared = 0
      var digest = ProjectionDigest()
      try scratch.read { scratchTxn in
        for part in ProjectionDigest.Part.allCases {
          compared += try Self.compare(
            layout.database(of: part), txn, scratchLayout.database(of: part), scratchTxn, part, into: &digest)
        }
        for key in [MetaKey.head, MetaKey.nextObjectSequence] {
          let liveValue = try txn.value(forKey: key, in: layout.meta)
          let rebuiltValue = try scratchTxn.value(forKey: key, in: scratchLayout.meta)
          if liveValue != rebuiltValue, !(liveValue == nil && head == 0) {
            throw LedgerError.verificationFailed("meta.\(String(decoding: key, as: UTF8.self)) differs from the replay")
          }
        }
      }
      let objects = try txn.statistics(of: layout.state).entries
      // Records read: from the checkpoint on, after a compact.
      let report = VerificationReport(
        batches: head >= firstBatch ? Int(head - firstBatch + 1) : 0, objects: objects, entriesCompared: compared)
      let proven = ProjectionDigest.Kept(head: head, firstBatch: firstBatch, digest: digest)
      return (report, kept == proven ? nil : proven)
    }
  }

  /// Walks every page of the store's data file as it is now, checking what LMDB trusts when it
  /// reads one (page kinds and bounds, node offsets and sizes, overflow runs, child pages,
  /// named databases, the free list); returns the pages checked. A damaged file throws
  /// `LedgerError.damagedFile` naming the page, where LMDB would crash.
  @discardableResult
  public func checkPages() throws -> Int {
    do { return try LedgerError.wrappingStorageErrors { try environment.checkPages() } } catch let failure
      as PageCheckFailure
    {
      throw LedgerError.damagedFile(path: path, reason: failure.description)
    }
  }

  /// `verify(_:)`, off the caller's executor.
  public func verify(_ mode: VerificationMode = .keptDigest) async throws -> VerificationReport {
    try await runBriefly { try self.verify(mode) }
  }

  /// Walks both databases in key order with two cursors (no copy of either in memory), adding
  /// each live entry to `digest`, and throws at the first entry that differs.
  private static func compare(
    _ live: Database, _ liveTxn: Transaction, _ rebuilt: Database, _ rebuiltTxn: Transaction,
    _ part: ProjectionDigest.Part, into digest: inout ProjectionDigest
  ) throws -> Int {
    try liveTxn.withCursor(on: live) { liveCursor in
      try rebuiltTxn.withCursor(on: rebuilt) { rebuiltCursor in
        var liveEntry = try liveCursor.first()
        var rebuiltEntry = try rebuiltCursor.first()
        var count = 0
        while let entry = liveEntry {
          guard let other = rebuiltEntry else {
            throw LedgerError.verificationFailed(
              "\(live.name) has an entry the replay does not (\(describe(entry.key, in: live.name)))")
          }
          if entry.key != other.key {
            let first = entry.key.lexicographicallyPrecedes(other.key) ? entry.key : other.key
            throw LedgerError.verificationFailed(
              "\(live.name) differs from the replay at \(describe(first, in: live.name))")
          }
          if entry.value != other.value {
            throw LedgerError.verificationFailed(
              "\(live.name) differs from the replay at \(describe(entry.key, in: live.name)): the stored value is not what the log gives"
            )
          }
          digest.add(part, key: entry.key.span, value: entry.value.span)
          count += 1
          liveEntry = try liveCursor.next()
          rebuiltEntry = try rebuiltCursor.next()
        }
        if let extra = rebuiltEntry {
          throw LedgerError.verificationFailed(
            "\(live.name) lacks an entry the replay has (\(describe(extra.key, in: live.name)))")
        }
        return count
      }
    }
  }

  private static func describe(_ key: [UInt8], in database: String) -> String {
    switch database {
    case "state": return "object \(UInt64(bigEndianBytes: key))"
    case "history": return "object \(UInt64(bigEndianBytes: key)), batch \(UInt64(bigEndianBytes: key.dropFirst(8)))"
    default: return "key of \(key.count) bytes"
    }
  }
}
