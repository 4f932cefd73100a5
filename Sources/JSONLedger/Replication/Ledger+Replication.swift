import Foundation
import LMDB
import Synchronization

/// A record a replica is about to commit, as its remote log takes it.
struct OutgoingRecord: Sendable {
  var batchID: UInt64
  var kind: ChangeRecord.Kind
  var modelVersion: UInt32
  var idempotencyKey: String?
  /// The record's bytes, as the log stores them.
  var bytes: [UInt8]
  /// For a migration record, every version of the model up to the one it moves to
  /// (`Ledger.modelDefinition`'s form): what other replicas migrate to when they apply it.
  var modelDefinition: JSONValue?
}

/// What a replica's new records pass through before their transaction commits: the remote
/// append. A throw aborts the local transaction, so a replica never holds a record its remote
/// refused.
typealias RecordGate = @Sendable (OutgoingRecord) throws -> Void

/// Records a replica's remote holds and its store lacks, as their bytes (checked against the
/// remote's chain), which a write through the remote appends in its own transaction before
/// its body (`Ledger.committing(through:after:)`): a writer that finds other machines'
/// records under the head's lock folds them and writes its own in one commit, not two, and
/// that commit follows the remote's, after the lock is let go. A write that fails takes them
/// with it: the caller appends them on their own then (`isCommitted` says whether it must).
final class CatchUpRecords: Sendable {
  let records: [[UInt8]]
  /// The batch id each record's bytes claim.
  let claimed: [UInt64]
  private let committed = Mutex(false)

  init(_ records: [[UInt8]]) throws {
    self.records = records
    self.claimed = try records.map { try Ledger.batchID(ofRecord: $0) }
  }

  /// The objects whose room the write reserves for them.
  var roomObjects: Int { Ledger.roomObjects(ofEncoded: records) }

  /// Whether a transaction that appended them committed.
  var isCommitted: Bool { committed.withLock { $0 } }

  func markCommitted() { committed.withLock { $0 = true } }
}

/// The store side of replication: the records as bytes, the replica mark, and the gate every
/// new record of a replica passes through. `ReplicaCore` builds replicas on these; an app
/// does not call them.
extension Ledger {
  /// Where this replica's records come from (a description of its remote, without secrets),
  /// or nil when the store is not a replica.
  @_spi(Replication) public var replicaSource: String? {
    get throws {
      try readTransaction { txn in
        try txn.value(forKey: MetaKey.replicaOf, in: layout.meta).map { String(decoding: $0, as: UTF8.self) }
      }
    }
  }

  /// Marks the store a replica of `source` (nil: no longer one). From then on a new record is
  /// refused (`LedgerError.replicaWrite`) but through a gate (`committing(through:)`).
  @_spi(Replication) public func setReplicaSource(_ source: String?) throws {
    try perform {
      Write(room: .bytes(64 << 10), checksModelVersion: false) { [self] txn in
        if let source {
          try txn.put(Array(source.utf8), forKey: MetaKey.replicaOf, in: layout.meta)
        } else {
          _ = try txn.delete(MetaKey.replicaOf, in: layout.meta)
        }
      }
    }
  }

  /// Flushes every commit to disk (a store built with `.noSync` durability before it is put
  /// in place).
  @_spi(Replication) public func flushToDisk() throws {
    try LedgerError.wrappingStorageErrors { try environment.sync() }
  }

  /// On a replica whose log starts at a checkpoint, the remote's checksum of the record the
  /// checkpoint replaced (what the record after it chains to); nil otherwise.
  @_spi(Replication) public var replicaStartDigest: [UInt8]? {
    get throws {
      try readTransaction { txn in
        try txn.value(forKey: MetaKey.replicaStartDigest, in: layout.meta).map(Array.init)
      }
    }
  }

  /// Starts an empty replica at another store's checkpoint (`compactReplica`'s, as its bytes):
  /// the log starts at its batch, whose remote checksum is `digest`; the records after it
  /// follow with `appendReplicated`. One transaction: a kill leaves the store empty or started.
  @_spi(Replication) public func startReplica(atCheckpoint bytes: [UInt8], digest: [UInt8]) throws -> BatchSummary {
    let claimed = try Self.batchID(ofRecord: bytes)
    let record = try Self.decodeRecord(bytes, batchID: claimed, versions: versions)
    guard record.kind == .checkpoint else {
      throw LedgerError.corruptRecord(batchID: claimed, reason: "it is not a checkpoint")
    }
    guard record.modelVersion == versions.current else {
      throw LedgerError.corruptRecord(
        batchID: claimed,
        reason: "it is written under model version \(record.modelVersion), the store's is \(versions.current)")
    }
    return try perform {
      Write(room: .objects(record.changes.count * 2), announcing: \.self) { [self] txn in
        guard try ProjectionStore(transaction: txn, layout: layout, model: model).head() == 0 else {
          throw LedgerError.invalidArgument("a replica starts at a checkpoint only while its log is empty")
        }
        try txn.put([UInt8](bigEndian: claimed), forKey: MetaKey.firstBatch, in: layout.meta)
        try txn.put(digest, forKey: MetaKey.replicaStartDigest, in: layout.meta)
        try append(record, txn, encoded: bytes)
        return BatchSummary(record: record)
      }
    }
  }

  /// Every version of the store's model with its numbering (what records' numbers mean): a
  /// replica is created from it, so that it reads the records as their writer meant them.
  @_spi(Replication) public var modelDefinition: JSONValue { versions.jsonValue }

  /// Creates a new store whose model is `definition` (another store's `modelDefinition`), or
  /// its first `version` versions: a replica built from batch 1 starts at version 1 and
  /// follows the migration records as they come.
  @_spi(Replication) public static func create(
    at path: String, modelDefinition definition: JSONValue, version: UInt32? = nil, options: Options = Options()
  ) throws -> Ledger {
    let all = try modelVersions(definition)
    guard let versions = all.through(version ?? all.current) else {
      throw LedgerError(.invalidModel, "the model definition has \(all.current) versions, not \(version ?? 0)")
    }
    return try create(at: path, versions: versions, options: options)
  }

  private static func modelVersions(_ definition: JSONValue) throws -> ModelVersions {
    do { return try ModelVersions(json: definition) } catch {
      throw LedgerError(.invalidModel, "the model definition does not read: \(error)")
    }
  }

  /// Whether this store's model versions are the first versions of `definition` (another
  /// store's `modelDefinition`): the same models, numbered the same.
  @_spi(Replication) public func hasFirstModelVersions(of definition: JSONValue) throws -> Bool {
    try Self.modelVersions(definition).firstVersion(differingFrom: versions) == nil
  }

  /// This store opened anew, under the model version it holds now: after a replica applied a
  /// migration, this `Ledger` throws `LedgerError.modelChanged` and the new one reads.
  @_spi(Replication) public func reopened() throws -> Ledger {
    let environment = try environment
    let versions: ModelVersions
    do { versions = try readTransaction { txn in try ModelVersions.load(from: txn, in: layout.meta) } } catch let
      failure as StoredModelFailure
    {
      throw LedgerError.notAStore(path: path, reason: "its stored model does not load: \(failure.reason)")
    }
    var options = Options()
    options.transformers = transformers
    options.logger = logger
    do { try transformers.validate(versions.model) } catch { throw LedgerError.model(error) }
    return Ledger(path: path, versions: versions, environment: environment, layout: layout, options: options)
  }

  /// Applies another machine's migration record, as its bytes: the store follows the model
  /// to the record's version (the next, taken from `definition`, every version of the
  /// remote's model) as the writer's store did, and appends the record as it is, in one
  /// transaction. Refused with nothing written when the definition does not continue this
  /// store's versions, names a transformer this process lacks, or numbers the new version
  /// otherwise than this store would. Afterwards this `Ledger` throws
  /// `LedgerError.modelChanged`: `reopened()` reads under the new version.
  @_spi(Replication) public func appendReplicatedMigration(
    _ bytes: [UInt8], modelDefinition definition: JSONValue
  ) throws -> BatchSummary {
    let claimed = try Self.batchID(ofRecord: bytes)
    let all = try Self.modelVersions(definition)
    guard let target = all.through(versions.current + 1) else {
      throw LedgerError(
        .invalidModel,
        "batch \(claimed) moves the model to version \(versions.current + 1), which the remote's model does not have")
    }
    if let version = target.firstVersion(differingFrom: versions) {
      throw LedgerError(
        .invalidModel, "the remote's model version \(version) is not this store's: the store is not of this ledger")
    }
    let record = try Self.decodeRecord(bytes, batchID: claimed, versions: target)
    guard record.kind == .migration, record.modelVersion == target.current else {
      throw LedgerError.corruptRecord(
        batchID: claimed, reason: "it is not a migration to model version \(target.current)")
    }
    do { try transformers.validate(target.model) } catch { throw LedgerError.model(error) }
    let plan = try migrationPlan(to: target.model)
    guard plan.refusals.isEmpty else { throw LedgerError.migrationRefused(path: path, reasons: plan.refusals) }
    guard ModelVersions(first: plan.next).firstVersion(differingFrom: ModelVersions(first: target.model)) == nil else {
      throw LedgerError(
        .invalidModel,
        "model version \(target.current) numbers its elements otherwise than this store would: it was not made from this store's model"
      )
    }
    // A replay writes every projection anew while the old pages stay until the commit.
    return try perform {
      Write(room: .wholeStore, announcing: \.self) { [self] txn in
        _ = try follow(plan, to: target, allowingRemovals: true, txn)
        try append(record, txn, encoded: bytes, under: target)
        return BatchSummary(record: record)
      }
    }
  }

  /// The bytes of batch `batchID`'s record as the log stores them.
  @_spi(Replication) public func encodedRecord(_ batchID: UInt64) throws -> [UInt8] {
    try readTransaction { txn in
      guard let bytes = try txn.value(forKey: StoreKeys.batch(batchID), in: layout.log) else {
        try ProjectionStore(transaction: txn, layout: layout, model: model).extent().checkRecord(batchID)
        throw LedgerError.corruptRecord(batchID: batchID, reason: "it is missing from the log")
      }
      return Array(bytes)
    }
  }

  /// The first batch the log holds and its head.
  @_spi(Replication) public func logExtent() throws -> (firstBatch: UInt64, head: UInt64) {
    try readTransaction { txn in
      let extent = try ProjectionStore(transaction: txn, layout: layout, model: model).extent()
      return (extent.firstBatch, extent.head)
    }
  }

  /// Appends records its remote log holds, in order, as their bytes: each checked against its
  /// checksum, its batch id the head + 1, written as it is and folded into the projections,
  /// all in one transaction with the head, then each announced on `changes`. A kill leaves all
  /// of them applied or none; a catch-up over several records flushes once, not once each,
  /// and not its meta page: the remote holds the records, so a machine crash that undoes the
  /// commit loses nothing the next catch-up does not fetch again.
  @_spi(Replication) public func appendReplicated(_ records: [[UInt8]]) throws -> [BatchSummary] {
    try appendEncoded(records)
  }

  /// Whether `path` holds a store (or is an empty folder, or nothing): what a clone may
  /// replace or clear, where anything else (a folder of notes) is left as it is.
  @_spi(Replication) public static func holdsAStoreOrNothing(_ path: String) -> Bool {
    switch try? StoreDirectory.inspect(path) {
    case .missing?, .empty?, .store?: true
    case nil: false
    }
  }

  /// The batch id a record's bytes claim, once their checksum is checked: a record that
  /// arrives as batch N must be the record of batch N (an old record inserted again as the
  /// next batch is not).
  @_spi(Replication) public static func batchID(ofRecord bytes: [UInt8]) throws -> UInt64 {
    do { return try RecordCoding.batchID(ofEncoded: bytes) } catch {
      throw LedgerError.corruptRecord(batchID: 0, reason: "its bytes do not read: \(error)")
    }
  }

  /// The gate a new record passes through (`committing(through:)`); without one, on a
  /// replica, `LedgerError.replicaWrite`; elsewhere nil.
  func recordGate(_ txn: Transaction) throws -> RecordGate? {
    if let recordGate { return recordGate }
    if let source = try txn.value(forKey: MetaKey.replicaOf, in: layout.meta) {
      throw LedgerError.replicaWrite(path: path, source: String(decoding: source, as: UTF8.self))
    }
    return nil
  }
}
