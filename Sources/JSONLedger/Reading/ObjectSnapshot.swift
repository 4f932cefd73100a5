/// The identity of one object: its entity and key values.
public struct ObjectKey: Sendable, Hashable, CustomStringConvertible {
  /// The concrete entity.
  public var entity: String
  /// The identity values, in the order of the entity's identity (empty for insert-only).
  public var identity: [AttributeValue]

  /// The key of an object of `entity`.
  public init(entity: String, identity: [AttributeValue]) {
    self.entity = entity
    self.identity = identity
  }

  /// `Band "Japan"`, or `Card (Hearts, Jack)` for a composite key.
  public var description: String {
    let text = identity.map(\.description).joined(separator: ", ")
    return identity.count == 1 ? "\(entity) \(text)" : "\(entity) (\(text))"
  }
}

/// One object as a value: what a `View` returns. Holding it does not hold the store.
public struct ObjectSnapshot: Sendable, Equatable {
  /// The object's entity and key.
  public var key: ObjectKey
  /// The attributes that have a value (a cleared attribute is absent).
  public var attributes: [String: AttributeValue]
  /// The keys of the related objects, by relationship name; every relationship of the
  /// entity is present (an empty list when nothing is linked). Ordered ones keep their order.
  public var relationships: [String: [ObjectKey]]
  /// The store's internal id (stable for the key).
  public var objectID: UInt64
  /// Whether the object is a placeholder: known only because another object referred to it
  /// by key (Groot's stub), holding its identity alone, until an import of its own entity
  /// delivers it. Exports leave placeholders out unless asked; a prune keeps one while
  /// something refers to it.
  public var isPlaceholder = false
  /// The entity as the model declares it (nil for an object of an entity the model lacks):
  /// it tells a to-one relationship from a to-many one when the snapshot is decoded alone.
  let declaration: ResolvedEntity?

  init(
    key: ObjectKey, attributes: [String: AttributeValue], relationships: [String: [ObjectKey]], objectID: UInt64,
    declaration: ResolvedEntity?
  ) {
    self.key = key
    self.attributes = attributes
    self.relationships = relationships
    self.objectID = objectID
    self.declaration = declaration
  }

  public static func == (left: ObjectSnapshot, right: ObjectSnapshot) -> Bool {
    left.key == right.key && left.attributes == right.attributes && left.relationships == right.relationships
      && left.objectID == right.objectID && left.isPlaceholder == right.isPlaceholder
  }

  /// The entity's name.
  public var entity: String { key.entity }

  /// The value of the attribute `name`, or nil.
  public subscript(name: String) -> AttributeValue? { attributes[name] }
}
