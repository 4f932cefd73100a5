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

  /// The identity values of a state whose identity starts at `start`.
  static func identity<Bytes: ByteSource>(of bytes: Bytes, from start: Int) throws(DecodingFailure)
    -> [AttributeValue]
  {
    var reader = ByteReader(bytes, position: start)
    return try readIdentity(&reader)
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
      // An identity value is written as a reference to the identity before it.
      guard reader.nextByte == 14 else { return try reader.readRequiredValue() }
      return try reader.readValue(identity: identity(of: bytes, from: identityStart))
    }
    return nil
  }
}
