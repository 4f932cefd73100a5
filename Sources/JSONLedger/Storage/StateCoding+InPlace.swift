/// Reading one part of a current state where it lies, for `StoredObject`: the parts before it
/// are skipped (their lengths read, nothing built), the parts after it are not touched.
extension StateCoding {
  /// The entity of a state and where its identity starts.
  static func entity<Bytes: ByteSource>(of bytes: Bytes, model: Model) throws(DecodingFailure) -> (
    name: String, resolved: ResolvedEntity?, identityStart: Int
  ) {
    var reader = ByteReader(bytes)
    let (name, resolved) = try readEntity(&reader, model: model)
    return (name, resolved, reader.position)
  }

  /// Where the identity of a state of the entity numbered `number` starts; nil for a state of
  /// another entity. The usual check of an object read by key, made with no name read.
  static func identityStart<Bytes: ByteSource>(of bytes: Bytes, ifOfEntityNumbered number: UInt32)
    throws(DecodingFailure) -> Int?
  {
    var reader = ByteReader(bytes)
    guard try reader.readCount() == Int(number) else { return nil }
    return reader.position
  }

  /// The identity values of a state whose identity starts at `start`.
  static func identity<Bytes: ByteSource>(of bytes: Bytes, from start: Int) throws(DecodingFailure)
    -> [AttributeValue]
  {
    var reader = ByteReader(bytes, position: start)
    return try readIdentity(&reader)
  }

  /// Where the identity of a state lies when it is one string (its UTF-8 bytes); nil for
  /// another identity.
  static func soleStringIdentity<Bytes: ByteSource>(of bytes: Bytes, model: Model) throws(DecodingFailure)
    -> Range<Int>?
  {
    var reader = ByteReader(bytes)
    _ = try readEntity(&reader, model: model)
    guard try reader.readCount() == 1, reader.nextByte == 1 else { return nil }
    _ = try reader.readByte()
    let count = try reader.readCount()
    let start = reader.position
    try reader.skip(count)
    return start..<start + count
  }

  /// A reader past the identity and since, at the link lists.
  private static func links<Bytes: ByteSource>(of bytes: Bytes, from identityStart: Int) throws(DecodingFailure)
    -> ByteReader<Bytes>
  {
    var reader = ByteReader(bytes, position: identityStart)
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }
    _ = try reader.readVarint()
    return reader
  }

  /// The targets of link list `relationshipID` (empty when the state has none).
  static func linkList<Bytes: ByteSource>(_ relationshipID: UInt32, of bytes: Bytes, from identityStart: Int)
    throws(DecodingFailure) -> [UInt64]
  {
    var reader = try links(of: bytes, from: identityStart)
    for _ in 0..<(try reader.readCount()) {
      let id = try reader.readVarint()
      guard try reader.readByte() == 0 else {
        throw DecodingFailure(reason: "a current state keeps a list as a change")
      }
      if id == UInt64(relationshipID) { return try reader.readCompactIDs() }
      try reader.skipCompactIDs()
    }
    return []
  }

  /// The value of the attribute numbered `number` (or, for an attribute the model lacks,
  /// named `name`), or nil when the state has none.
  static func attribute<Bytes: ByteSource>(
    numbered number: UInt32?, named name: String, of bytes: Bytes, from identityStart: Int
  ) throws(DecodingFailure) -> AttributeValue? {
    var reader = try links(of: bytes, from: identityStart)
    for _ in 0..<(try reader.readCount()) {
      _ = try reader.readVarint()
      guard try reader.readByte() == 0 else {
        throw DecodingFailure(reason: "a current state keeps a list as a change")
      }
      try reader.skipCompactIDs()
    }
    for _ in 0..<(try reader.readCount()) {
      let reference = try reader.readCount()
      let found: Bool
      if reference == 0 {
        found = try reader.readString() == name
      } else {
        found = UInt64(reference) == number.map(UInt64.init)
      }
      guard found else {
        try reader.skipValue()
        continue
      }
      return try value(of: bytes, at: reader.position, identityStart: identityStart)
    }
    return nil
  }

  /// The attribute value that starts at `start` of a state whose identity starts at
  /// `identityStart`.
  static func value<Bytes: ByteSource>(of bytes: Bytes, at start: Int, identityStart: Int) throws(DecodingFailure)
    -> AttributeValue
  {
    var reader = ByteReader(bytes, position: try valueStart(of: bytes, at: start, identityStart: identityStart))
    return try reader.readRequiredValue()
  }

  /// Where the attribute value written at `start` lies: there, or, for an identity value
  /// (written as a reference to the identity before it), where the identity holds it.
  static func valueStart<Bytes: ByteSource>(of bytes: Bytes, at start: Int, identityStart: Int)
    throws(DecodingFailure) -> Int
  {
    guard start < bytes.count, bytes[start] == 14 else { return start }
    var reference = ByteReader(bytes, position: start + 1)
    let index = try reference.readCount()
    var identity = ByteReader(bytes, position: identityStart)
    guard index < (try identity.readCount()) else {
      throw DecodingFailure(reason: "identity value \(index) does not exist at byte \(start)")
    }
    for _ in 0..<index { try identity.skipValue() }
    return identity.position
  }

  /// Where each part of a current state of `entity` whose identity starts at `identityStart`
  /// begins, found in one pass that decodes nothing: for reading many of its parts.
  static func locateParts<Bytes: ByteSource>(
    of bytes: Bytes, entity: ResolvedEntity, from identityStart: Int, into parts: inout StateParts
  ) throws(DecodingFailure) {
    var reader = ByteReader(bytes, position: identityStart)
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }
    _ = try reader.readVarint()
    parts.lists.removeAll(keepingCapacity: true)
    for _ in 0..<(try reader.readCount()) {
      let id = UInt32(truncatingIfNeeded: try reader.readVarint())
      guard try reader.readByte() == 0 else {
        throw DecodingFailure(reason: "a current state keeps a list as a change")
      }
      parts.lists.append((id, reader.position))
      try reader.skipCompactIDs()
    }
    let count = entity.storedAttributeNames.count
    if parts.attributes.count == count {
      for index in parts.attributes.indices { parts.attributes[index] = -1 }
    } else {
      parts.attributes = Array(repeating: -1, count: count)
    }
    parts.named.removeAll(keepingCapacity: true)
    parts.isPlaceholder = false
    for _ in 0..<(try reader.readCount()) {
      let reference = try reader.readCount()
      if reference == 0 {
        // Stored by its name: a snapshot lets it stand over a numbered value of that name.
        let name = try reader.readString()
        if let position = entity.storedAttributePositions[name] {
          parts.named.append((position, reader.position))
        } else if name == AttributeList.placeholderMark {
          parts.isPlaceholder = true
        }
      } else {
        guard let position = entity.position(ofAttributeNumber: reference) else {
          throw DecodingFailure(reason: "attribute \(reference) of \(entity.name) is not in the model")
        }
        parts.attributes[position] = reader.position
      }
      try reader.skipValue()
    }
    for (position, start) in parts.named { parts.attributes[position] = start }
    guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after a state") }
  }
}

/// Where the parts of one current state begin (`StateCoding.locateParts`); one value serves
/// a whole scan, its buffers reused.
struct StateParts {
  /// The start of each attribute's value, by position among the entity's stored attribute
  /// names; -1 for an attribute the state has no value of.
  var attributes: [Int] = []
  /// The start of each link list's ids, with its relationship id.
  var lists: [(id: UInt32, start: Int)] = []
  /// Attributes stored by name that the model has, by position.
  var named: [(position: Int, start: Int)] = []
  /// Whether the state carries the placeholder mark (`AttributeList.placeholderMark`).
  var isPlaceholder = false

  /// Where the link list `id` starts; nil when the state has none.
  func list(_ id: UInt32) -> Int? {
    for list in lists where list.id == id { return list.start }
    return nil
  }
}
