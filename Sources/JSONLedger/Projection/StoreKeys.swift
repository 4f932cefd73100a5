import Foundation

/// Byte encodings of the store's keys.
enum StoreKeys {
  static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
  static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

  /// Overwrites 8 bytes at `offset` with `value`, big-endian (reusing a key buffer saves an
  /// allocation per put).
  static func setBigEndian(_ value: UInt64, in bytes: inout [UInt8], at offset: Int) {
    precondition(offset >= 0 && offset + 8 <= bytes.count, "an 8-byte field lies inside its key")
    // One bounds check above instead of one per byte: the compiler unrolls this loop.
    for index in 0..<8 {
      bytes[offset &+ index] = UInt8(truncatingIfNeeded: value &>> (56 &- 8 &* UInt64(index)))
    }
  }

  /// Overwrites 4 bytes at `offset` with `value`, big-endian.
  static func setBigEndian(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
    precondition(offset >= 0 && offset + 4 <= bytes.count, "a 4-byte field lies inside its key")
    for index in 0..<4 {
      bytes[offset &+ index] = UInt8(truncatingIfNeeded: value &>> (24 &- 8 &* UInt32(index)))
    }
  }

  static func readBigEndian64(_ bytes: some Collection<UInt8>) -> UInt64 {
    bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
  }

  static func batch(_ id: UInt64) -> [UInt8] { bigEndian(id) }
  static func object(_ id: UInt64) -> [UInt8] { bigEndian(id) }

  static func history(_ objectID: UInt64, _ batchID: UInt64) -> [UInt8] {
    var key = [UInt8](repeating: 0, count: 16)
    setBigEndian(objectID, in: &key, at: 0)
    setBigEndian(batchID, in: &key, at: 8)
    return key
  }

  /// Room left under LMDB's 511-byte key limit; longer identities are hashed.
  static let identityLimit = 400

  /// The `keys` database key for an identity, and the full encoding kept in the value for
  /// the collision check. The encoding preserves order for strings and numbers; an identity
  /// longer than `identityLimit` keeps its first bytes and ends with a marker and an FNV-1a
  /// hash of the whole (a colliding hash is detected by comparing the full encoding).
  static func identity(root: UInt32, _ values: [AttributeValue]) -> (key: [UInt8], full: [UInt8]) {
    var full: [UInt8] = []
    full.reserveCapacity(32)
    full.append(contentsOf: repeatElement(0, count: 4))
    setBigEndian(root, in: &full, at: 0)
    for value in values { appendOrdered(value, to: &full) }
    guard full.count > identityLimit else { return (full, full) }
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in full {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01B3
    }
    return (Array(full.prefix(identityLimit)) + [0xFF] + bigEndian(hash), full)
  }

  /// The prefix of `indexes` entries for one attribute value (the value's ordered encoding,
  /// cut at `identityLimit` bytes: a cut value can match others, so callers compare values).
  static func index(root: UInt32, attribute: String, _ value: AttributeValue) -> [UInt8] {
    var encoded: [UInt8] = []
    appendOrdered(value, to: &encoded)
    return bigEndian(root) + Array(attribute.utf8) + [0] + encoded.prefix(identityLimit)
  }

  private static func appendOrdered(_ value: AttributeValue, to bytes: inout [UInt8]) {
    func escaped(_ text: String) {
      // Copied whole (a memory copy), then redone byte by byte in the rare case of a NUL.
      let start = bytes.count
      bytes.append(contentsOf: text.utf8)
      if bytes[start...].contains(0) {
        bytes.removeSubrange(start...)
        for byte in text.utf8 {
          bytes.append(byte)
          if byte == 0 { bytes.append(0xFF) }
        }
      }
      bytes.append(0)
      bytes.append(1)
    }
    switch value {
    case .string(let text):
      bytes.append(1)
      escaped(text)
    case .integer(let number):
      bytes.append(2)
      bytes += bigEndian(UInt64(bitPattern: number) ^ (1 << 63))
    case .double(let number):
      bytes.append(3)
      bytes += bigEndian(orderedBits(number))
    case .float(let number):
      bytes.append(3)
      bytes += bigEndian(orderedBits(Double(number)))
    case .decimal(let number):
      bytes.append(4)
      escaped("\(number)")
    case .bool(let flag):
      bytes += [5, flag ? 1 : 0]
    case .date(let date):
      bytes.append(6)
      bytes += bigEndian(UInt64(bitPattern: DateCoding.microseconds(date)) ^ (1 << 63))
    case .uuid(let uuid):
      bytes.append(7)
      bytes += uuid.bytes
    case .url(let url):
      bytes.append(8)
      escaped(url.absoluteString)
    case .binary(let data):
      bytes.append(9)
      bytes += data
    case .json(let json):
      bytes.append(10)
      escaped(JSONWriter().string(from: json))
    }
  }

  private static func orderedBits(_ value: Double) -> UInt64 {
    let bits = value.bitPattern
    return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
  }
}
