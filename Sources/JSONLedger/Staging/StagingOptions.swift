/// Which changes a staged collection may make (Sync's operation subsets).
public struct Operations: OptionSet, Sendable, Hashable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  /// Create objects the store does not have.
  public static let insert = Operations(rawValue: 1)
  /// Change objects the store has.
  public static let update = Operations(rawValue: 2)
  /// Delete objects of the entity (or of the parent's relationship) that the payload omits.
  public static let delete = Operations(rawValue: 4)
  /// Insert and update: the default.
  public static let upsert: Operations = [.insert, .update]
  /// Everything, including deleting what the payload omits.
  public static let all: Operations = [.insert, .update, .delete]
}

/// How one staged collection is applied.
public struct StagingOptions: Sendable {
  /// Which changes are allowed. With `.delete`, objects absent from the payload are deleted.
  public var operations: Operations
  /// Limit deletion of absent objects to the targets of one parent object's relationship
  /// (Sync's `parent:`), and link the payload's objects to that parent.
  public var parent: ParentScope?
  /// Whether a reference to a key that exists neither in the batch nor in the store is an
  /// error; otherwise it creates a stub object holding only its identity (Groot).
  public var isStrict: Bool
  /// Where the items are when the payload comes in an envelope: a dotted path to the array
  /// (`results` of `{"count": 1304, "next": …, "results": […]}`). The envelope's other members
  /// go to the batch's record (`ChangeRecord.Metadata.envelope`). Nil: the entity's
  /// `collectionPath`, when the payload is an object.
  public var itemsAt: String?

  /// Options for a collection; `prune: true` is the same as adding `.delete` to `operations`.
  public init(
    operations: Operations = .upsert, prune: Bool = false, parent: ParentScope? = nil, strict: Bool = false,
    itemsAt: String? = nil
  ) {
    self.operations = prune ? operations.union(.delete) : operations
    self.parent = parent
    self.isStrict = strict
    self.itemsAt = itemsAt
  }

  /// Whether objects absent from the payload are deleted.
  ///
  /// A prune acts once the whole batch has resolved, on what every step of the batch staged:
  /// the pages of one paginated response, each staged with `prune: true` into one batch, keep
  /// every object any page holds. An empty payload with prune deletes every object of the
  /// entity (or of the parent's relationship); the summary names such entities
  /// (`BatchSummary.emptiedByPrune`).
  public var prunes: Bool { operations.contains(.delete) }
}

/// A parent object and one of its relationships, which scopes a staged collection.
public struct ParentScope: Sendable {
  /// The parent's entity.
  public var entity: String
  /// The parent's key (for a composite identity, an object of its identity attributes).
  public var key: JSONValue
  /// The parent's to-many relationship that holds the staged objects.
  public var relationship: String
  /// The scope of one parent object's relationship.
  public init(entity: String, key: JSONValue, relationship: String) {
    self.entity = entity
    self.key = key
    self.relationship = relationship
  }
}
