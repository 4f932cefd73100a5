import Foundation
import LMDB

/// A record a replica is about to commit, as its remote log takes it.
@_spi(Replication) public struct OutgoingRecord: Sendable {
  public var batchID: UInt64
  public var kind: ChangeRecord.Kind
  public var modelVersion: UInt32
  public var idempotencyKey: String?
  /// The record's bytes, as the log stores them.
  public var bytes: [UInt8]
}

/// What a replica's new records pass through before their transaction commits: the remote
/// append. A throw aborts the local transaction, so a replica never holds a record its remote
/// refused.
@_spi(Replication) public typealias RecordGate = @Sendable (OutgoingRecord) throws -> Void

/// The store side of replication: the records as bytes, the replica mark, and the gate every
/// new record of a replica passes through. `JSONLedgerPostgres` builds replicas on these; an app
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
  /// refused (`LedgerError.replicaWrite`) unless a gate is set.
  @_spi(Replication) public func setReplicaSource(_ source: String?) throws {
    try writer.sync {
      try environment.write { txn in
        if let source {
          try txn.put(Array(source.utf8), forKey: MetaKey.replicaOf, in: layout.meta)
        } else {
          _ = try txn.delete(MetaKey.replicaOf, in: layout.meta)
        }
      }
    }
  }

  /// Runs `body` with `gate` receiving each new record before it commits.
  @_spi(Replication) public func withRecordGate<R>(_ gate: @escaping RecordGate, _ body: () throws -> R) throws -> R {
    let token = recordGateTokens.withLock { next in
      next += 1
      return next
    }
    recordGate.withLock { $0 = (gate, token) }
    // Cleared only if it is still this call's: a write of this process waiting on the remote's
    // lock may have set its own by the time this one ends.
    defer { recordGate.withLock { if $0?.token == token { $0 = nil } } }
    return try body()
  }

  /// Every version of the store's model with its numbering (what records' numbers mean): a
  /// replica is created from it, so that it reads the records as their writer meant them.
  @_spi(Replication) public var modelDefinition: JSONValue { versions.jsonValue }

  /// Creates a new store whose model is `definition` (another store's `modelDefinition`).
  @_spi(Replication) public static func create(
    at path: String, modelDefinition definition: JSONValue, options: Options = Options()
  ) throws -> Ledger {
    let versions: ModelVersions
    do { versions = try ModelVersions(json: definition) } catch {
      throw LedgerError(.invalidModel, "the model definition does not read: \(error)")
    }
    return try create(at: path, versions: versions, options: options)
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
  @_spi(Replication) public func logExtent() throws -> (first: UInt64, head: UInt64) {
    try readTransaction { txn in
      let extent = try ProjectionStore(transaction: txn, layout: layout, model: model).extent()
      return (extent.start, extent.head)
    }
  }

  /// Appends a record its remote log holds, as its bytes: checked against its checksum,
  /// its batch id the head + 1, written as it is and folded into the projections in one
  /// transaction with the head, then announced on `changes`. A kill leaves it applied or not.
  @_spi(Replication) public func appendReplicated(_ bytes: [UInt8]) throws -> BatchSummary {
    try appendEncoded(bytes)
  }

  /// Passes a new record through the gate; without one, refuses it on a replica.
  func passGate(_ record: ChangeRecord, bytes: [UInt8], _ txn: Transaction) throws {
    if let gate = recordGate.withLock({ $0?.gate }) {
      try gate(
        OutgoingRecord(
          batchID: record.batchID, kind: record.kind, modelVersion: record.modelVersion,
          idempotencyKey: record.metadata.idempotencyKey, bytes: bytes))
    } else if let source = try txn.value(forKey: MetaKey.replicaOf, in: layout.meta) {
      throw LedgerError.replicaWrite(path: path, source: String(decoding: source, as: UTF8.self))
    }
  }
}
