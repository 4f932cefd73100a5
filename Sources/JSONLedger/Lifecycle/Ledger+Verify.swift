import Foundation
import JSONLedgerSupport
import LMDB

/// What `Ledger.verify()` checked.
public struct VerificationReport: Sendable, Equatable {
  /// Records read and checksummed.
  public var batches: Int
  /// Live objects in the projections.
  public var objects: Int
  /// Projection entries compared byte for byte.
  public var entriesCompared: Int
}

extension Ledger {
  /// Replays the whole log into scratch projections and compares them, byte for byte, with
  /// the live ones; checks every record's checksum and that batch ids run 1…head with no gap.
  ///
  /// Throws `LedgerError.corruptRecord` naming the first bad batch, or
  /// `LedgerError.verificationFailed` naming the first differing entry.
  public func verify() throws -> VerificationReport {
    try LedgerError.wrappingStorageErrors { try verifyNow() }
  }

  private func verifyNow() throws -> VerificationReport {
    // The pages first: LMDB would crash on a damaged one rather than say so.
    try checkPages()
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
      try scratch.read { scratchTxn in
        for (live, rebuilt) in zip(layout.projections, scratchLayout.projections) {
          compared += try Self.compare(live, txn, rebuilt, scratchTxn)
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
      return VerificationReport(
        batches: head >= firstBatch ? Int(head - firstBatch + 1) : 0, objects: objects, entriesCompared: compared)
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

  /// `verify()`, off the caller's executor.
  public func verify() async throws -> VerificationReport {
    try await runBriefly { try self.verify() }
  }

  /// Walks both databases in key order with two cursors (no copy of either in memory) and
  /// throws at the first entry that differs.
  private static func compare(_ live: Database, _ liveTxn: Transaction, _ rebuilt: Database, _ rebuiltTxn: Transaction)
    throws -> Int
  {
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
