public import Foundation
import LMDB

/// What `Ledger.compact(keepingBatches:before:archive:discarding:)` did.
public struct CompactReport: Sendable, Equatable {
  /// The batch the log now starts at: a checkpoint of the state after it.
  public var firstBatch: UInt64
  /// Batches moved out of the log (to the archive, or dropped).
  public var archivedBatches: Int
  /// The archive written, if any.
  public var archivePath: String?
  /// Objects the checkpoint holds.
  public var objects: Int

  /// `firstBatch`, by its earlier name.
  @available(*, deprecated, renamed: "firstBatch")
  public var horizon: UInt64 { firstBatch }
}

extension Ledger {
  /// The time an ISO 8601 text gives, read as an import reads dates (`2026-01-01`,
  /// `2026-01-01T00:00:00Z`, fractions, offsets): the whole text, or nil.
  public static func time(fromISO8601 text: String) -> Date? { DateCoding.isoDate(text) }

  /// Bounds the log: the batches up to a cut are written to the archive file `archive` (which
  /// `restoreLog(from:to:)` replays into a new store) and replaced by one `checkpoint` record
  /// holding the whole state after the cut's batch, the log's new first batch; the projections are rebuilt
  /// from the checkpoint and the batches kept, in the same write transaction, so a crash
  /// leaves the store as before or as after. Batch ids go on; as-of reads, diffs and reverts
  /// before the log's first batch are refused (`LedgerError.batchArchived`); `verify` replays from the
  /// checkpoint. LMDB reuses the freed pages; `backup(to:allowingDamaged:)` writes a compacted copy.
  ///
  /// - Parameters:
  ///   - count: keep this many of the newest batches (the cut is the one before them).
  ///   - date: or keep the batches applied at or after this time.
  ///   - archive: a new file for the batches moved out; nil only with `discarding`.
  ///   - discarding: drop the batches without an archive.
  public func compact(
    keepingBatches count: Int? = nil, before date: Date? = nil, archive: String?, discarding: Bool = false
  ) throws -> CompactReport {
    try Self.checkCompactArguments(count, date, archive, discarding)
    // A replica's log is its remote's: it compacts through `JSONLedgerPostgres`, which keeps
    // what the checkpoint stands for (`compactReplica`).
    if let source = try replicaSource { throw LedgerError.replicaWrite(path: path, source: source) }
    return try writer.sync { try compactNow(keepingBatches: count, before: date, archive: archive, digest: nil) }
  }

  /// `compact`, on a replica: `digest` gives the remote's checksum of a record's bytes, and the
  /// store keeps the one of the record its checkpoint replaces (`replicaStartDigest`), in the
  /// same transaction: the records after it chain to that, not to the checkpoint.
  @_spi(Replication) public func compactReplica(
    keepingBatches count: Int? = nil, before date: Date? = nil, archive: String?, discarding: Bool = false,
    digest: @escaping ([UInt8]) -> [UInt8]
  ) throws -> CompactReport {
    try Self.checkCompactArguments(count, date, archive, discarding)
    return try writer.sync { try compactNow(keepingBatches: count, before: date, archive: archive, digest: digest) }
  }

  /// One place to cut, an archive unless discarding, and no negative count.
  private static func checkCompactArguments(_ count: Int?, _ date: Date?, _ archive: String?, _ discarding: Bool)
    throws
  {
    guard (count == nil) != (date == nil) else {
      throw LedgerError.invalidArgument(
        "compact needs one place to cut the log: a number of batches to keep, or a date")
    }
    guard archive != nil || discarding else {
      throw LedgerError.invalidArgument(
        "compact needs an archive file for the batches it moves out, unless they are discarded")
    }
    if let count, count < 0 { throw LedgerError.invalidArgument("the batches to keep cannot be negative") }
  }

  private func compactNow(
    keepingBatches count: Int?, before date: Date?, archive: String?, digest: (([UInt8]) -> [UInt8])?
  ) throws -> CompactReport {
    // Where the log is cut, and the checkpoint: the state after it, read before anything is written.
    let (start, checkpointBatch, checkpoint, replaced) = try environment.read {
      txn -> (UInt64, UInt64, ChangeRecord?, [UInt8]?) in
      try checkModelVersion(txn)
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      let start = try store.firstBatch()
      var checkpointBatch: UInt64 = 0
      if let count {
        checkpointBatch = head > UInt64(count) ? head - UInt64(count) : 0
      } else if let date {
        var id = start
        while id <= head, try readRecord(id, txn).time < date {
          checkpointBatch = id
          id += 1
        }
      }
      // Nothing before the checkpoint's batch, or the log starts there already (at a checkpoint).
      guard start == 1 ? checkpointBatch >= 1 : checkpointBatch > start else { return (start, 0, nil, nil) }
      // On a replica, the record the checkpoint replaces: its checksum is what the next record chains to.
      var replaced: [UInt8]?
      if digest != nil {
        replaced = try txn.value(forKey: StoreKeys.batch(checkpointBatch), in: layout.log).map(Array.init)
      }
      return (start, checkpointBatch, try checkpointRecord(at: checkpointBatch, txn), replaced)
    }
    guard let checkpoint else {
      return CompactReport(firstBatch: start, archivedBatches: 0, archivePath: nil, objects: 0)
    }
    // A failed archive leaves no file; a failed commit removes the archive this call wrote.
    if let archive { try writeArchive(archive, from: start, to: checkpointBatch) }
    do {
      try commit(checkpoint, firstBatch: start, startDigest: replaced.flatMap { bytes in digest.map { $0(bytes) } })
    } catch {
      if let archive { try? FileManager.default.removeItem(atPath: archive) }
      throw error
    }
    logger.info(
      "compacted the log",
      metadata: ["store": "\(path)", "firstBatch": "\(checkpointBatch)", "archive": "\(archive ?? "none")"])
    return CompactReport(
      firstBatch: checkpointBatch, archivedBatches: Int(checkpointBatch - start + 1), archivePath: archive,
      objects: checkpoint.changes.count)
  }

  /// Writes the records from `start` to `checkpointBatch` to a new archive file.
  private func writeArchive(_ archive: String, from start: UInt64, to checkpointBatch: UInt64) throws {
    // Every version of the model: the archived records name the one each was written under.
    let modelBytes = JSONWriter(options: []).bytes(from: versions.jsonValue)
    try LogArchive.write(to: archive, model: modelBytes) { append in
      try environment.read { txn in
        // A migration since the checkpoint's batch was read: its records do not read under this model.
        try checkModelVersion(txn)
        for id in start...checkpointBatch {
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

  /// Replaces the records from `start` to the checkpoint's batch with the checkpoint and
  /// rebuilds the projections, provided the log still starts at `start` and the model is the
  /// one read.
  private func commit(_ checkpoint: ChangeRecord, firstBatch start: UInt64, startDigest: [UInt8]?) throws {
    let checkpointBatch = checkpoint.batchID
    // On the writer thread already (`compactNow`): the engine runs it there.
    try perform {
      Write(room: .objects(checkpoint.changes.count * 2)) { [self] txn in
        // The checkpoint's batch and the checkpoint were read in another transaction: another process may
        // have compacted or migrated the store since (the engine checks the model version).
        // LMDB runs one writer at a time, so what this transaction sees stays true until it
        // commits.
        let now = try ProjectionStore(transaction: txn, layout: layout, model: model).extent()
        guard now.firstBatch == start, now.head >= checkpointBatch else {
          throw LedgerError.storeChanged(
            path: path, reason: "another compact moved the start of the log to batch \(now.firstBatch) meanwhile")
        }
        for id in start...checkpointBatch { try txn.delete(StoreKeys.batch(id), in: layout.log) }
        try txn.put(RecordCoding.encode(checkpoint), forKey: StoreKeys.batch(checkpointBatch), in: layout.log)
        try txn.put([UInt8](bigEndian: checkpointBatch), forKey: MetaKey.firstBatch, in: layout.meta)
        if let startDigest { try txn.put(startDigest, forKey: MetaKey.replicaStartDigest, in: layout.meta) }
        // The projections again, from the checkpoint and the batches kept.
        _ = try rebuildProjections(txn, model: model) { $0 }
      }
    }
  }

  /// A `checkpoint` record at batch `checkpointBatch`: every object alive after it, created whole
  /// with its attributes and links, in id order.
  private func checkpointRecord(at checkpointBatch: UInt64, _ txn: Transaction) throws -> ChangeRecord {
    let store = ProjectionStore(transaction: txn, layout: layout, model: model, asOf: checkpointBatch)
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
    let last = try readRecord(checkpointBatch, txn)
    var statistics = ChangeRecord.Statistics()
    statistics.created = changes.count
    var metadata = ChangeRecord.Metadata(message: "checkpoint: the state after batch \(checkpointBatch)")
    // The keys of the batches the checkpoint stands for: a late retry is still a no-op.
    metadata.archivedIdempotencyKeys = try ProjectionStore(transaction: txn, layout: layout, model: model)
      .idempotencyKeys(atOrBefore: checkpointBatch)
    return ChangeRecord(
      batchID: checkpointBatch, time: last.time, kind: .checkpoint, metadata: metadata, statistics: statistics,
      changes: changes, modelVersion: versions.current)
  }

  /// Replays an archive `compact` wrote into a new store at `path`, with the archive's
  /// model: every batch it holds comes back with its id, time, kind, metadata and changes.
  ///
  /// The archive is read record by record (memory holds one record at a time) and checked
  /// whole: its model against its checksum, every record against its own, and the end, the
  /// count and the checksum over the file, so that an archive cut short or missing a record
  /// is refused. The store is built beside `path` (in `<path>.restoring`) and takes its place
  /// once complete: a failed or killed restore leaves nothing at `path`.
  public static func restoreLog(from archive: String, to path: String, options: Options = Options()) throws -> Ledger {
    try LedgerError.wrappingStorageErrors { try restoreLogNow(from: archive, to: path, options: options) }
  }

  private static func restoreLogNow(from archive: String, to path: String, options: Options) throws -> Ledger {
    let path = BuildDirectory.normalized(path)
    switch try StoreDirectory.inspect(path) {
    case .missing, .empty: break
    case .store: throw LedgerError.storeExists(path: path)
    }
    let reader = try LogArchive.Reader(archive)
    let versions: ModelVersions
    do { versions = try ModelVersions(json: try JSONParser.parse(reader.model)) } catch {
      throw LedgerError.invalidArchive(
        "the model in the archive \(archive) does not load: \(SystemError.describe(error))", path: archive)
    }
    let build = BuildDirectory(for: path, suffix: "restoring")
    try build.make()
    do {
      var buildOptions = options
      buildOptions.durability = .noSync
      let ledger = try Ledger.create(at: build.storePath, versions: versions, options: buildOptions)
      defer { ledger.close() }
      try replay(reader, into: ledger, archive: archive)
      try ledger.environment.sync()
      try build.install(at: path)
    } catch {
      try? build.remove()
      throw error
    }
    return try Ledger.open(at: path, options: options)
  }

  /// Appends every record `reader` gives to `ledger`, checking that batch ids follow on.
  private static func replay(_ reader: LogArchive.Reader, into ledger: Ledger, archive: String) throws {
    let versions = ledger.versions
    var replay = RecordReplay(into: ledger)
    var expected: UInt64?
    while let (batchID, bytes) = try reader.next() {
      if let expected, batchID != expected {
        throw LedgerError.invalidArchive(
          "the archive \(archive) skips from batch \(expected - 1) to \(batchID)", path: archive)
      }
      if expected == nil, batchID > 1 {
        // The archive starts at an earlier checkpoint: so does the new store's log.
        try ledger.perform {
          Write(room: .bytes(64 << 10)) { txn in
            try txn.put([UInt8](bigEndian: batchID), forKey: MetaKey.firstBatch, in: ledger.layout.meta)
          }
        }
      }
      // The record goes back as it was archived, under the model version it was written under.
      // Telling it in the current terms may need the identities of objects earlier records made:
      // then each is committed before the next is read.
      if versions.changesIdentities { try replay.flush() }
      let record = try ledger.environment.read { txn in
        try decodeRecord(bytes, batchID: batchID, versions: versions, identities: ledger.identities(txn))
      }
      try replay.append(record, encoded: bytes)
      expected = batchID + 1
    }
    guard expected != nil else {
      throw LedgerError.invalidArchive("the archive \(archive) holds no records", path: archive)
    }
    try replay.flush()
  }

  /// Empties the projections and folds into them every record of the log from its first batch
  /// on, each as `translate` tells it, under `model`; returns the records folded. Compact and
  /// a migration that replays both rebuild so, inside their write transaction.
  func rebuildProjections(
    _ txn: Transaction, model: Model, translate: (consuming ChangeRecord) throws -> ChangeRecord
  ) throws -> Int {
    let firstBatch = try ProjectionStore(transaction: txn, layout: layout, model: model).firstBatch()
    for database in layout.projections { try txn.removeAll(in: database) }
    for key in [MetaKey.head, MetaKey.nextObjectSequence] { _ = try txn.delete(key, in: layout.meta) }
    let projector = Projector(transaction: txn, layout: layout, model: model)
    var batchID = firstBatch
    while let bytes = try txn.value(forKey: StoreKeys.batch(batchID), in: layout.log) {
      // Identities come from the projections being rebuilt: each object is there before a
      // change that neither creates nor deletes it.
      let record = try Self.decodeRecord(
        bytes, batchID: batchID, versions: versions, identities: identities(txn, model: model))
      try projector.apply(try translate(consume record))
      batchID += 1
    }
    return Int(batchID - firstBatch)
  }
}
