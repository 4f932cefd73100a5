import Foundation
import JSONLedgerSupport

/// A 64-bit fingerprint of what one mapped object's payload says, built by the mapper as it
/// maps: the entity, the attributes the payload names (with their values, or their
/// clearing) and the relationships it names, with the keys they point to (a nested object by
/// its key too: it is a payload of its own, with a fingerprint of its own).
///
/// The store keeps, beside each identity in `keys`, the fingerprint of the payload whose
/// application left the object as it is (0 once something else changed it: another payload,
/// a revert, a deletion, a link in a list the payload names). A re-import whose payload for
/// an object untouched in its batch has that fingerprint would change nothing, so the
/// resolver skips it without reading the object. Two different payloads share a fingerprint
/// with a chance of about 2⁻⁶⁴.
///
/// The hash is FNV-1a over bytes, with whole words mixed in one multiply, fed field by field
/// (each with a tag or its length, so that no two payloads feed the same sequence) while the
/// values are at hand, rather than over the finished object.
struct PayloadFingerprint: Sendable {
  private var hash = FNV1a()
  /// Cleared by a nested object without identity: a new one is made each time the payload
  /// is applied, so applying it again is never a no-op.
  private var isRepeatable = true
  /// The relationships the payload names, as bits (`maskBit`).
  private(set) var mask: UInt64 = 0
  /// The fingerprint of the payload's JSON text, for a payload staged from text
  /// (`SkimmedPayload.textFingerprint`): it stands in for the hash of the mapped values, so
  /// that the next import of the same text is recognised before anything is mapped.
  private var text: UInt64?
  /// Set for a payload whose fingerprint will be its text's (`awaitTextFingerprint`): the
  /// hash of its mapped values would never be read, so nothing is fed to it.
  private var awaitsText = false

  /// A fingerprint of a payload for `entity`, before any of its values.
  init(entity: ResolvedEntity) {
    feed(word: UInt64(entity.id))
  }

  /// The fingerprint (never 0, which marks "none"), or nil when applying the payload again
  /// would not be a no-op.
  var value: UInt64? {
    guard isRepeatable else { return nil }
    if let text { return text }
    // A text fingerprint promised and not given: no fingerprint, so never skipped.
    guard !awaitsText else { return nil }
    let folded = hash.folded
    return folded == 0 ? 1 : folded
  }

  /// Takes the fingerprint of the payload's JSON text as the value (never 0).
  mutating func adopt(textFingerprint: UInt64) {
    text = textFingerprint
  }

  /// Says that the fingerprint of the payload's text will be adopted once its end is known:
  /// from here on the values added are not hashed (the relationships still mark `mask`).
  mutating func awaitTextFingerprint() {
    awaitsText = true
  }

  /// The bit of a relationship id in a mask (ids beyond 63 share bits, which only makes the
  /// resolver drop a fingerprint it could have kept).
  static func maskBit(_ relationshipID: UInt32) -> UInt64 {
    1 &<< UInt64(relationshipID & 63)
  }

  /// An attribute the payload sets (nil: clears), by the hash of its name.
  mutating func add(attribute nameHash: UInt64, _ value: AttributeValue?) {
    guard !awaitsText else { return }
    feed(byte: 0)
    feed(word: nameHash)
    feed(value)
  }

  /// A relationship the payload names: `kind` is 0 for a null, 1 for a to-one, 2 for a
  /// to-many of `count` references, each added next with `add(key:)` or `addUnkeyedObject()`.
  mutating func add(relationship id: UInt32, kind: UInt8, count: Int) {
    mask |= Self.maskBit(id)
    guard !awaitsText else { return }
    feed(byte: 1)
    feed(word: UInt64(id))
    feed(byte: kind)
    feed(word: UInt64(count))
  }

  /// A reference to the object of `entity` with `identity` (by key, or nested): a key's one
  /// value given as `CollectionOfOne`, with no array of it.
  mutating func add(key entity: ResolvedEntity, _ identity: some Collection<AttributeValue>) {
    guard !awaitsText else { return }
    feed(word: UInt64(entity.id))
    feed(word: UInt64(identity.count))
    for value in identity { feed(value) }
  }

  /// A nested object without identity.
  mutating func addUnkeyedObject() {
    isRepeatable = false
  }

  private mutating func feed(byte: UInt8) {
    hash.combine(byte)
  }

  private mutating func feed(word: UInt64) {
    hash.combine(word: word)
  }

  private mutating func feed(_ string: String) {
    let bytes = string.utf8.span
    feed(word: UInt64(bytes.count))
    hash.combine(bytes)
  }

  private mutating func feed(_ value: AttributeValue?) {
    switch value {
    case nil: feed(byte: 0)
    case .string(let text)?:
      feed(byte: 1)
      feed(text)
    case .integer(let number)?:
      feed(byte: 2)
      feed(word: UInt64(bitPattern: number))
    case .double(let number)?:
      feed(byte: 3)
      feed(word: number.bitPattern)
    case .float(let number)?:
      feed(byte: 4)
      feed(word: UInt64(number.bitPattern))
    case .bool(let flag)?:
      feed(byte: flag ? 5 : 6)
    case .date(let date)?:
      feed(byte: 7)
      feed(word: date.timeIntervalSinceReferenceDate.bitPattern)
    case .decimal(let number)?:
      feed(byte: 8)
      feed("\(number)")
    case .uuid(let uuid)?:
      feed(byte: 9)
      feed(uuid.uuidString)
    case .url(let url)?:
      feed(byte: 10)
      feed(url.absoluteString)
    case .binary(let data)?:
      feed(byte: 11)
      feed(word: UInt64(data.count))
      for byte in data { feed(byte: byte) }
    case .json(let json)?:
      feed(byte: 12)
      feed(JSONWriter(options: []).string(from: json))  // member order counts, as in `==`
    }
  }
}
