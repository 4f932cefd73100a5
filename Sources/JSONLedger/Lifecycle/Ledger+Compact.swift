public import Foundation
import LMDB

/// What `Ledger.compact(keepingBatches:before:archive:discarding:)` did.
public struct CompactReport: Sendable, Equatable {
  /// The batch the log now starts at: a checkpoint of the state after it.
  public var horizon: UInt64
  /// Batches moved out of the log (to the archive, or dropped).
  public var archivedBatches: Int
  /// The archive written, if any.
  public var archivePath: String?
  /// Objects the checkpoint holds.
  public var objects: Int
}

extension Ledger {
  /// Bounds the log: the batches up to a horizon are written to the archive file `archive`
  /// (which `restoreLog(from:to:)` replays into a new store) and replaced by one `checkpoint`
  /// record holding the whole state after the horizon's batch; the projections are rebuilt
  /// from the checkpoint and the batches kept, in the same write transaction, so a crash
  /// leaves the store as before or as after. Batch ids go on; as-of reads, diffs and reverts
  /// before the horizon are refused (`LedgerError.batchArchived`); `verify` replays from the
  /// checkpoint. LMDB reuses the freed pages; `backup(to:)` writes a compacted copy.
  ///
  /// - Parameters:
  ///   - count: keep this many of the newest batches (the horizon is the one before them).
  ///   - date: or keep the batches applied at or after this time.
  ///   - archive: a new file for the batches moved out; nil only with `discarding`.
  ///   - discarding: drop the batches without an archive.
  public func compact(
    keepingBatches count: Int? = nil, before date: Date? = nil, archive: String?, discarding: Bool = false
  ) throws -> CompactReport {
    guard (count == nil) != (date == nil) else {
      throw LedgerError.invalidArgument("compact needs one horizon: a number of batches to keep, or a date")
    }
    guard archive != nil || discarding else {
      throw LedgerError.invalidArgument("compact needs an archive file for the batches it moves out (or --discard)")
    }
    if let count, count < 0 { throw LedgerError.invalidArgument("the batches to keep cannot be negative") }
    return try writer.sync { try compactNow(keepingBatches: count, before: date, archive: archive) }
  }

  private func compactNow(keepingBatches count: Int?, before date: Date?, archive: String?) throws -> CompactReport {
    // The horizon, and the checkpoint: the state after it, read before anything is written.
    let (start, horizon, checkpoint) = try environment.read { txn -> (UInt64, UInt64, ChangeRecord?) in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      let start = try store.horizon()
      var horizon: UInt64 = 0
      if let count {
        horizon = head > UInt64(count) ? head - UInt64(count) : 0
      } else if let date {
        var id = start
        while id <= head, try readRecord(id, txn).time < date {
          horizon = id
          id += 1
        }
      }
      // Nothing before the horizon, or the log starts there already (at a checkpoint).
      guard start == 1 ? horizon >= 1 : horizon > start else { return (start, 0, nil) }
      return (start, horizon, try checkpointRecord(at: horizon, txn))
    }
    guard let checkpoint else {
      return CompactReport(horizon: start, archivedBatches: 0, archivePath: archive, objects: 0)
    }
    if let archive {
      // Every version of the model: the archived records name the one each was written under.
      let modelBytes = JSONWriter(options: []).bytes(from: versions.jsonValue)
      try LogArchive.write(to: archive, model: modelBytes) { append in
        try environment.read { txn in
          for id in start...horizon {
            guard let bytes = try txn.value(forKey: StoreKeys.batch(id), in: layout.log) else {
              throw LedgerError.corruptRecord(batchID: id, reason: "it is missing from the log")
            }
            // Checked before it is archived.
            _ = try Self.decodeRecord(bytes, batchID: id, versions: versions, identities: identities(txn))
            try append(id, bytes)
          }
        }
      }
    }
    try environment.reserve(freeBytes: Self.estimatedBytes(objects: checkpoint.changes.count * 2))
    try environment.write { txn in
      for id in start...horizon { try txn.delete(StoreKeys.batch(id), in: layout.log) }
      try txn.put(RecordCoding.encode(checkpoint), forKey: StoreKeys.batch(horizon), in: layout.log)
      try txn.put([UInt8](bigEndian: horizon), forKey: MetaKey.horizon, in: layout.meta)
      // The projections again, from the checkpoint and the batches kept.
      _ = try rebuildProjections(txn, model: model) { $0 }
    }
    logger.info(
      "compacted the log", metadata: ["store": "\(path)", "horizon": "\(horizon)", "archive": "\(archive ?? "none")"])
    return CompactReport(
      horizon: horizon, archivedBatches: Int(horizon - start + 1), archivePath: archive,
      objects: checkpoint.changes.count)
  }

  /// A `checkpoint` record at batch `horizon`: every object alive after it, created whole
  /// with its attributes and links, in id order.
  private func checkpointRecord(at horizon: UInt64, _ txn: Transaction) throws -> ChangeRecord {
    let store = ProjectionStore(transaction: txn, layout: layout, model: model, asOf: horizon)
    var changes: [ObjectChange] = []
    for root in model.resolvedInOrder where root.rootName == root.name {
      for id in try store.objectIDs(root: root.name) {
        guard let state = try store.state(of: id),
          let change = ObjectChange(objectID: id, before: nil, after: state, model: model)
        else { continue }
        changes.append(change)
      }
    }
    changes.sort { $0.objectID < $1.objectID }
    let last = try readRecord(horizon, txn)
    var statistics = ChangeRecord.Statistics()
    statistics.created = changes.count
    return ChangeRecord(
      batchID: horizon, time: last.time, kind: .checkpoint,
      metadata: ChangeRecord.Metadata(message: "checkpoint: the state after batch \(horizon)"),
      statistics: statistics, changes: changes, modelVersion: versions.current)
  }

  /// Replays an archive `compact` wrote into a new store at `path`, with the archive's
  /// model: every batch it holds comes back with its id, time, kind, metadata and changes.
  public static func restoreLog(from archive: String, to path: String, options: Options = Options()) throws -> Ledger {
    let (modelBytes, records) = try LogArchive.read(archive)
    let versions: ModelVersions
    do { versions = try ModelVersions(json: try JSONParser.parse(modelBytes)) } catch {
      throw LedgerError.invalidArgument("the model in the archive \(archive) does not load: \(error)")
    }
    let ledger = try Ledger.create(at: path, versions: versions, options: options)
    var expected = records.first?.0 ?? 1
    var replay = RecordReplay(into: ledger)
    if let first = records.first?.0, first > 1 {
      // The archive starts at an earlier checkpoint: so does the new store's log.
      try ledger.environment.write { txn in
        try txn.put([UInt8](bigEndian: first), forKey: MetaKey.horizon, in: ledger.layout.meta)
      }
    }
    for (batchID, bytes) in records {
      guard batchID == expected else {
        throw LedgerError.invalidArgument("the archive \(archive) skips from batch \(expected - 1) to \(batchID)")
      }
      // The record goes back as it was archived, under the model version it was written under.
      // Telling it in the current terms may need the identities of objects earlier records made:
      // then each is committed before the next is read.
      if versions.changesIdentities { try replay.flush() }
      let record = try ledger.environment.read { txn in
        try decodeRecord(bytes, batchID: batchID, versions: versions, identities: ledger.identities(txn))
      }
      try replay.append(record, encoded: bytes)
      expected += 1
    }
    try replay.flush()
    return ledger
  }

  /// Empties the projections and folds into them every record of the log from its horizon
  /// on, each as `translate` tells it, under `model`; returns the records folded. Compact and
  /// a migration that replays both rebuild so, inside their write transaction.
  func rebuildProjections(
    _ txn: Transaction, model: Model, translate: (ChangeRecord) throws -> ChangeRecord
  ) throws -> Int {
    let horizon = try ProjectionStore(transaction: txn, layout: layout, model: model).horizon()
    for database in layout.projections { try txn.removeAll(in: database) }
    for key in [MetaKey.head, MetaKey.nextObjectSequence] { _ = try txn.delete(key, in: layout.meta) }
    let projector = Projector(transaction: txn, layout: layout, model: model)
    var batchID = horizon
    while let bytes = try txn.value(forKey: StoreKeys.batch(batchID), in: layout.log) {
      // Identities come from the projections being rebuilt: each object is there before a
      // change that neither creates nor deletes it.
      let record = try Self.decodeRecord(
        bytes, batchID: batchID, versions: versions, identities: identities(txn, model: model))
      try projector.apply(try translate(record))
      batchID += 1
    }
    return Int(batchID - horizon)
  }
}
