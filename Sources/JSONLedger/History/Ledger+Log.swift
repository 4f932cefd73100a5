public import Foundation
import JSONLedgerSupport

/// One batch in the audit log: when, what kind, who and why, and its counts.
public struct LogEntry: Sendable, Equatable {
  /// The batch id.
  public var batchID: UInt64
  /// When the batch was applied (UTC).
  public var time: Date
  /// What produced the batch.
  public var kind: ChangeRecord.Kind
  /// Who and why.
  public var metadata: ChangeRecord.Metadata
  /// Counts of what the batch did.
  public var statistics: ChangeRecord.Statistics
  /// For a per-object log: what this batch did to that object.
  public var change: ObjectChange?
  /// The version of the store's model the batch was written under.
  public var modelVersion: UInt32
  /// The revert in force that undid this batch (one not itself reverted), if any.
  public var revertedBy: UInt64?

  init(record: ChangeRecord, change: ObjectChange? = nil, revertedBy: UInt64? = nil) {
    batchID = record.batchID
    time = record.time
    kind = record.kind
    modelVersion = record.modelVersion
    metadata = record.metadata
    statistics = record.statistics
    self.change = change
    self.revertedBy = revertedBy
  }
}

extension Ledger {
  /// The batches, newest first (at most `limit` of them), from the head or from the batch
  /// before `before` (the next page of a log read page by page).
  public func log(limit: Int? = nil, before: UInt64? = nil) throws -> [LogEntry] {
    try readTransaction { txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      let firstBatch = try store.firstBatch()
      var entries: [LogEntry] = []
      var id = min(head, before.map { $0 == 0 ? 0 : $0 - 1 } ?? head)
      while id >= firstBatch, id >= 1, entries.count < (limit ?? Int.max) {
        // The header alone: an entry shows counts, not changes.
        entries.append(
          LogEntry(record: try readRecord(id, txn, changes: .none), revertedBy: try store.revert(of: id)))
        id -= 1
      }
      return entries
    }
  }

  /// `log(limit:before:)`, off the caller's executor.
  public func log(limit: Int? = nil, before: UInt64? = nil) async throws -> [LogEntry] {
    try await runBriefly { try self.log(limit: limit, before: before) }
  }

  /// The batches that touched one object, newest first, each with what it did to it: the
  /// object of `entity` whose identity is the Swift value `key`.
  public func log(_ entity: String, key: some IdentityKey) throws -> [LogEntry] {
    try log(entity, key: key.identityJSON)
  }

  /// The batches that touched the object of `entity` with `key`, newest first, each with what
  /// it did to it.
  public func log(_ entity: String, key: JSONValue) throws -> [LogEntry] {
    try readTransaction { txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let reader = SnapshotReader(store: store, transformers: transformers)
      guard let resolved = model.resolved(entity) else {
        throw LedgerError.unknownEntity(entity, known: model.entities.map(\.name))
      }
      guard let id = try reader.objectID(of: resolved, key: key) else {
        throw LedgerError.objectNotFound(entity: entity, key: key)
      }
      return try store.batches(touching: id).reversed().map { batch in
        // The object's change alone is built: a batch of 100,000 changes is walked, not decoded.
        let record = try readRecord(batch, txn, changes: .ofObject(id))
        return LogEntry(
          record: record, change: record.changes.first { $0.objectID == id }, revertedBy: try store.revert(of: batch))
      }
    }
  }

  /// `log(_:key:)`, off the caller's executor.
  public func log(_ entity: String, key: JSONValue) async throws -> [LogEntry] {
    try await runBriefly { try self.log(entity, key: key) }
  }

  /// `log(_:key:)`, off the caller's executor.
  public func log(_ entity: String, key: some IdentityKey) async throws -> [LogEntry] {
    let key = key.identityJSON
    return try await runBriefly { try self.log(entity, key: key) }
  }

  @available(*, deprecated, renamed: "log(_:key:)", message: "the entity is unlabelled, as in object(_:key:)")
  public func log(entity: String, key: some IdentityKey) throws -> [LogEntry] { try log(entity, key: key) }

  @available(*, deprecated, renamed: "log(_:key:)", message: "the entity is unlabelled, as in object(_:key:)")
  public func log(entity: String, key: JSONValue) throws -> [LogEntry] { try log(entity, key: key) }

  @available(*, deprecated, renamed: "log(_:key:)", message: "the entity is unlabelled, as in object(_:key:)")
  public func log(entity: String, key: JSONValue) async throws -> [LogEntry] { try await log(entity, key: key) }

  /// The key of the object with an internal id (for describing a record's links).
  public func objectKey(forID objectID: UInt64) throws -> ObjectKey? {
    try readTransaction { txn in
      try ProjectionStore(transaction: txn, layout: layout, model: model).header(of: objectID).map {
        ObjectKey(entity: $0.entity, identity: $0.identity)
      }
    }
  }

  /// The name of a relationship id as `Entity.relationship` (a hidden reverse link reads
  /// `Entity.relationship (reverse)`).
  public func relationshipName(forID id: UInt32) -> String {
    let forward = id & ~ResolvedRelationship.hiddenReverseBit
    guard let relationship = model.relationshipsByID[forward] else { return "#\(id)" }
    let name = "\(relationship.owner).\(relationship.name)"
    return forward == id ? name : name + " (reverse)"
  }

  /// The last batch applied at or before `date`: what "the state as of that time" reads.
  /// Nil when no batch the log holds is that old (the store was empty then, or the batches of
  /// that time were archived by `compact`: `LedgerError.batchArchived` says so).
  public func lastBatch(atOrBefore date: Date) throws -> UInt64? {
    try readTransaction { txn in
      let extent = try ProjectionStore(transaction: txn, layout: layout, model: model).extent()
      guard extent.head >= 1 else { return nil }
      var id = extent.head
      while id >= extent.firstBatch, id >= 1 {
        if try readRecord(id, txn, changes: .none).time <= date { return id }
        id -= 1
      }
      if extent.isCompacted { throw LedgerError.batchArchived(extent.firstBatch - 1, firstBatch: extent.firstBatch) }
      return nil
    }
  }
}

extension LogEntry: CustomStringConvertible {
  /// `batch 3  2026-11-25T09:14:54Z  import  1 created, 5 updated, 0 deleted, 0 unchanged
  /// "nightly import" by ci`: what `jsonledger log` prints, without internal ids.
  public var description: String {
    var text =
      "batch \(batchID)  \(DateCoding.string(from: time, format: .iso8601))  \(kind)  "
      + "\(statistics.created) created, \(statistics.updated) updated, \(statistics.deleted) deleted, "
      + "\(statistics.unchanged) unchanged"
    if let message = metadata.message { text += "  \"\(message)\"" }
    if let author = metadata.author { text += " by \(author)" }
    return text
  }
}

extension LedgerDiff: CustomStringConvertible {
  /// `diff from batch 1 to batch 2: 3 created, 1 updated, 0 deleted`, and a line per object
  /// (`Album "Tin Drum": updated label`), without internal ids.
  public var description: String {
    let counts = Dictionary(grouping: changes, by: \.kind).mapValues(\.count)
    var lines = [
      "diff from batch \(from) to batch \(to): \(counts[.created] ?? 0) created, \(counts[.updated] ?? 0) updated, \(counts[.deleted] ?? 0) deleted"
    ]
    for change in changes {
      let key = ObjectKey(entity: change.entity, identity: change.identity)
      // Relationships are named by the model, which a diff does not hold: `ledger.describe`
      // names them.
      let fields = change.attributes.map(\.name) + (change.links.isEmpty ? [] : ["links"])
      lines.append("  \(key): \(change.kind)\(fields.isEmpty ? "" : " " + fields.joined(separator: ", "))")
    }
    return lines.joined(separator: "\n")
  }
}
