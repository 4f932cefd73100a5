/// The encoding of an object's state, in `state` (the current state of live objects) and in
/// `history` (undo images: an object's state before a batch):
/// ```
/// entity  identity  since  link lists  attributes
/// ```
/// - entity: its number (`ModelNumbering`), or 0 and its name;
/// - since: the batch that began the object's current life (it was created or brought back);
/// - link lists: their count, then for each its relationship id and either 0 and the whole
///   list (`write(compactIDs:)`), or, in an undo image only,
///   1, a chain length and the change that turns the list after the batch back into this
///   one (`StoredLinkList`);
/// - attributes: their count, then for each its number (`ModelNumbering`: stable across the
///   model's versions; 1 + its position among the entity's sorted names in a store made before
///   numbers were kept) or 0 and its name, and its value (an identity value as a reference).
///
/// An empty undo image means the object did not exist before the batch. An attribute keeps its
/// number through every version of the model, so a migration that adds attributes rewrites no
/// state.
enum StateCoding {
  /// Appends `state` as lived since batch `since`; lists named in `deltas` are written as
  /// those changes with those chain lengths, every other list whole.
  static func write(
    _ state: ObjectState, since: UInt64, model: Model, deltas: [UInt32: (chain: Int, change: LinkChange)] = [:],
    into writer: inout BinaryWriter
  ) {
    write(
      entity: state.entity, model.resolved(state.entity), identity: state.identity, attributes: state.attributes,
      links: state.links, since: since, deltas: deltas, into: &writer)
  }

  /// The state of an object with these parts, written as `write(_:since:model:deltas:into:)`
  /// writes a state that holds them: what a creation's change gives (`Projector`), without
  /// a state made of it first. `entity`: what the model resolves `name` to.
  static func write(
    entity name: String, _ entity: ResolvedEntity?, identity: [AttributeValue], attributes: borrowing AttributeList,
    links: borrowing LinkLists, since: UInt64, deltas: [UInt32: (chain: Int, change: LinkChange)] = [:],
    into writer: inout BinaryWriter
  ) {
    if let entity {
      writer.write(varint: UInt64(entity.id))
    } else {
      writer.write(0)
      writer.write(name)
    }
    writer.write(varint: UInt64(identity.count))
    for value in identity { writer.write(value) }
    writer.write(varint: since)
    // Link lists iterate by ascending id already; empty lists are not written.
    writer.write(varint: UInt64(links.count { !$0.value.isEmpty }))
    for (id, targets) in links where !targets.isEmpty {
      writer.write(varint: UInt64(id))
      if !deltas.isEmpty, let (chain, change) = deltas[id] {
        writer.write(UInt8(1))
        writer.write(varint: UInt64(chain))
        writer.write(compactIDs: change.removed)
        writer.write(compactIDs: change.added)
      } else {
        writer.write(UInt8(0))
        writer.write(compactIDs: targets)
      }
    }
    // Both sorted by name: one walk finds each attribute's position.
    let names = entity?.storedAttributeNames ?? []
    var position = 0
    writer.write(varint: UInt64(attributes.count))
    for index in 0..<attributes.count {
      let name = attributes.name(at: index)
      while position < names.count, names[position].name < name { position += 1 }
      if let entity, position < names.count, names[position].name == name {
        writer.write(varint: UInt64(entity.storedAttributeNumbers[position]))
        position += 1
      } else {
        writer.write(0)
        writer.write(name)
      }
      writer.write(attributes[valueAt: index], identity: identity)
    }
  }

  /// A decoded state or undo image; nil for an empty undo image (absent before the batch).
  /// Without `attributes`, stops after the link lists (`attributes` is then empty).
  static func decode<Bytes: ByteSource>(_ bytes: Bytes, model: Model, attributes: Bool = true)
    throws(DecodingFailure) -> StoredState?
  {
    var builder = StoredStateBuilder(readsAttributes: attributes)
    guard try visit(bytes, model: model, &builder) else { return nil }
    return builder.stored
  }

  /// Reads a state or undo image into `visitor`, part by part; false for an empty undo image.
  /// The one reader of this encoding: `decode` and the snapshots of scans are visitors.
  static func visit<Bytes: ByteSource, Visitor: StateVisitor>(_ bytes: Bytes, model: Model, _ visitor: inout Visitor)
    throws(DecodingFailure) -> Bool
  {
    guard bytes.count > 0 else { return false }
    var reader = ByteReader(bytes)
    let (entity, resolved) = try readEntity(&reader, model: model)
    let identity = try readIdentity(&reader)
    let since = try reader.readVarint()
    guard visitor.visitHeader(entity: entity, resolved: resolved, identity: identity, since: since) else { return true }
    let listCount = try reader.readCount()
    visitor.visitLinks(count: listCount)
    for _ in 0..<listCount {
      let id = UInt32(truncatingIfNeeded: try reader.readVarint())
      switch try reader.readByte() {
      case 0:
        visitor.visitList(id, try reader.readCompactIDs())
      case 1:
        let chain = Int(try reader.readVarint())
        let removed = try reader.readCompactIDs()
        visitor.visitDelta(
          id, chain: chain, LinkChange(relationshipID: id, added: try reader.readCompactIDs(), removed: removed))
      case let tag:
        throw DecodingFailure(reason: "unknown link list tag \(tag)")
      }
    }
    guard visitor.readsAttributes else { return true }
    let names = resolved?.storedAttributeNames ?? []
    let count = try reader.readCount()
    visitor.visitAttributes(count: count)
    for _ in 0..<count {
      let reference = try reader.readCount()
      if reference == 0 {
        let name = try reader.readString()
        visitor.visitAttribute(name, position: nil, try reader.readValue(identity: identity))
      } else {
        guard let position = resolved?.position(ofAttributeNumber: reference) else {
          throw DecodingFailure(reason: "attribute \(reference) of \(entity) is not in the model")
        }
        visitor.visitAttribute(names[position].name, position: position, try reader.readValue(identity: identity))
      }
    }
    guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after a state") }
    return true
  }

  /// Entity, identity and since of a state or undo image; nil for an empty undo image.
  static func decodeHeader<Bytes: ByteSource>(_ bytes: Bytes, model: Model) throws(DecodingFailure) -> (
    entity: String, identity: [AttributeValue], since: UInt64
  )? {
    guard bytes.count > 0 else { return nil }
    var reader = ByteReader(bytes)
    let (entity, _) = try readEntity(&reader, model: model)
    let identity = try readIdentity(&reader)
    return (entity, identity, try reader.readVarint())
  }

  /// The chain length of each link list of an undo image (0: a whole list), its ids skipped,
  /// not read; nil for an empty image.
  static func listChains<Bytes: ByteSource>(of bytes: Bytes, model: Model) throws(DecodingFailure) -> [UInt32: Int]? {
    guard bytes.count > 0 else { return nil }
    var reader = ByteReader(bytes)
    _ = try readEntity(&reader, model: model)
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }
    _ = try reader.readVarint()
    let listCount = try reader.readCount()
    var chains: [UInt32: Int] = [:]
    for _ in 0..<listCount {
      let id = UInt32(truncatingIfNeeded: try reader.readVarint())
      switch try reader.readByte() {
      case 0:
        chains[id] = 0
        try reader.skipCompactIDs()
      case 1:
        chains[id] = Int(try reader.readVarint())
        try reader.skipCompactIDs()
        try reader.skipCompactIDs()
      case let tag:
        throw DecodingFailure(reason: "unknown link list tag \(tag)")
      }
    }
    return chains
  }

  /// Whether a current state carries the placeholder mark (`AttributeList.placeholderMark`):
  /// its first attribute, stored by its empty name, since names sort it first.
  static func isPlaceholder<Bytes: ByteSource>(_ bytes: Bytes, model: Model) throws(DecodingFailure) -> Bool {
    guard bytes.count > 0 else { return false }
    var reader = ByteReader(bytes)
    _ = try readEntity(&reader, model: model)
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }
    _ = try reader.readVarint()
    for _ in 0..<(try reader.readCount()) {
      _ = try reader.readVarint()
      guard try reader.readByte() == 0 else {
        throw DecodingFailure(reason: "a current state keeps a list as a change")
      }
      try reader.skipCompactIDs()
    }
    guard try reader.readCount() > 0, try reader.readCount() == 0 else { return false }
    return try reader.readString().isEmpty
  }

  /// The since of a state, read from its first bytes.
  static func since(of bytes: [UInt8], model: Model) throws(DecodingFailure) -> UInt64 {
    guard let header = try decodeHeader(bytes, model: model) else {
      throw DecodingFailure(reason: "a state is empty")
    }
    return header.since
  }

  static func readEntity<Bytes>(_ reader: inout ByteReader<Bytes>, model: Model) throws(DecodingFailure) -> (
    String, ResolvedEntity?
  ) {
    let reference = try reader.readCount()
    guard reference > 0 else { return (try reader.readString(), nil) }
    guard let entity = model.resolved(number: reference) else {
      throw DecodingFailure(reason: "entity \(reference) is not in the model")
    }
    return (entity.name, entity)
  }

  static func readIdentity<Bytes>(_ reader: inout ByteReader<Bytes>) throws(DecodingFailure) -> [AttributeValue] {
    let count = try reader.readCount()
    var identity: [AttributeValue] = []
    identity.reserveCapacity(min(count, 16))
    for _ in 0..<count { identity.append(try reader.readRequiredValue()) }
    return identity
  }
}

/// What reads a state part by part (`StateCoding.visit`), in the order stored.
protocol StateVisitor {
  /// Whether to read the attributes (the link lists come before them).
  var readsAttributes: Bool { get }
  /// The entity (`resolved` when the model has it), identity and since; false skips the rest.
  mutating func visitHeader(entity: String, resolved: ResolvedEntity?, identity: [AttributeValue], since: UInt64)
    -> Bool
  mutating func visitLinks(count: Int)
  /// A whole link list.
  mutating func visitList(_ relationshipID: UInt32, _ targets: [UInt64])
  /// A link list kept as a change (undo images only).
  mutating func visitDelta(_ relationshipID: UInt32, chain: Int, _ change: LinkChange)
  mutating func visitAttributes(count: Int)
  /// An attribute, with its position among the entity's stored attribute names when it has one.
  mutating func visitAttribute(_ name: String, position: Int?, _ value: AttributeValue)
}

/// Builds a `StoredState`.
private struct StoredStateBuilder: StateVisitor {
  let readsAttributes: Bool
  var stored = StoredState(state: ObjectState(entity: "", identity: []), since: 0, deltas: [:])

  init(readsAttributes: Bool) { self.readsAttributes = readsAttributes }

  mutating func visitHeader(entity: String, resolved: ResolvedEntity?, identity: [AttributeValue], since: UInt64)
    -> Bool
  {
    stored.state = ObjectState(entity: entity, identity: identity)
    stored.since = since
    return true
  }
  mutating func visitLinks(count: Int) { stored.state.links.reserveCapacity(count) }
  mutating func visitList(_ relationshipID: UInt32, _ targets: [UInt64]) {
    stored.state.links[relationshipID] = LinkTargets(targets)
  }
  mutating func visitDelta(_ relationshipID: UInt32, chain: Int, _ change: LinkChange) {
    stored.deltas[relationshipID] = (chain, change)
  }
  mutating func visitAttributes(count: Int) {
    stored.state.attributes = AttributeList(minimumCapacity: min(count, 256))
  }
  mutating func visitAttribute(_ name: String, position: Int?, _ value: AttributeValue) {
    stored.state.attributes[name] = value
  }
}

/// A decoded state or undo image.
struct StoredState {
  var state: ObjectState
  /// The batch that began the object's life then.
  var since: UInt64
  /// In an undo image, the lists kept as changes (`StoredLinkList`), which `state` lacks
  /// until they are applied to the list after the batch.
  var deltas: [UInt32: (chain: Int, change: LinkChange)]
}

/// How an undo image keeps a long unordered link list.
///
/// A long list that changes a little in each of many batches (a producer gaining albums
/// import after import) would make whole-list images grow with the square of its length. An
/// undo image keeps such a list as the change that turns the list after its batch back into
/// the list before, as long as the chain of such changes up to the next whole list (a newer
/// image's, or the current state's) stays within the list's length; then it is written whole
/// again. `chain` adds, for each image of the run, the ids it changed plus the square root of
/// the list's length, so an as-of read follows at most about √n images for a list of n.
enum StoredLinkList {
  /// Shortest list kept as changes; shorter lists are cheaper whole.
  static let minimumDeltaLength = 64

  /// What one image adds to a chain besides the ids it changed, for a list of `length`.
  static func entryWeight(forLength length: Int) -> Int { Int(Double(length).squareRoot()) }
}
