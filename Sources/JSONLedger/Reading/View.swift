import LMDB

/// A consistent, read-only view of the store: the current state, or the state right after a
/// given batch. It exists only inside `Ledger.read`; being non-copyable, it cannot escape.
///
/// ```swift
/// let albums = try ledger.read { view in
///   guard let japan = try view.object("Band", key: "Japan") else { return [] }
///   return try view.related(japan, "albums")
/// }
/// ```
public struct View: ~Copyable {
  @usableFromInline let reader: SnapshotReader
  /// The batch this view shows the state after (0 for an empty store).
  public let batchID: UInt64
  /// Whether it is a point-in-time view (`Ledger.read(asOf:)`).
  public var isHistorical: Bool { reader.store.asOf != nil }

  init(transaction: Transaction, layout: StoreLayout, model: Model, transformers: ValueTransformers, asOf: UInt64?)
    throws
  {
    let store = ProjectionStore(transaction: transaction, layout: layout, model: model, asOf: asOf)
    if let asOf {
      // A view as of batch N needs the log to hold N.
      try store.extent().checkRecord(asOf)
      batchID = asOf
    } else {
      // The current state needs only the head (one read of the store's meta, not two).
      batchID = try store.head()
    }
    reader = SnapshotReader(store: store, transformers: transformers)
  }

  /// The model the store was created with.
  public var model: Model { reader.model }

  /// The object of `entity` (or of a sub-entity) with `key`, or nil.
  ///
  /// `key` is the identity value (`"Japan"`, `42`, or `"42"` for an integer key); a composite
  /// key is an array in identity order or an object of the identity attributes.
  public func object(_ entity: String, key: JSONValue) throws -> ObjectSnapshot? {
    try reader.object(entity, key: key)
  }

  /// The object of `entity` (or of a sub-entity) whose identity is the Swift value `key`
  /// (`Int64`, `String`, `UUID`, …), or nil.
  public func object(_ entity: String, key: some IdentityKey) throws -> ObjectSnapshot? {
    try reader.object(entity, key: key.identityJSON)
  }

  /// Calls `body` with the object of `entity` (or of a sub-entity) with `key`, read in place
  /// (see `StoredObject`), and returns what it returns; nil when there is no such object.
  ///
  /// ```swift
  /// let label = try view.withObject("Album", key: "Tin Drum") { album in try album["label"] }
  /// ```
  @inlinable
  public func withObject<Result>(
    _ entity: String, key: some IdentityKey, _ body: (borrowing StoredObject) throws -> Result
  ) throws -> Result? {
    // Inlined into the caller, where `Result` is known: the read below is not generic, so a
    // read instantiates no generic metadata.
    var result: Result?
    try reader.visitObject(entity, key: key.identityJSON) { object in result = try body(object) }
    return result
  }

  /// Calls `body` with each object of `entity` and its sub-entities, read in place (see
  /// `StoredObject`), in the order they were first stored.
  ///
  /// ```swift
  /// var labels: Set<String> = []
  /// try view.forEachObjectInPlace("Album") { album in
  ///   if case .string(let label)? = try album["label"] { labels.insert(label) }
  /// }
  /// ```
  public func forEachObjectInPlace(_ entity: String, _ body: (borrowing StoredObject) throws -> Void) throws {
    try reader.forEachObjectInPlace(entity, body)
  }

  /// All objects of `entity` and its sub-entities, in the order they were first stored.
  public func objects(_ entity: String) throws -> [ObjectSnapshot] { try reader.objects(entity) }

  /// Calls `body` for each object of `entity` and its sub-entities, in the order they were first stored.
  public func forEachObject(_ entity: String, _ body: (ObjectSnapshot) throws -> Void) throws {
    try reader.forEachObject(entity, body)
  }

  /// The number of objects of `entity` and its sub-entities.
  public func count(_ entity: String) throws -> Int { try reader.count(entity) }

  /// The objects that `object`'s relationship `relationship` points to, in its order.
  public func related(_ object: ObjectSnapshot, _ relationship: String) throws -> [ObjectSnapshot] {
    try reader.related(object, relationship)
  }
}

extension View {
  /// The objects whose relationship `relationship` (written `Entity.name`) points to `object`:
  /// traversal from the other side, also for a relationship without an inverse.
  ///
  /// ```swift
  /// let fans = try view.objects(pointingTo: album, through: "Musician.favourite")
  /// ```
  public func objects(pointingTo object: ObjectSnapshot, through relationship: String) throws -> [ObjectSnapshot] {
    let parts = relationship.split(separator: ".", maxSplits: 1).map(String.init)
    guard parts.count == 2, let owner = reader.model.resolved(parts[0]),
      let relation = owner.relationshipIndex[parts[1]]
    else {
      throw LedgerError(.invalidQuery, "\"\(relationship)\" is not a relationship (write it as Entity.relationship)")
    }
    return try reader.linked(from: object.objectID, storedAs: relation.reverseID)
  }
}
