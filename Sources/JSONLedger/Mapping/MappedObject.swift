import JSONLedgerSupport

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
  /// Whether the payload was a bare key (`"1699"`): the object it creates is a stub, exempt
  /// from the non-optional attributes a created object must carry.
  var isKeyOnly = false
  /// Whether a value given for an identity attribute was refused (and reported): the
  /// identity is then not reported missing as well.
  var refusedIdentity = false
  /// The JSON it came from, kept only for entities with sub-entities.
  var source: JSONObject? = nil
  /// What the payload says, hashed as it was mapped (kept in step by the `append` methods).
  var fingerprint: PayloadFingerprint

  /// An object of `entity` with nothing mapped yet.
  init(entity: ResolvedEntity, path: JSONPath) {
    self.entity = entity
    self.identity = nil
    self.attributes = []
    self.relationships = []
    self.path = path
    self.fingerprint = PayloadFingerprint(entity: entity)
  }

  /// Appends an attribute's value; `nameHash` is `FNV1a.hash` of its name.
  mutating func append(attribute name: String, nameHash: UInt64, _ value: AttributeValue?) {
    attributes.append((name, value))
    fingerprint.add(attribute: nameHash, value)
  }

  /// Appends a relationship's value; the references in it must already have been added to
  /// `fingerprint` (`PayloadFingerprint.add(key:)`), in order.
  mutating func append(relationship: ResolvedRelationship, _ value: RelationshipValue) {
    switch value {
    case .clear: fingerprint.add(relationship: relationship.id, kind: 0, count: 0)
    case .toOne: fingerprint.add(relationship: relationship.id, kind: 1, count: 1)
    case .toMany(let references): fingerprint.add(relationship: relationship.id, kind: 2, count: references.count)
    }
    relationships.append((relationship, value))
  }
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
