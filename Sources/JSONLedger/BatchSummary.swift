public import Foundation

/// What applying a batch did: its id and counts.
public struct BatchSummary: Sendable, Equatable {
  /// The id of the batch's record in the log.
  public var batchID: UInt64
  /// When it was applied.
  public var time: Date
  /// What produced the batch.
  public var kind: ChangeRecord.Kind
  /// Objects the batch created.
  public var created: Int
  /// Objects whose values or links the batch changed.
  public var updated: Int
  /// Objects the batch deleted.
  public var deleted: Int
  /// Objects the payload named that were already as given.
  public var unchanged: Int
  /// `Entity.key` for JSON keys that matched nothing in the model.
  public var ignoredKeys: [String]
  /// True when an earlier batch with the same idempotency key made this apply a no-op;
  /// `batchID` is then that earlier batch.
  public var wasAlreadyApplied: Bool
  /// Entities whose every object this batch's prune deleted: the payload named none of them
  /// (an empty page staged with `prune: true` does that, as CacheStore's `deleteExisting`
  /// does). Known to the apply that made the batch; empty when read back from the log.
  public var emptiedByPrune: [String] = []
  /// Placeholders the batch's prune left because other objects still refer to them (they
  /// were never delivered by an import of their entity). Known to the apply that made the
  /// batch; 0 when read back from the log.
  public var placeholdersKept = 0
  /// False when the batch changed nothing the store holds, so that no record was written:
  /// `batchID` is then the head it was resolved against, and the counts say what the
  /// payload named (all of it `unchanged`).
  public var wroteRecord = true

  /// The summary of the batch `batchID` that `compact` archived, met again by its idempotency
  /// key: applied already, its time and counts no longer in the log (0).
  init(archivedBatch batchID: UInt64, kind: ChangeRecord.Kind) {
    self.batchID = batchID
    time = Date(timeIntervalSince1970: 0)
    self.kind = kind
    created = 0
    updated = 0
    deleted = 0
    unchanged = 0
    ignoredKeys = []
    wasAlreadyApplied = true
  }

  /// The summary of a batch that changed nothing, resolved against the log's `head`.
  init(changingNothingAfter head: UInt64, at time: Date, kind: ChangeRecord.Kind, statistics: ChangeRecord.Statistics) {
    batchID = head
    self.time = time
    self.kind = kind
    created = 0
    updated = 0
    deleted = 0
    unchanged = statistics.unchanged
    ignoredKeys = statistics.ignoredKeys
    wasAlreadyApplied = false
    wroteRecord = false
  }

  init(record: ChangeRecord, wasAlreadyApplied: Bool = false) {
    batchID = record.batchID
    time = record.time
    kind = record.kind
    created = record.statistics.created
    updated = record.statistics.updated
    deleted = record.statistics.deleted
    unchanged = record.statistics.unchanged
    ignoredKeys = record.statistics.ignoredKeys
    self.wasAlreadyApplied = wasAlreadyApplied
  }
}
