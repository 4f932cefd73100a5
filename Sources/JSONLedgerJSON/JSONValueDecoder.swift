package import Foundation

/// Decodes `Decodable` values straight from a `JSONValue`, as `JSONDecoder` would from its
/// text, with nothing written or parsed: dates from strings through `date`, `Data` from
/// base64, `URL` from a string, `Decimal` from a number's exact literal, integers only when
/// the number fits exactly.
package struct JSONValueDecoder: Sendable {
  /// Turns a string into a date, or nil when it is none.
  package var date: @Sendable (String) -> Date?

  package init(date: @escaping @Sendable (String) -> Date?) { self.date = date }

  package func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    try ValueDecoder(value: value, codingPath: [], options: self).decodeValue(T.self)
  }
}

/// One value being decoded, at its coding path.
private struct ValueDecoder: Decoder {
  let value: JSONValue
  let codingPath: [any CodingKey]
  let options: JSONValueDecoder
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let object) = value else { throw mismatch([String: Any].self) }
    return KeyedDecodingContainer(KeyedContainer<Key>(object: object, decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let elements) = value else { throw mismatch([Any].self) }
    return UnkeyedContainer(elements: elements, decoder: self)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

  func child(_ value: JSONValue, at key: any CodingKey) -> ValueDecoder {
    ValueDecoder(value: value, codingPath: codingPath + [key], options: options)
  }

  func mismatch(_ type: Any.Type) -> DecodingError {
    .typeMismatch(
      type, .init(codingPath: codingPath, debugDescription: "expected \(type), found \(value.kindDescription)"))
  }

  func corrupted(_ reason: String) -> DecodingError {
    .dataCorrupted(.init(codingPath: codingPath, debugDescription: reason))
  }

  var isNull: Bool { value == .null }

  func decodeBool() throws -> Bool {
    guard case .bool(let flag) = value else { throw mismatch(Bool.self) }
    return flag
  }

  func decodeString() throws -> String {
    guard case .string(let text) = value else { throw mismatch(String.self) }
    return text
  }

  func decodeInteger<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
    guard case .number(let number) = value else { throw mismatch(type) }
    if let exact = number.int64Value, let result = Integer(exactly: exact) { return result }
    if let unsigned = UInt64(number.literal), let result = Integer(exactly: unsigned) { return result }
    throw corrupted("\(number) does not fit in \(Integer.self)")
  }

  func decodeFloatingPoint<Floating: BinaryFloatingPoint & LosslessStringConvertible>(_ type: Floating.Type) throws
    -> Floating
  {
    guard case .number(let number) = value else { throw mismatch(type) }
    return Floating(number.literal) ?? Floating(number.doubleValue)
  }

  /// A value of any type, with the types `JSONDecoder` treats as strings or numbers read so.
  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    let special: Any?
    switch type {
    case is Date.Type:
      let text = try decodeString()
      guard let date = options.date(text) else { throw corrupted("\"\(text)\" is not a date") }
      special = date
    case is URL.Type:
      let text = try decodeString()
      guard let url = URL(string: text) else { throw corrupted("\"\(text)\" is not a URL") }
      special = url
    case is Data.Type:
      let text = try decodeString()
      guard let data = Data(base64Encoded: text) else { throw corrupted("\"\(text)\" is not base64") }
      special = data
    case is Decimal.Type:
      guard case .number(let number) = value, let decimal = number.decimalValue else { throw mismatch(type) }
      special = decimal
    default:
      special = nil
    }
    guard let special else { return try T(from: self) }
    guard let result = special as? T else { throw mismatch(type) }
    return result
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let object: JSONObject
  let decoder: ValueDecoder

  var codingPath: [any CodingKey] { decoder.codingPath }
  var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

  func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

  private func child(_ key: Key) throws -> ValueDecoder {
    guard let value = object[key.stringValue] else {
      throw DecodingError.keyNotFound(
        key, .init(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
    }
    return decoder.child(value, at: key)
  }

  func decodeNil(forKey key: Key) throws -> Bool { try child(key).isNull }
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).decodeBool() }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).decodeString() }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).decodeFloatingPoint(type) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decodeFloatingPoint(type) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).decodeInteger(type) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).decodeInteger(type) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).decodeInteger(type) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).decodeInteger(type) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).decodeInteger(type) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).decodeInteger(type) }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decodeValue(type) }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try child(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder { decoder }
  func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let elements: [JSONValue]
  let decoder: ValueDecoder
  private(set) var currentIndex = 0

  init(elements: [JSONValue], decoder: ValueDecoder) {
    self.elements = elements
    self.decoder = decoder
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { elements.count }
  var isAtEnd: Bool { currentIndex >= elements.count }

  /// The next element's decoder, moving past it.
  private mutating func next(_ type: Any.Type) throws -> ValueDecoder {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type, .init(codingPath: codingPath, debugDescription: "the array ends after \(elements.count) elements"))
    }
    defer { currentIndex += 1 }
    return decoder.child(elements[currentIndex], at: IndexKey(intValue: currentIndex))
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, elements[currentIndex] == .null else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decodeBool() }
  mutating func decode(_ type: String.Type) throws -> String { try next(type).decodeString() }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decodeFloatingPoint(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decodeFloatingPoint(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).decodeInteger(type) }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decodeValue(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try next(type).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next([Any].self).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
  let decoder: ValueDecoder

  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool { decoder.isNull }
  func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool() }
  func decode(_ type: String.Type) throws -> String { try decoder.decodeString() }
  func decode(_ type: Double.Type) throws -> Double { try decoder.decodeFloatingPoint(type) }
  func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloatingPoint(type) }
  func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(type) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
}

/// An array position in a coding path.
private struct IndexKey: CodingKey {
  let intValue: Int?
  var stringValue: String { "\(intValue ?? 0)" }
  init(intValue: Int) { self.intValue = intValue }
  init?(stringValue: String) { nil }
}
