import Foundation

/// A later change that a revert would overwrite.
public struct RevertConflict: Sendable, Equatable, CustomStringConvertible {
  /// The object.
  public var object: ObjectKey
  /// The attribute or relationship (`albums`), or `(object)` when the object itself was
  /// deleted or re-created later.
  public var field: String
  /// What the reverted batch set it to.
  public var valueSetByBatch: String
  /// What it is now.
  public var valueNow: String
  /// The later batch that changed it.
  public var changedBy: UInt64

  public var description: String {
    "\(object) \(field): batch set \(valueSetByBatch), now \(valueNow) (changed by batch \(changedBy))"
  }
}

/// The outcome of `Ledger.revert`.
public struct RevertResult: Sendable, Equatable {
  /// The new record's summary.
  public var summary: BatchSummary
  /// The later changes a forced revert overwrote (empty when nothing conflicted).
  public var overridden: [RevertConflict]
  /// The later changes a revert that keeps later work left as they are (`keepingLaterChanges`):
  /// those fields and links were not reverted.
  public var kept: [RevertConflict] = []
}

/// A revert refused: the batch was changed again later, or was already reverted.
public struct RevertRefused: Error, Sendable, CustomStringConvertible {
  /// The batch id.
  public var batchID: UInt64
  /// The later changes that stand in the way.
  public var conflicts: [RevertConflict]
  /// Set when the batch was already reverted (by this batch).
  public var alreadyRevertedBy: UInt64?

  public var description: String {
    if let by = alreadyRevertedBy { return "batch \(batchID) was already reverted by batch \(by)" }
    return
      ([
        "cannot revert batch \(batchID): \(conflicts.count) later change\(conflicts.count == 1 ? "" : "s") conflict (revert with force to override them):"
      ]
      + conflicts.map { "  \($0)" }).joined(separator: "\n")
  }
}
