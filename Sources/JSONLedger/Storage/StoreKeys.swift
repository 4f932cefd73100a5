import Foundation
import JSONLedgerSupport

/// Byte encodings of the store's keys.
enum StoreKeys {
  static func batch(_ id: UInt64) -> [UInt8] { [UInt8](bigEndian: id) }
  static func object(_ id: UInt64) -> [UInt8] { [UInt8](bigEndian: id) }

  /// The first bytes of every id under a root entity (`ObjectIDs`): the prefix of its range
  /// in `state` and `history`.
  static func rootPrefix(_ root: UInt32) -> [UInt8] {
    Array([UInt8](bigEndian: ObjectIDs.firstID(root: root)).prefix(3))
  }

  /// A `reverts` key: the reverted batch, then the batch that reverted it.
  static func revert(of revertedBatchID: UInt64, by batchID: UInt64) -> [UInt8] {
    [UInt8](bigEndian: revertedBatchID) + [UInt8](bigEndian: batchID)
  }

  static func history(_ objectID: UInt64, _ batchID: UInt64) -> [UInt8] {
    var key = Array(repeatElement(UInt8(0), count: 16))  // not `repeating:` (CONTRIBUTING.md, "Hot paths")
    key.setBigEndian(objectID, at: 0)
    key.setBigEndian(batchID, at: 8)
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
    var hasher = FNV1a()
    hasher.combine(full.span)
    return Array(full.prefix(identityLimit)) + [0xFF] + [UInt8](bigEndian: hasher.value)
  }

  /// The `idempotency` database key for an idempotency key (its UTF-8, hashed like a long
  /// identity), and, for a hashed one, the whole key, which the value keeps after the batch
  /// id so that two keys sharing a prefix stay two keys.
  static func idempotency(_ key: String) -> (key: [UInt8], full: [UInt8]?) {
    let full = Array(key.utf8)
    let stored = identityKey(forEncoded: full)
    return (stored, stored.count == full.count ? nil : full)
  }

  /// The prefix of `indexes` entries for one attribute value (the value's ordered encoding,
  /// cut at `identityLimit` bytes: a cut value can match others, so callers compare values).
  static func index(root: UInt32, attribute: String, _ value: AttributeValue) -> [UInt8] {
    indexPrefix(root: root, attribute: attribute) + indexValue(value)
  }

  /// The start of every `indexes` entry of one attribute.
  static func indexPrefix(root: UInt32, attribute: String) -> [UInt8] {
    [UInt8](bigEndian: root) + Array(attribute.utf8) + [0]
  }

  /// A value as an `indexes` entry holds it: its ordered encoding, cut at `identityLimit` bytes.
  static func indexValue(_ value: AttributeValue) -> [UInt8] {
    var encoded: [UInt8] = []
    OrderedEncoding.append(value, to: &encoded)
    return Array(encoded.prefix(identityLimit))
  }
}
