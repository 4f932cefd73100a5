/// Encodings of object states in `objects`, `views` and `history`.
enum ObjectStateCoding {
  static func encodeHeader(entity: String, identity: [AttributeValue]) -> [UInt8] {
    var writer = BinaryWriter()
    writer.write(entity)
    writer.write(varint: UInt64(identity.count))
    for value in identity { writer.write(value) }
    return writer.bytes
  }

  static func decodeHeader(_ bytes: [UInt8]) throws(DecodingFailure) -> (entity: String, identity: [AttributeValue]) {
    var reader = BinaryReader(bytes)
    let entity = try reader.readString()
    var identity: [AttributeValue] = []
    for _ in 0..<(try reader.readCount()) { identity.append(try reader.readRequiredValue()) }
    return (entity, identity)
  }

  static func encodeAttributes(_ attributes: [String: AttributeValue]) -> [UInt8] {
    var writer = BinaryWriter()
    writer.write(attributes: attributes)
    return writer.bytes
  }

  static func decodeAttributes(_ bytes: [UInt8]) throws(DecodingFailure) -> [String: AttributeValue] {
    var reader = BinaryReader(bytes)
    return try reader.readAttributes()
  }

  /// A history entry: the whole state, or no bytes for "absent after this batch".
  static func encodeState(_ state: ObjectState?) -> [UInt8] {
    guard let state else { return [] }
    return encodeState(state, encodedAttributes: encodeAttributes(state.attributes))
  }

  /// A history entry of a live object whose attributes are already encoded (as for `views`).
  static func encodeState(_ state: ObjectState, encodedAttributes: [UInt8]) -> [UInt8] {
    var writer = BinaryWriter(capacity: encodedAttributes.count + 64)
    writer.write(state.entity)
    writer.write(varint: UInt64(state.identity.count))
    for value in state.identity { writer.write(value) }
    writer.append(encoded: encodedAttributes)
    writer.write(links: state.links)
    return writer.bytes
  }

  static func decodeState(_ bytes: [UInt8]) throws(DecodingFailure) -> ObjectState? {
    guard !bytes.isEmpty else { return nil }
    var reader = BinaryReader(bytes)
    let entity = try reader.readString()
    var identity: [AttributeValue] = []
    for _ in 0..<(try reader.readCount()) { identity.append(try reader.readRequiredValue()) }
    return ObjectState(entity: entity, identity: identity, attributes: try reader.readAttributes(), links: try reader.readLinks())
  }
}
