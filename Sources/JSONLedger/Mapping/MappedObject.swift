import JSONLedgerSupport

/// One JSON object after mapping: typed values for the keys it had, relationship values, and
/// its identity. Nothing is resolved against the store yet.
///
/// A value with its fields held in one buffer, copied on write: a batch hands each object
/// from the mapper to the staged steps and on to the resolver, and a nested one is bound out
/// of its enum again at each step, so that a copy retains the buffer and the path where it
/// retained each field.
struct MappedObject: @unchecked Sendable {
  // Sendable: every field is, and the buffer holding them is written only through `write(_:)`,
  // that is only while this value holds the one reference to it (it copies a shared one
  // first); a shared buffer is only read, so no two values ever see one change.

  private struct Fields {
    var entity: ResolvedEntity
    var identity: [AttributeValue]? = nil
    var attributes: [MappedAttribute] = []
    var relationships: [MappedRelationship] = []
    /// How many relationships to make room for at the first (`reserve`).
    var relationshipRoom: Int32 = 0
    var isKeyOnly = false
    var refusedIdentity = false
    var source: JSONObject? = nil
    var fingerprint: PayloadFingerprint
  }

  /// The fields are reached through the buffer's header pointer: a class's stored property
  /// (`ManagedBuffer.header` too) is checked for exclusive access at run time on each access.
  private var buffer: ManagedBuffer<Fields, Void>
  /// Where the object is in the JSON (`bands[2]`). Beside the fields: the same mapped text
  /// met at another place (`Mapper.mapNested`) differs only here.
  var path: JSONPath

  private static func buffer(holding fields: Fields) -> ManagedBuffer<Fields, Void> {
    ManagedBuffer<Fields, Void>.create(minimumCapacity: 0) { _ in fields }
  }

  private func read<Value>(_ body: (UnsafeMutablePointer<Fields>) -> Value) -> Value {
    buffer.withUnsafeMutablePointerToHeader(body)
  }

  /// Writes the fields, copied first when another value shares them.
  private mutating func write<Value>(_ body: (inout Fields) -> Value) -> Value {
    if !isKnownUniquelyReferenced(&buffer) { buffer = Self.buffer(holding: read { $0.pointee }) }
    return buffer.withUnsafeMutablePointerToHeader { body(&$0.pointee) }
  }

  /// An object of `entity` with nothing mapped yet.
  init(entity: ResolvedEntity, path: JSONPath) {
    buffer = Self.buffer(holding: Fields(entity: entity, fingerprint: PayloadFingerprint(entity: entity)))
    self.path = path
  }

  /// The concrete entity (after sub-entity selection).
  var entity: ResolvedEntity {
    get { read { $0.pointee.entity } }
    set { write { $0.entity = newValue } }
  }
  /// The identity values in the order of the entity's identity; nil for insert-only entities.
  var identity: [AttributeValue]? {
    get { read { $0.pointee.identity } }
    set { write { $0.identity = newValue } }
  }
  /// Attributes the JSON named, in document order; nil clears the attribute.
  var attributes: [MappedAttribute] { read { $0.pointee.attributes } }
  /// Relationships the JSON named, in document order.
  var relationships: [MappedRelationship] {
    read { $0.pointee.relationships }
  }
  /// Whether the payload was a bare key (`"1699"`): the object it creates is a stub, exempt
  /// from the non-optional attributes a created object must carry.
  var isKeyOnly: Bool {
    get { read { $0.pointee.isKeyOnly } }
    set { write { $0.isKeyOnly = newValue } }
  }
  /// Whether a value given for an identity attribute was refused (and reported): the
  /// identity is then not reported missing as well.
  var refusedIdentity: Bool {
    get { read { $0.pointee.refusedIdentity } }
    set { write { $0.refusedIdentity = newValue } }
  }
  /// The JSON it came from, kept only for entities with sub-entities.
  var source: JSONObject? {
    get { read { $0.pointee.source } }
    set { write { $0.source = newValue } }
  }
  /// What the payload says, hashed as it was mapped (kept in step by the `append` methods).
  var fingerprint: PayloadFingerprint {
    get { read { $0.pointee.fingerprint } }
    set { write { $0.fingerprint = newValue } }
  }

  /// Makes room for `attributes` attributes now, and for `relationships` relationships when
  /// the first is appended (an object that names none allocates no list).
  mutating func reserve(attributes: Int, relationships: Int) {
    write { fields in
      fields.attributes.reserveCapacity(attributes)
      fields.relationshipRoom = Int32(clamping: relationships)
    }
  }

  /// Appends an attribute's value; `nameHash` is `FNV1a.hash` of its name.
  mutating func append(attribute name: String, nameHash: UInt64, _ value: AttributeValue?) {
    write { fields in
      fields.attributes.append(MappedAttribute(name: name, value: value))
      fields.fingerprint.add(attribute: nameHash, value)
    }
  }

  /// Appends a relationship's value; the references in it must already have been added to
  /// `fingerprint` (`PayloadFingerprint.add(key:)`), in order.
  mutating func append(relationship: ResolvedRelationship, _ value: RelationshipValue) {
    write { fields in
      switch value {
      case .clear: fields.fingerprint.add(relationship: relationship.id, kind: 0, count: 0)
      case .toOne: fields.fingerprint.add(relationship: relationship.id, kind: 1, count: 1)
      case .toMany(let references):
        fields.fingerprint.add(relationship: relationship.id, kind: 2, count: references.count)
      }
      if fields.relationships.isEmpty, fields.relationshipRoom > 1 {
        fields.relationships.reserveCapacity(Int(fields.relationshipRoom))
      }
      fields.relationships.append(MappedRelationship(relationship: relationship, value: value))
    }
  }
}

/// One attribute the JSON named, with its typed value (nil clears it).
///
/// A struct, not a tuple: an array of tuples is destroyed element by element through the
/// runtime's generic tuple witness, an array of structs through the struct's own.
struct MappedAttribute: Sendable {
  var name: String
  var value: AttributeValue?
}

/// One relationship the JSON named, with its value (a struct for the reason `MappedAttribute`
/// is one).
struct MappedRelationship: Sendable {
  var relationship: ResolvedRelationship
  var value: RelationshipValue
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
  /// By the value of the entity's key attribute (`ResolvedEntity.keyAttribute`: only an
  /// entity identified by one attribute is referred to by key), held without an array of it.
  case key(entity: ResolvedEntity, value: AttributeValue, path: JSONPath)
  case object(MappedObject)
}
