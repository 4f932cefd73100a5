import JSONLedgerSupport

/// One JSON object after mapping: typed values for the keys it had, relationship values, and
/// its identity. Nothing is resolved against the store yet.
///
/// A value whose fields are held in one block, copied on write: its header, then its
/// attributes, then its relationships, each in room made for it when the object is made (a
/// batch holds one block an object, not an array for each list, and letting the batch go
/// frees one block, not three). A batch hands each object from the mapper to the staged steps
/// and on to the resolver, and a nested one is bound out of its enum again at each step, so
/// that a copy retains the block and the path where it retained each field.
struct MappedObject: @unchecked Sendable {
  // Sendable: every field is, and the block holding them is changed only while this value
  // holds the one reference to it (`write(_:)` copies a shared block first, `grow` moves the
  // lists out of a block only when it is this value's alone); a shared block is only read,
  // so no two values ever see one change.

  /// What the block holds besides the two lists (`TwoTailHeader` keeps their counts and room).
  fileprivate struct Fields {
    var entity: ResolvedEntity
    var identity: [AttributeValue]? = nil
    var isKeyOnly = false
    var refusedIdentity = false
    /// The position in `identity` of the part the owner fills (`ownerPart`), or -1.
    var ownerPart: Int32 = -1
    var source: JSONObject? = nil
    var fingerprint: PayloadFingerprint
  }

  /// The fields, then the attributes, then the relationships, in one block. Its own class so
  /// that its `deinit` destroys the lists with their element types' own code.
  fileprivate final class Storage: TwoTailBuffer<Fields, MappedAttribute, MappedRelationship> {
    deinit {
      destroyLists()
    }
  }

  /// The fields are reached through the block's header pointer: a class's stored property
  /// (`ManagedBuffer.header` too) is checked for exclusive access at run time on each access.
  private var storage: Storage
  /// Where the object is in the JSON (`bands[2]`). Beside the fields: the same mapped text
  /// met at another place (`Mapper.mapNested`) differs only here.
  var path: JSONPath

  private typealias Header = TwoTailHeader<Fields>

  private func read<Value>(_ body: (UnsafeMutablePointer<Header>) -> Value) -> Value {
    storage.withUnsafeMutablePointerToHeader(body)
  }

  /// Writes the fields, copied first when another value shares them.
  private mutating func write<Value>(_ body: (UnsafeMutablePointer<Header>) -> Value) -> Value {
    if !isKnownUniquelyReferenced(&storage) {
      let (firstRoom, secondRoom) = read { ($0.pointee.firstRoom, $0.pointee.secondRoom) }
      storage = storage.copy(firstRoom: firstRoom, secondRoom: secondRoom, moving: false)
    }
    return storage.withUnsafeMutablePointerToHeader(body)
  }

  /// An object of `entity` with nothing mapped yet, and room for `attributeRoom` attributes
  /// and `relationshipRoom` relationships (more grow the block).
  init(entity: ResolvedEntity, path: JSONPath, attributeRoom: Int = 0, relationshipRoom: Int = 0) {
    storage = Storage.make(
      Fields(entity: entity, fingerprint: PayloadFingerprint(entity: entity)), firstRoom: attributeRoom,
      secondRoom: relationshipRoom)
    self.path = path
  }

  /// The concrete entity (after sub-entity selection).
  var entity: ResolvedEntity {
    get { read { $0.pointee.fields.entity } }
    set { write { $0.pointee.fields.entity = newValue } }
  }
  /// The identity values in the order of the entity's identity; nil for insert-only entities.
  var identity: [AttributeValue]? {
    get { read { $0.pointee.fields.identity } }
    set { write { $0.pointee.fields.identity = newValue } }
  }
  /// Attributes the JSON named, in document order; nil clears the attribute.
  var attributes: Attributes {
    Attributes(storage: storage, offset: 0, count: read { $0.pointee.firstCount })
  }
  /// Relationships the JSON named, in document order.
  var relationships: Relationships {
    read { header in
      Relationships(
        storage: storage, offset: Storage.secondOffset(firstRoom: header.pointee.firstRoom),
        count: header.pointee.secondCount)
    }
  }
  /// Whether the payload was a bare key (`"1699"`): the object it creates is a stub, exempt
  /// from the non-optional attributes a created object must carry.
  var isKeyOnly: Bool {
    get { read { $0.pointee.fields.isKeyOnly } }
    set { write { $0.pointee.fields.isKeyOnly = newValue } }
  }
  /// Whether a value given for an identity attribute was refused (and reported): the
  /// identity is then not reported missing as well.
  var refusedIdentity: Bool {
    get { read { $0.pointee.fields.refusedIdentity } }
    set { write { $0.pointee.fields.refusedIdentity = newValue } }
  }
  /// For an object nested in another through the inverse of a relationship its identity
  /// names (`"identity": ["item", "slot"]`, nested in an item's `types`): the position of that
  /// part in `identity`, which holds a stand-in until the resolver puts the key of the object
  /// it is nested in there. Nil otherwise.
  var ownerPart: Int? {
    get { read { $0.pointee.fields.ownerPart < 0 ? nil : Int($0.pointee.fields.ownerPart) } }
    set { write { $0.pointee.fields.ownerPart = Int32(clamping: newValue ?? -1) } }
  }
  /// The JSON it came from, kept only for entities with sub-entities.
  var source: JSONObject? {
    get { read { $0.pointee.fields.source } }
    set { write { $0.pointee.fields.source = newValue } }
  }
  /// What the payload says, hashed as it was mapped (kept in step by the `append` methods).
  var fingerprint: PayloadFingerprint {
    get { read { $0.pointee.fields.fingerprint } }
    set { write { $0.pointee.fields.fingerprint = newValue } }
  }

  /// The value last given for the attribute `name`: nil when none was, `.some(nil)` when it
  /// was cleared. Read where it lies, with no view of the list kept (a view kept alive
  /// makes the next change to this object copy its block).
  func lastValue(of name: String) -> AttributeValue?? {
    storage.withPointers { header, attributes, _ in
      for index in stride(from: header.pointee.firstCount - 1, through: 0, by: -1)
      where attributes[index].name == name {
        return .some(attributes[index].value)
      }
      return nil
    }
  }

  /// A block with twice the room of a full list (at least 4): the lists moved into it from a
  /// block this value alone holds, copied from a shared one.
  private mutating func grow(attributes: Bool) {
    let (attributeRoom, relationshipRoom) = read { ($0.pointee.firstRoom, $0.pointee.secondRoom) }
    let isUnique = isKnownUniquelyReferenced(&storage)
    storage = storage.copy(
      firstRoom: attributes ? max(4, attributeRoom * 2) : attributeRoom,
      secondRoom: attributes ? relationshipRoom : max(4, relationshipRoom * 2), moving: isUnique)
  }

  /// Appends an attribute's value; `nameHash` is `FNV1a.hash` of its name.
  mutating func append(attribute name: String, nameHash: UInt64, _ value: AttributeValue?) {
    if read({ $0.pointee.firstCount == $0.pointee.firstRoom }) { grow(attributes: true) }
    write { $0.pointee.fields.fingerprint.add(attribute: nameHash, value) }
    storage.appendFirst(MappedAttribute(name: name, value: value))
  }

  /// Appends a relationship's value; the references in it must already have been added to
  /// `fingerprint` (`PayloadFingerprint.add(key:)`), in order.
  mutating func append(relationship: ResolvedRelationship, _ value: RelationshipValue) {
    if read({ $0.pointee.secondCount == $0.pointee.secondRoom }) { grow(attributes: false) }
    write { header in
      switch value {
      case .clear: header.pointee.fields.fingerprint.add(relationship: relationship.id, kind: 0, count: 0)
      case .toOne: header.pointee.fields.fingerprint.add(relationship: relationship.id, kind: 1, count: 1)
      case .toMany(let references):
        header.pointee.fields.fingerprint.add(relationship: relationship.id, kind: 2, count: references.count)
      }
    }
    storage.appendSecond(MappedRelationship(relationship: relationship, value: value))
  }

  /// The attributes of one object, read in its block.
  typealias Attributes = List<MappedAttribute>
  /// The relationships of one object, read in its block.
  typealias Relationships = List<MappedRelationship>

  /// One list of an object, read in its block: a view that keeps the block alive, so that
  /// appending to the object afterwards copies the block, not the view's elements.
  struct List<Element>: RandomAccessCollection {
    fileprivate let storage: Storage
    /// Where the list starts, in bytes from the block's tail.
    fileprivate let offset: Int
    let count: Int
    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
      precondition(position >= 0 && position < count, "an index out of the list's range")
      return storage.withUnsafeMutablePointerToElements { words in
        (UnsafeMutableRawPointer(words) + offset).assumingMemoryBound(to: Element.self)[position]
      }
    }
  }
}

/// One attribute the JSON named, with its typed value (nil clears it).
///
/// A struct, not a tuple: a tuple is copied and destroyed through the runtime's generic
/// tuple witness, a struct by its own code.
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

/// A pointer to an object: by key, or a nested object that is itself upserted. Either is
/// held in a block of its own, so that the reference is one word.
enum ObjectReference: Sendable {
  /// By the value of the entity's key attribute (`ResolvedEntity.keyAttribute`: only an
  /// entity identified by one attribute is referred to by key), held without an array of it.
  indirect case key(entity: ResolvedEntity, value: AttributeValue, path: JSONPath)
  case object(NestedObject)
}

/// A nested object, in a block of its own: the resolver reads it where it lies
/// (`nested.object`), where binding the payload of an `indirect` case copies it out, a retain
/// of each of its fields.
final class NestedObject: Sendable {
  let object: MappedObject
  init(_ object: MappedObject) { self.object = object }
}
