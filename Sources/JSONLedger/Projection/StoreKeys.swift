import Foundation

/// Byte encodings of the store's keys.
enum StoreKeys {
  static func bigEndian(_ value: UInt64) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendBigEndian(value)
    return bytes
  }

  static func bigEndian(_ value: UInt32) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendBigEndian(value)
    return bytes
  }

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

  /// The first 8 bytes of a span read in place (fewer when it is shorter), big-endian.
  static func readBigEndian64(_ bytes: Span<UInt8>) -> UInt64 {
    var value: UInt64 = 0
    for index in 0..<min(8, bytes.count) { value = value << 8 | UInt64(bytes[index]) }
    return value
  }

  static func batch(_ id: UInt64) -> [UInt8] { bigEndian(id) }
  static func object(_ id: UInt64) -> [UInt8] { bigEndian(id) }

  static func history(_ objectID: UInt64, _ batchID: UInt64) -> [UInt8] {
    var key = [UInt8](repeating: 0, count: 16)
    setBigEndian(objectID, in: &key, at: 0)
    setBigEndian(batchID, in: &key, at: 8)
    return key
  }

  /// The fixed part of a `keys` value: object id and payload fingerprint, 8 bytes each.
  static let registrationLength = 16

  /// Room left under LMDB's 511-byte key limit; longer identities are hashed.
  static let identityLimit = 400

  /// The `keys` database key for an identity, and the full encoding (`OrderedEncoding`) kept
  /// in the value for the collision check.
  static func identity(root: UInt32, _ values: [AttributeValue]) -> (key: [UInt8], full: [UInt8]) {
    var full: [UInt8] = []
    full.reserveCapacity(32)
    OrderedEncoding.encodeIdentity(root: root, values, into: &full)
    return (identityKey(forEncoded: full), full)
  }

  /// The `keys` database key for an encoded identity: the encoding itself, or, when it is
  /// longer than `identityLimit`, its first bytes, a marker and an FNV-1a hash of the whole
  /// (a colliding hash is detected by comparing the full encoding kept in the value).
  static func identityKey(forEncoded full: [UInt8]) -> [UInt8] {
    guard full.count > identityLimit else { return full }
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in full {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01B3
    }
    return Array(full.prefix(identityLimit)) + [0xFF] + bigEndian(hash)
  }

  /// The prefix of `indexes` entries for one attribute value (the value's ordered encoding,
  /// cut at `identityLimit` bytes: a cut value can match others, so callers compare values).
  static func index(root: UInt32, attribute: String, _ value: AttributeValue) -> [UInt8] {
    var encoded: [UInt8] = []
    OrderedEncoding.append(value, to: &encoded)
    return bigEndian(root) + Array(attribute.utf8) + [0] + encoded.prefix(identityLimit)
  }
}
