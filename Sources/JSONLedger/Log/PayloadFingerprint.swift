/// A 64-bit fingerprint of what one mapped object's payload says: its entity, identity, the
/// attributes it names (with their values, or their clearing) and the relationships it names
/// (with the keys they point to; a nested object by its key too, as it is a payload of its
/// own with a fingerprint of its own).
///
/// The store keeps, beside each identity in `keys`, the fingerprint of the payload whose
/// application left the object as it is (0 when something else changed it since: another
/// payload, a link from another object, a revert, a deletion). A re-import whose payload for
/// an untouched object has that fingerprint would change nothing, so the resolver skips it
/// without reading the object. Two different payloads share a fingerprint with a chance of
/// about 2⁻⁶⁴.
///
/// The hash is FNV-1a over bytes, with whole words mixed in one multiply, fed field by field
/// (each with a tag or its length, so that no two payloads feed the same sequence) rather
/// than over an encoding built first, which cost several times as much.
struct PayloadFingerprint {
  /// The bit of a relationship id in a payload's mask (ids beyond 63 share bits, which only
  /// makes the resolver drop a fingerprint it could have kept).
  static func maskBit(_ relationshipID: UInt32) -> UInt64 {
    1 &<< UInt64(relationshipID & 63)
  }

  /// The relationships `object` names, as bits.
  static func mask(of object: borrowing MappedObject) -> UInt64 {
    var mask: UInt64 = 0
    for index in object.relationships.indices { mask |= maskBit(object.relationships[index].relationship.id) }
    return mask
  }

  private var hash: UInt64 = 0
  /// Cleared by a nested object without identity: a new one is made each time the payload
  /// is applied, so applying it again is never a no-op.
  private var isRepeatable = true
  /// The encoding of the rarer value types (reused).
  private var scratch = BinaryWriter(capacity: 64)

  /// The fingerprint of `object` (never 0, which marks "none"), or nil when applying it again
  /// would not be a no-op.
  mutating func fingerprint(of object: borrowing MappedObject) -> UInt64? {
    hash = 0xCBF2_9CE4_8422_2325
    isRepeatable = true
    feed(object)
    guard isRepeatable else { return nil }
    let folded = hash ^ (hash &>> 32)
    return folded == 0 ? 1 : folded
  }

  private mutating func feed(byte: UInt8) {
    hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
  }

  /// A whole word in one step; the shift carries its high bits down into later steps.
  private mutating func feed(word: UInt64) {
    hash = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
    hash ^= hash &>> 29
  }

  private mutating func feed(_ string: String) {
    let bytes = string.utf8.span
    feed(word: UInt64(bytes.count))
    for index in bytes.indices { feed(byte: bytes[index]) }
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
    case .bool(let flag)?:
      feed(byte: flag ? 4 : 5)
    case .date(let date)?:
      feed(byte: 6)
      feed(word: date.timeIntervalSinceReferenceDate.bitPattern)
    case let other?:
      scratch.removeAll()
      scratch.write(other)
      feed(byte: 7)
      feed(word: UInt64(scratch.bytes.count))
      for byte in scratch.bytes { feed(byte: byte) }
    }
  }

  private mutating func feed(_ object: borrowing MappedObject) {
    feed(word: UInt64(object.entity.id))
    feed(word: UInt64(object.identity?.count ?? 0))
    if let identity = object.identity {
      for index in identity.indices { feed(identity[index]) }
    }
    feed(word: UInt64(object.attributes.count))
    // Indices, not `for (name, value) in`: that copies (retains) every element.
    for index in object.attributes.indices {
      feed(object.attributes[index].name)
      feed(object.attributes[index].value)
    }
    feed(word: UInt64(object.relationships.count))
    for index in object.relationships.indices {
      feed(word: UInt64(object.relationships[index].relationship.id))
      switch object.relationships[index].value {
      case .clear:
        feed(byte: 0)
      case .toOne(let reference):
        feed(byte: 1)
        feed(reference)
      case .toMany(let references):
        feed(byte: 2)
        feed(word: UInt64(references.count))
        for reference in references { feed(reference) }
      }
    }
  }

  private mutating func feed(_ reference: ObjectReference) {
    switch reference {
    case .key(let entity, let identity, _):
      feed(key: entity, identity)
    case .object(let nested):
      guard let identity = nested.identity else {
        isRepeatable = false
        return
      }
      feed(key: nested.entity, identity)
    }
  }

  private mutating func feed(key entity: ResolvedEntity, _ identity: [AttributeValue]) {
    feed(word: UInt64(entity.id))
    feed(word: UInt64(identity.count))
    for index in identity.indices { feed(identity[index]) }
  }
}
