/// One JSON object after mapping: typed values for the keys it had, relationship values, and
/// its identity. Nothing is resolved against the store yet.
struct MappedObject: Sendable {
  /// The concrete entity (after sub-entity selection).
  var entity: ResolvedEntity
  /// The identity values in the order of the entity's identity; nil for insert-only entities.
  var identity: [AttributeValue]?
  /// Attributes the JSON named, in document order; nil clears the attribute.
  var attributes: [(name: String, value: AttributeValue?)]
  /// Relationships the JSON named, in document order.
  var relationships: [(relationship: ResolvedRelationship, value: RelationshipValue)]
  /// Where the object is in the JSON (`bands[2]`).
  var path: JSONPath
  /// The JSON it came from, kept only for entities with sub-entities.
  var source: JSONObject? = nil
}

/// The value given to a relationship.
enum RelationshipValue: Sendable {
  /// `null`: unlink (to-one) or empty the set (to-many).
  case clear
  case toOne(ObjectReference)
  case toMany([ObjectReference])
}

/// A pointer to an object: by key, or a nested object that is itself upserted.
indirect enum ObjectReference: Sendable {
  case key(entity: ResolvedEntity, identity: [AttributeValue], path: JSONPath)
  case object(MappedObject)
}
