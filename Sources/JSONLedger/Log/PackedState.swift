/// The whole state of an object a batch creates, held as the bytes the `state` database will
/// keep for it (`StateCoding`), with since left at 0 until the record's batch id is known.
///
/// An album's state is about 60 bytes this way, in one heap block; as an `ObjectState` its attribute
/// list, link lists and identity take three blocks and about 350 bytes. A large batch holds
/// every state it creates until its record is written: the resolver packs each once the batch
/// is past it (`WorkingSet.packColdStates`), the record copies the values from these bytes,
/// and the projector writes them as they are.
struct PackedState: Sendable {
  /// `StateCoding`'s encoding of the state, since 0.
  let bytes: [UInt8]
  /// The state's entity, which names its attributes by number.
  let entity: ResolvedEntity

  /// The entity `state` packs under, or nil when its bytes would not read back as the same
  /// state: an entity the model does not have, an empty link list (a stored state keeps
  /// none), or a relationship whose order the entity does not tell as the model does.
  static func entity(packing state: borrowing ObjectState, model: Model) -> ResolvedEntity? {
    guard let entity = model.resolved(state.entity), entity.name == state.entity else { return nil }
    for (id, list) in state.links where list.isEmpty || model.isOrdered(id) != Self.isOrdered(id, in: entity) {
      return nil
    }
    return entity
  }

  /// `state` packed under `entity`, which `entity(packing:model:)` gave for it. `scratch` is
  /// reused between calls; the bytes kept are a copy of just the right size. The state is
  /// consumed: passed on, it is not copied (each copy retains its lists).
  init(_ state: consuming ObjectState, entity: ResolvedEntity, scratch: inout BinaryWriter) {
    scratch.removeAll()
    StateCoding.write(
      entity: state.entity, entity, identity: state.identity, attributes: state.attributes, links: state.links,
      since: 0, into: &scratch)
    // Copied from a buffer pointer: `Array(unsafeUninitializedCapacity:)` allocates through
    // the standard library's unspecialized code, which looks the storage's type up at run
    // time (CONTRIBUTING.md, "Hot paths").
    bytes = scratch.bytes.withUnsafeBufferPointer { Array($0) }
    self.entity = entity
    #if JSONLEDGER_INTERNAL_CHECKS
      precondition(self.state == state, "a packed state of \(entity.name) reads back as another state")
    #endif
  }

  /// Whether relationship `id` of an object of `entity` is ordered: a hidden reverse id (not
  /// one of the entity's relationships) never is.
  static func isOrdered(_ id: UInt32, in entity: ResolvedEntity) -> Bool {
    entity.relationships.first { $0.id == id }?.isOrdered ?? false
  }

  /// Whether relationship `id` of this object is ordered.
  func isOrdered(_ id: UInt32) -> Bool { Self.isOrdered(id, in: entity) }

  /// Where the parts of the bytes begin.
  struct Layout {
    /// The identity: its count, then its values.
    let identity: Range<Int>
    /// Since (one byte, 0).
    let since: Int
    /// How many link lists there are, and where the first begins.
    let listCount: Int
    let lists: Int
    /// How many attributes there are, and where the first begins.
    let attributeCount: Int
    let attributes: Int
  }

  var layout: Layout {
    read { reader throws(DecodingFailure) in
      let (identityStart, since) = try Self.identityAndSince(&reader)
      _ = try reader.readVarint()
      let listCount = try reader.readCount()
      let lists = reader.position
      for _ in 0..<listCount {
        _ = try reader.readVarint()
        _ = try reader.readByte()
        try reader.skipCompactIDs()
      }
      let attributeCount = try reader.readCount()
      return Layout(
        identity: identityStart..<since, since: since, listCount: listCount, lists: lists,
        attributeCount: attributeCount, attributes: reader.position)
    }
  }

  /// Reads past the entity and the identity: where the identity begins and where since lies.
  private static func identityAndSince(_ reader: inout BinaryReader) throws(DecodingFailure) -> (
    identity: Int, since: Int
  ) {
    _ = try reader.readVarint()
    let identity = reader.position
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }
    return (identity, reader.position)
  }

  /// The identity values.
  var identity: [AttributeValue] {
    read { reader throws(DecodingFailure) in
      _ = try reader.readVarint()
      return try StateCoding.readIdentity(&reader)
    }
  }

  /// The state, decoded whole.
  var state: ObjectState {
    read { reader throws(DecodingFailure) in
      _ = try reader.readVarint()
      let identity = try StateCoding.readIdentity(&reader)
      _ = try reader.readVarint()
      var state = ObjectState(entity: entity.name, identity: identity)
      let listCount = try reader.readCount()
      state.links.reserveCapacity(listCount)
      for _ in 0..<listCount {
        let id = UInt32(truncatingIfNeeded: try reader.readVarint())
        guard try reader.readByte() == 0 else { throw DecodingFailure(reason: "a packed list is not whole") }
        state.links[id] = LinkTargets(try reader.readCompactIDs())
      }
      let count = try reader.readCount()
      state.attributes = AttributeList(minimumCapacity: count)
      for _ in 0..<count {
        let name = try attributeName(&reader)
        state.attributes[name] = try reader.readValue(identity: identity)
      }
      return state
    }
  }

  /// Calls `body` with each attribute's name and the range of its value in `bytes` (as
  /// `BinaryWriter.write(_:identity:)` wrote it), in name order. `layout`: this state's.
  func forEachAttribute(from layout: Layout, _ body: (String, Range<Int>) throws -> Void) rethrows {
    var reader = BinaryReader(bytes, position: layout.attributes)
    for _ in 0..<layout.attributeCount {
      let (name, value) = expect { () throws(DecodingFailure) in
        let name = try attributeName(&reader)
        let start = reader.position
        try reader.skipValue()
        return (name, start..<reader.position)
      }
      try body(name, value)
    }
  }

  /// Calls `body` with each link list's relationship id and the range of its ids in `bytes`
  /// (as `BinaryWriter.write(compactIDs:)` wrote them), by relationship id. `layout`: this
  /// state's.
  func forEachList(from layout: Layout, _ body: (UInt32, Range<Int>) throws -> Void) rethrows {
    var reader = BinaryReader(bytes, position: layout.lists)
    for _ in 0..<layout.listCount {
      let (id, ids) = expect { () throws(DecodingFailure) in
        let id = UInt32(truncatingIfNeeded: try reader.readVarint())
        _ = try reader.readByte()
        let start = reader.position
        try reader.skipCompactIDs()
        return (id, start..<reader.position)
      }
      try body(id, ids)
    }
  }

  /// Appends the bytes with since set to `since`: the state as the `state` database keeps it.
  func write(since: UInt64, into writer: inout BinaryWriter) {
    // Found past the entity and the identity alone: the whole layout walks the lists too.
    let at = read { reader throws(DecodingFailure) in try Self.identityAndSince(&reader).since }
    writer.append(encoded: bytes[..<at])
    writer.write(varint: since)
    writer.append(encoded: bytes[(at + 1)...])
  }

  private func attributeName(_ reader: inout BinaryReader) throws(DecodingFailure) -> String {
    let reference = try reader.readCount()
    if reference == 0 { return try reader.readString() }
    guard let position = entity.position(ofAttributeNumber: reference) else {
      throw DecodingFailure(reason: "attribute \(reference) of \(entity.name) is not in the model")
    }
    return entity.storedAttributeNames[position].name
  }

  private func read<Result>(_ body: (inout BinaryReader) throws(DecodingFailure) -> Result) -> Result {
    var reader = BinaryReader(bytes)
    return expect { () throws(DecodingFailure) in try body(&reader) }
  }

  private func expect<Result>(_ body: () throws(DecodingFailure) -> Result) -> Result {
    do { return try body() } catch {
      // The bytes are this process's own: `StateCoding.write` wrote them from a state of this
      // entity, and nothing changes them after. They read back unless that writer and these
      // readers disagree, which no input can cause (the internal checks decode every packed
      // state once as it is made).
      preconditionFailure("a packed state of \(entity.name) does not read back: \(error)")
    }
  }
}
