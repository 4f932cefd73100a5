/// Values by name, for the model's small fixed sets of names (entities, attributes,
/// relationships, the JSON keys that feed them), which are looked up several times for every
/// object an import maps or a read returns.
///
/// A `Dictionary` runs SipHash over the name on every lookup; this table hashes its UTF-8 with
/// FNV-1a, finds it by open addressing, and compares the stored name only when the hashes
/// match. A name read from JSON is a different string from the model's, so the name itself
/// has to be hashed: what is saved is the cost of the hash.
public struct NameTable<Value: Sendable>: Sendable, ExpressibleByDictionaryLiteral {
  @usableFromInline var names: [String] = []
  @usableFromInline var values: [Value] = []
  /// By bucket: 0 when empty, else the upper half of the name's hash and 1 + its index
  /// (`hash & 0xFFFF_FFFF_0000_0000 | index + 1`).
  @usableFromInline var buckets: [UInt64] = Array(repeating: 0, count: 8)

  @inlinable
  public init() {}

  @inlinable
  public init(dictionaryLiteral elements: (String, Value)...) {
    for (name, value) in elements { updateValue(value, forName: name) }
  }

  /// The table of a dictionary's names and values.
  @inlinable
  public init(_ dictionary: [String: Value]) {
    for (name, value) in dictionary { updateValue(value, forName: name) }
  }

  @inlinable public var count: Int { names.count }
  @inlinable public var isEmpty: Bool { names.isEmpty }

  /// The value stored under `name`, or nil.
  @inlinable
  public subscript(name: String) -> Value? {
    let hash = Self.hash(name)
    var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
    while true {
      let entry = buckets[bucket]
      if entry == 0 { return nil }
      let index = Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
      if entry >> 32 == hash >> 32, names[index] == name { return values[index] }
      bucket = (bucket + 1) & (buckets.count - 1)
    }
  }

  /// Stores `value` under `name`, replacing the value stored there before. (Names are never
  /// removed: the model's tables only grow while they are built.)
  @inlinable
  public mutating func updateValue(_ value: Value, forName name: String) {
    let hash = Self.hash(name)
    var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
    while buckets[bucket] != 0 {
      let index = Int(truncatingIfNeeded: buckets[bucket] & 0xFFFF_FFFF) - 1
      if names[index] == name {
        values[index] = value
        return
      }
      bucket = (bucket + 1) & (buckets.count - 1)
    }
    names.append(name)
    values.append(value)
    buckets[bucket] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(names.count)
    // At most half full, so probes stay short.
    if names.count * 2 > buckets.count { rebuild(bucketCount: buckets.count * 2) }
  }

  @usableFromInline
  mutating func rebuild(bucketCount: Int) {
    var rebuilt = [UInt64](repeating: 0, count: bucketCount)
    for index in names.indices {
      let hash = Self.hash(names[index])
      var bucket = Int(truncatingIfNeeded: hash) & (bucketCount - 1)
      while rebuilt[bucket] != 0 { bucket = (bucket + 1) & (bucketCount - 1) }
      rebuilt[bucket] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(index + 1)
    }
    buckets = rebuilt
  }

  @inlinable
  static func hash(_ name: String) -> UInt64 { FNV1a.hash(name.utf8.span) }
}
