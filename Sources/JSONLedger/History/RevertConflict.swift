import Foundation

/// A later change that a revert would overwrite.
public struct RevertConflict: Sendable, Equatable, CustomStringConvertible {
  /// What a field held, as far as the conflict goes.
  public enum Value: Sendable, Equatable, CustomStringConvertible {
    /// An attribute's value (nil: none).
    case attribute(AttributeValue?)
    /// Of the targets a batch linked or unlinked in an unordered relationship: which are
    /// linked and which are not.
    case links(linked: [ObjectKey], unlinked: [ObjectKey])
    /// An ordered relationship's whole list.
    case order([ObjectKey])
    /// Whether the object exists (for the field `(object)`).
    case exists(Bool)

    public var description: String {
      switch self {
      case .attribute(let value): value?.description ?? "nil"
      case .links(let linked, let unlinked):
        [
          linked.isEmpty ? nil : "+ \(linked.map(\.description).joined(separator: ", "))",
          unlinked.isEmpty ? nil : "- \(unlinked.map(\.description).joined(separator: ", "))",
        ].compactMap { $0 }.joined(separator: " ")
      case .order(let keys): keys.map(\.description).joined(separator: ", ")
      case .exists(let exists): exists ? "present" : "deleted"
      }
    }
  }

  /// The object.
  public var object: ObjectKey
  /// The attribute or relationship (`albums`), or `(object)` when the object itself was
  /// deleted or re-created later.
  public var field: String
  /// What the reverted batch set it to.
  public var setByBatch: Value
  /// What it is now.
  public var now: Value
  /// The later batch that changed it.
  public var changedBy: UInt64

  /// What the reverted batch set, in words.
  public var valueSetByBatch: String { setByBatch.description }
  /// What it is now, in words.
  public var valueNow: String { now.description }

  public var description: String {
    // The object itself: what the batch did to it, and what a later batch did since.
    if case .exists(let set) = setByBatch, case .exists(let exists) = now {
      let since =
        switch (set, exists) {
        case (true, true): "batch \(changedBy) changed it since"
        case (true, false): "batch \(changedBy) deleted it since"
        case (false, true): "batch \(changedBy) created it again since"
        case (false, false): "batch \(changedBy) changed it and deleted it since"
        }
      return "\(object) \(field): the batch \(set ? "created" : "deleted") it, \(since)"
    }
    // A list: what the batch linked and unlinked, and where those targets stand now.
    if case .links(let linked, let unlinked) = setByBatch, case .links(let linkedNow, let unlinkedNow) = now {
      let did = [("linked", linked), ("unlinked", unlinked)].filter { !$0.1.isEmpty }.map { verb, keys in
        "\(verb) \(keys.map(\.description).joined(separator: ", "))"
      }.joined(separator: " and ")
      let stand = [(linkedNow, "linked"), (unlinkedNow, "unlinked")].filter { !$0.0.isEmpty }.map { keys, state in
        "\(keys.map(\.description).joined(separator: ", ")) \(state)"
      }.joined(separator: ", ")
      return "\(object) \(field): the batch \(did), batch \(changedBy) changed it since (now \(stand))"
    }
    if case .order = setByBatch, case .order = now {
      return "\(object) \(field): the batch ordered it \(setByBatch), batch \(changedBy) changed it since (now \(now))"
    }
    return "\(object) \(field): batch set \(setByBatch), now \(now) (changed by batch \(changedBy))"
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
