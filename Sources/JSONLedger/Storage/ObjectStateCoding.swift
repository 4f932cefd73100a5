/// Encodings of object states in `objects`, `views` and `history`.
///
/// A history entry is the object's state after a batch, or no bytes for "absent after this
/// batch":
/// ```
/// entity  identity  link lists  attributes
/// ```
/// Each link list is its relationship id, then either 0 and the whole list, or 1, a chain
/// length and the ids removed and added since the object's previous entry (see
/// `StoredLinkList`). Links come before attributes so that following a chain of deltas back
/// reads no attributes.
enum ObjectStateCoding {
  /// An object's header in `objects` (entity and identity), which also starts its history
  /// entries.
  static func writeHeader(entity: String, identity: [AttributeValue], into writer: inout BinaryWriter) {
    writer.write(entity)
    writer.write(varint: UInt64(identity.count))
    for value in identity { writer.write(value) }
  }

  /// An object's header; an entity name among `entityNames` (the model's) reuses that string.
  static func decodeHeader(_ bytes: [UInt8], entityNames: [(name: String, utf8: [UInt8])]) throws(DecodingFailure) -> (
    entity: String, identity: [AttributeValue]
  ) {
    var reader = BinaryReader(bytes)
    var entityIndex = 0
    return try readHeader(&reader, entityNames: entityNames, entityIndex: &entityIndex)
  }

  /// An object's attributes as `views` holds them.
  static func writeAttributes(_ attributes: AttributeList, into writer: inout BinaryWriter) {
    writer.write(attributes: attributes)
  }

  /// The attributes of a created object from its change, which lists every one of them
  /// sorted by name: the bytes `writeAttributes` gives for its state, without sorting again.
  static func writeAttributes(ofCreated change: ObjectChange, into writer: inout BinaryWriter) {
    writer.write(varint: UInt64(change.attributes.count { $0.new != nil }))
    for attribute in change.attributes {
      guard let value = attribute.new else { continue }
      writer.write(attribute.name)
      writer.write(value)
    }
  }

  static func decodeAttributes(_ bytes: [UInt8]) throws(DecodingFailure) -> AttributeList {
    var reader = BinaryReader(bytes)
    return try reader.readAttributes()
  }

  /// A history entry of a live object from its encoded header and attributes (as `objects`
  /// and `views` hold them) and its link lists. Lists named in `deltas` are stored as that
  /// change with that chain length; every other list whole.
  static func writeEntry(
    header: [UInt8], links: LinkLists, encodedAttributes: [UInt8],
    deltas: [UInt32: (chain: Int, change: LinkChange)] = [:],
    into writer: inout BinaryWriter
  ) {
    writer.append(encoded: header)
    // Link lists iterate by ascending id already.
    writer.write(varint: UInt64(links.count { !$0.value.isEmpty }))
    for (id, targets) in links where !targets.isEmpty {
      writer.write(varint: UInt64(id))
      if !deltas.isEmpty, let (chain, change) = deltas[id] {
        writer.write(UInt8(1))
        writer.write(varint: UInt64(chain))
        writer.write(ascendingIDs: change.removed)
        writer.write(ascendingIDs: change.added)
      } else {
        writer.write(UInt8(0))
        writer.write(ids: targets)
      }
    }
    writer.append(encoded: encodedAttributes)
  }

  /// One decoded history entry; nil for an absent object. Without `attributes`, stops after
  /// the link lists (`attributes` is then empty).
  static func decodeEntry(_ bytes: [UInt8], attributes: Bool) throws(DecodingFailure) -> HistoryEntry? {
    guard !bytes.isEmpty else { return nil }
    var reader = BinaryReader(bytes)
    let (entity, identity) = try readHeader(&reader)
    var links: [UInt32: StoredLinkList] = [:]
    try readLinkLists(&reader) { id, list in links[id] = list }
    return HistoryEntry(
      entity: entity, identity: identity, links: links, attributes: attributes ? try reader.readAttributes() : [:])
  }

  /// A history entry decoded straight into a state (nil for an absent object), with the
  /// lists it keeps as deltas set apart: the state lacks those until they are folded onto
  /// an older whole list. Reading the current state of an object is mostly this.
  static func decodeState(_ bytes: [UInt8], model: Model) throws(DecodingFailure) -> (
    state: ObjectState, deltas: [UInt32: LinkChange]
  )? {
    guard !bytes.isEmpty else { return nil }
    var reader = BinaryReader(bytes)
    // The entity's name matched against the model's gives its attribute names too.
    var entityIndex = 0
    let (entity, identity) = try readHeader(&reader, entityNames: model.entityNames, entityIndex: &entityIndex)
    var state = ObjectState(entity: entity, identity: identity)
    var deltas: [UInt32: LinkChange] = [:]
    try readLinkLists(
      &reader, reserve: { state.links.reserveCapacity($0) },
      each: { id, list in
        switch list {
        case .whole(let targets): state.links[id] = targets
        case .delta(_, let change): deltas[id] = change
        }
      })
    state.attributes = try reader.readAttributes(
      knownNames: entityIndex > 0 ? model.resolvedInOrder[entityIndex - 1].storedAttributeNames : [])
    return (state, deltas)
  }

  private static func readHeader(_ reader: inout BinaryReader) throws(DecodingFailure) -> (
    entity: String, identity: [AttributeValue]
  ) {
    var entityIndex = 0
    return try readHeader(&reader, entityIndex: &entityIndex)
  }

  /// An object's entity and identity. With `entityNames` (the model's), `entityIndex` is
  /// 1 + the index of the entity's name there, or stays 0.
  private static func readHeader(
    _ reader: inout BinaryReader, entityNames: [(name: String, utf8: [UInt8])] = [], entityIndex: inout Int
  ) throws(DecodingFailure) -> (entity: String, identity: [AttributeValue]) {
    let entity = try reader.readString(expecting: entityNames, from: &entityIndex)
    let count = try reader.readCount()
    var identity: [AttributeValue] = []
    identity.reserveCapacity(count)
    for _ in 0..<count { identity.append(try reader.readRequiredValue()) }
    return (entity, identity)
  }

  private static func readLinkLists(
    _ reader: inout BinaryReader, reserve: (Int) -> Void = { _ in }, each body: (UInt32, StoredLinkList) -> Void
  ) throws(DecodingFailure) {
    let count = try reader.readCount()
    reserve(count)
    for _ in 0..<count {
      let id = UInt32(truncatingIfNeeded: try reader.readVarint())
      switch try reader.readByte() {
      case 0:
        body(id, .whole(try reader.readIDs()))
      case 1:
        let chain = Int(try reader.readVarint())
        let removed = try reader.readAscendingIDs()
        body(
          id,
          .delta(chain: chain, LinkChange(relationshipID: id, added: try reader.readAscendingIDs(), removed: removed)))
      case let tag:
        throw DecodingFailure(reason: "unknown link list tag \(tag)")
      }
    }
  }
}

/// A decoded history entry.
struct HistoryEntry {
  var entity: String
  var identity: [AttributeValue]
  var links: [UInt32: StoredLinkList]
  var attributes: AttributeList
}

/// How a history entry keeps one link list.
///
/// A long unordered list that changes a little in each of many batches (a producer gaining
/// albums import after import) would make whole-list entries grow with the square of its
/// length. Such a list is kept as what changed since the object's previous entry, as long
/// as `chain` stays within the list's length; then it is written whole again. `chain` adds,
/// for each entry since the last whole list, the ids it changed plus the square root of the
/// list's length. So reading a state follows at most about √n entries back for a list of n,
/// and an entry costs, spread over the chain, about √n ids plus what its batch changed —
/// instead of n.
enum StoredLinkList {
  /// The whole list.
  case whole([UInt64])
  /// What changed since the previous entry of the same object.
  case delta(chain: Int, LinkChange)

  /// Shortest list kept as deltas; shorter lists are cheaper whole.
  static let minimumDeltaLength = 64

  /// What one entry adds to a chain besides the ids it changed, for a list of `length`.
  static func entryWeight(forLength length: Int) -> Int { Int(Double(length).squareRoot()) }

  /// The chain length this list starts from in the next entry.
  var chain: Int {
    switch self {
    case .whole: 0
    case .delta(let chain, _): chain
    }
  }
}
