import Foundation
import LMDB

/// Bytes that do not decode: a truncated or corrupt stored value.
struct DecodingFailure: Error, CustomStringConvertible {
  let reason: String
  var description: String { reason }
}

/// Bytes a `ByteReader` reads: an array, or a value lent in place from the map.
protocol ByteSource {
  var count: Int { get }
  subscript(index: Int) -> UInt8 { get }
  /// A copy of the bytes in `range`.
  func copy(_ range: Range<Int>) -> [UInt8]
  /// The bytes in `range` as UTF-8 text, or nil when they are not valid UTF-8.
  func string(_ range: Range<Int>) -> String?
  /// Whether the bytes in `range` are `other`.
  func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool
  /// Appends the bytes in `range` to `bytes`.
  func append(_ range: Range<Int>, to bytes: inout [UInt8])
}

extension Array: ByteSource where Element == UInt8 {
  func copy(_ range: Range<Int>) -> [UInt8] { Array(self[range]) }

  func append(_ range: Range<Int>, to bytes: inout [UInt8]) { bytes.append(contentsOf: self[range]) }

  func string(_ range: Range<Int>) -> String? {
    let raw = self[range]
    // ASCII is valid UTF-8 and `decoding` is the fast path; the validating initializer is not
    // specialised, so it is kept for the rest.
    return raw.contains(where: { $0 >= 0x80 })
      ? String(validating: raw, as: UTF8.self) : String(decoding: raw, as: UTF8.self)
  }

  func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool { self[range].elementsEqual(other) }
}

extension BorrowedBytes: ByteSource {}

/// Reads what `BinaryWriter` wrote from an array (the usual case).
typealias BinaryReader = ByteReader<[UInt8]>

/// Reads what `BinaryWriter` wrote; every read is bounds-checked and throws on bad input.
struct ByteReader<Bytes: ByteSource> {
  private let bytes: Bytes
  private(set) var position: Int

  init(_ bytes: Bytes, position: Int = 0) {
    self.bytes = bytes
    self.position = position
  }

  var isAtEnd: Bool { position >= bytes.count }

  /// The byte at the position, not read yet; nil at the end.
  var nextByte: UInt8? { position < bytes.count ? bytes[position] : nil }

  @inline(__always)
  mutating func readByte() throws(DecodingFailure) -> UInt8 {
    guard position < bytes.count else { throw DecodingFailure(reason: "truncated at byte \(position)") }
    defer { position += 1 }
    return bytes[position]
  }

  @inline(__always)
  mutating func readVarint() throws(DecodingFailure) -> UInt64 {
    // Most varints are one byte.
    if position < bytes.count, bytes[position] < 0x80 {
      position += 1
      return UInt64(bytes[position - 1])
    }
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = try readByte()
      guard shift < 64 else { throw DecodingFailure(reason: "varint too long at byte \(position)") }
      value |= UInt64(byte & 0x7F) << shift
      if byte < 0x80 { return value }
      shift += 7
    }
  }

  @inline(__always)
  mutating func readCount() throws(DecodingFailure) -> Int {
    let value = try readVarint()
    guard value <= UInt64(bytes.count - min(position, bytes.count)) || value < 1 << 20 else {
      throw DecodingFailure(reason: "count \(value) exceeds the data at byte \(position)")
    }
    return Int(value)
  }

  @inline(__always)
  mutating func readSigned() throws(DecodingFailure) -> Int64 {
    let raw = try readVarint()
    return ZigZag.decode(raw)
  }

  /// A fixed-width number, most significant byte first.
  mutating func readBigEndian<Integer: FixedWidthInteger & UnsignedInteger>(
    _: Integer.Type
  ) throws(DecodingFailure) -> Integer {
    var value: Integer = 0
    for _ in 0..<(Integer.bitWidth / 8) { value = value &<< 8 | Integer(try readByte()) }
    return value
  }

  mutating func readRaw(_ count: Int) throws(DecodingFailure) -> [UInt8] {
    guard count >= 0, position + count <= bytes.count else {
      throw DecodingFailure(reason: "truncated at byte \(position)")
    }
    defer { position += count }
    return bytes.copy(position..<position + count)
  }

  /// Moves past `count` bytes.
  mutating func skip(_ count: Int) throws(DecodingFailure) {
    guard count >= 0, position + count <= bytes.count else {
      throw DecodingFailure(reason: "truncated at byte \(position)")
    }
    position += count
  }

  mutating func readString() throws(DecodingFailure) -> String {
    let count = try readCount()
    guard position + count <= bytes.count else { throw DecodingFailure(reason: "truncated at byte \(position)") }
    guard let text = bytes.string(position..<position + count) else {
      throw DecodingFailure(reason: "invalid UTF-8 at byte \(position)")
    }
    position += count
    return text
  }

  mutating func readOptionalString() throws(DecodingFailure) -> String? {
    try readByte() == 0 ? nil : try readString()
  }

  mutating func readValue() throws(DecodingFailure) -> AttributeValue? {
    let tag = try readByte()
    switch tag {
    case 0: return nil
    case 1: return .string(try readString())
    case 2: return .integer(try readSigned())
    case 3: return .double(Double(bitPattern: try readBigEndian(UInt64.self)))
    case 4: return .float(Float(bitPattern: try readBigEndian(UInt32.self)))
    case 5:
      let text = try readString()
      guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
        throw DecodingFailure(reason: "bad decimal \(text)")
      }
      return .decimal(decimal)
    case 6: return .bool(false)
    case 7: return .bool(true)
    case 8: return .date(DateCoding.date(microseconds: try readSigned()))
    case 9:
      let raw = try readRaw(16)
      let uuid = UUID(
        uuid: (
          raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12],
          raw[13], raw[14], raw[15]
        ))
      return .uuid(uuid)
    case 10:
      let text = try readString()
      guard let url = URL(string: text) else { throw DecodingFailure(reason: "bad URL \(text)") }
      return .url(url)
    case 11: return .binary(Data(try readRaw(try readCount())))
    case 12: return .json(try readJSON(depth: 0))
    case 13:
      let seconds = try readSigned()
      let (microseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
      guard !overflow else { throw DecodingFailure(reason: "a date out of range at byte \(position)") }
      return .date(DateCoding.date(microseconds: microseconds))
    default: throw DecodingFailure(reason: "unknown value tag \(tag) at byte \(position - 1)")
    }
  }

  /// A value written by `write(_:identity:)`: a value, or a reference to one of `identity`.
  mutating func readValue(identity: [AttributeValue]) throws(DecodingFailure) -> AttributeValue {
    guard position < bytes.count, bytes[position] == 14 else { return try readRequiredValue() }
    position += 1
    let index = try readCount()
    guard index < identity.count else {
      throw DecodingFailure(reason: "identity value \(index) does not exist at byte \(position)")
    }
    return identity[index]
  }

  /// Ids written by `write(compactIDs:)`.
  mutating func readCompactIDs() throws(DecodingFailure) -> [UInt64] {
    var count = try readCompactIDCount()
    var ids: [UInt64] = []
    guard count > 0 else { return ids }
    if count >= Self.longListIDs { return try readLongCompactIDs(count) }
    ids.reserveCapacity(min(count, 1 << 16))
    var previous: UInt64?
    while let id = try readCompactID(after: previous, remaining: &count) {
      ids.append(id)
      previous = id
    }
    return ids
  }

  /// The length from which a list of ids is read into its array's room directly: below it,
  /// asking for that room costs more than appending.
  static var longListIDs: Int { 64 }

  /// `count` ids written by `write(compactIDs:)`, their count read: written into the array's
  /// room as they are read, where appending checked the array's uniqueness and room for each.
  @inline(never)
  private mutating func readLongCompactIDs(_ count: Int) throws(DecodingFailure) -> [UInt64] {
    var remaining = count
    guard let first = try readCompactID(after: nil, remaining: &remaining) else { return [] }
    // Each later id takes a byte at least: a count past the bytes left is no room to ask for.
    guard remaining <= bytes.count - position else {
      throw DecodingFailure(reason: "\(count) ids exceed the data at byte \(position)")
    }
    // The position in a local, and the bytes: `self`'s own are reached through memory.
    let bytes = self.bytes
    var at = position
    defer { position = at }
    return try [UInt64](capacity: count) { (ids: inout OutputSpan<UInt64>) throws(DecodingFailure) in
      ids.append(first)
      var previous = first
      for _ in 0..<remaining {
        // A signed difference, most often one byte.
        guard at < bytes.count else { throw DecodingFailure(reason: "truncated at byte \(at)") }
        var raw = UInt64(bytes[at])
        at += 1
        if raw >= 0x80 {
          position = at - 1
          raw = try readVarint()
          at = position
        }
        previous &+= UInt64(bitPattern: ZigZag.decode(raw))
        ids.append(previous)
      }
    }
  }

  /// The number of ids written by `write(compactIDs:)`, read before them
  /// (`readCompactID(after:remaining:)` reads them one at a time).
  mutating func readCompactIDCount() throws(DecodingFailure) -> Int { try readCount() }

  /// The next of the ids written by `write(compactIDs:)`, after `previous` (nil for the
  /// first); nil once `remaining` is 0.
  @inline(__always)
  mutating func readCompactID(after previous: UInt64?, remaining: inout Int) throws(DecodingFailure) -> UInt64? {
    guard remaining > 0 else { return nil }
    remaining -= 1
    // The first id is its root and sequence, each later one a signed difference.
    if let previous { return previous &+ UInt64(bitPattern: try readSigned()) }
    let root = try readVarint()
    let sequence = try readVarint()
    guard root <= UInt64(UInt32.max), sequence <= ObjectIDs.sequenceMask else {
      throw DecodingFailure(reason: "an object id out of range at byte \(position)")
    }
    return ObjectIDs.make(root: UInt32(root), sequence: sequence)
  }

  /// Moves past a value written by `write(_:identity:)` without decoding it.
  mutating func skipValue() throws(DecodingFailure) {
    let tag = try readByte()
    switch tag {
    case 1, 5, 10, 11: try skip(try readCount())
    case 2, 8, 13: _ = try readVarint()
    case 3: try skip(8)
    case 4: try skip(4)
    case 6, 7: return
    case 9: try skip(16)
    case 12: _ = try readJSON(depth: 0)
    case 14: _ = try readVarint()
    default: throw DecodingFailure(reason: "unknown value tag \(tag) at byte \(position - 1)")
    }
  }

  /// Moves past ids written by `write(compactIDs:)`.
  mutating func skipCompactIDs() throws(DecodingFailure) {
    let count = try readCount()
    guard count > 0 else { return }
    // The first id is two varints, each later one a signed difference (one varint).
    for _ in 0...count { _ = try readVarint() }
  }

  mutating func readRequiredValue() throws(DecodingFailure) -> AttributeValue {
    guard let value = try readValue() else { throw DecodingFailure(reason: "missing value at byte \(position)") }
    return value
  }

  mutating func readJSON(depth: Int) throws(DecodingFailure) -> JSONValue {
    guard depth <= JSONParser.maximumDepth else { throw DecodingFailure(reason: "JSON nested too deep") }
    let tag = try readByte()
    switch tag {
    case 0: return .null
    case 1: return .bool(false)
    case 2: return .bool(true)
    case 3: return .number(JSONNumber(validLiteral: try readString()))
    case 4: return .string(try readString())
    case 5:
      let count = try readCount()
      var elements: [JSONValue] = []
      for _ in 0..<count { elements.append(try readJSON(depth: depth + 1)) }
      return .array(elements)
    case 6:
      let count = try readCount()
      var members: [JSONObject.Member] = []
      for _ in 0..<count { members.append(.init(key: try readString(), value: try readJSON(depth: depth + 1))) }
      return .object(JSONObject(members))
    default: throw DecodingFailure(reason: "unknown JSON tag \(tag) at byte \(position - 1)")
    }
  }

  /// A length-prefixed string: one of `known` at or after `nextKnown` (which then moves past
  /// it; with names sorted as written, the ones skipped are absent), or a new string.
  mutating func readString(expecting known: [(name: String, utf8: [UInt8])], from nextKnown: inout Int)
    throws(DecodingFailure) -> String
  {
    let start = position
    let count = try readCount()
    guard position + count <= bytes.count else { throw DecodingFailure(reason: "truncated at byte \(position)") }
    for index in nextKnown..<known.count where known[index].utf8.count == count {
      if bytes.bytes(position..<(position + count), equal: known[index].utf8) {
        nextKnown = index + 1
        position += count
        return known[index].name
      }
    }
    position = start
    return try readString()
  }

  /// An id list of ascending gaps (format-3 records).
  mutating func readAscendingIDs() throws(DecodingFailure) -> [UInt64] {
    let count = try readCount()
    var ids: [UInt64] = []
    ids.reserveCapacity(count)
    var previous: UInt64 = 0
    for index in 0..<count {
      let gap = try readVarint()
      guard gap > 0 || index == 0, gap <= UInt64.max - previous else {
        throw DecodingFailure(reason: "an id list is not ascending at byte \(position)")
      }
      previous += gap
      ids.append(previous)
    }
    return ids
  }

  mutating func readIDs() throws(DecodingFailure) -> [UInt64] {
    let count = try readCount()
    var ids: [UInt64] = []
    ids.reserveCapacity(count)
    for _ in 0..<count { ids.append(try readVarint()) }
    return ids
  }
}
