import JSONLedgerSupport

/// Object ids by identity, for the identities a batch meets: the resolver's cache in front of
/// the `keys` database, looked up several times per object (an album's own key, its band's,
/// its producer's).
///
/// Keys are identities in `OrderedEncoding`, stored back to back in one byte array, hashed
/// with FNV-1a and found by open addressing. Hashing and comparing
/// these bytes costs a fraction of a `Dictionary` keyed by `[AttributeValue]`.
struct IdentityTable {
  private struct Entry {
    var hash: UInt64
    var start: Int
    var count: Int
    var id: UInt64
    var isNew: Bool
    var payloadFingerprint: UInt64
  }

  /// The encoded keys, back to back.
  private var bytes: [UInt8] = []
  private var entries: [Entry] = []
  /// By bucket: 1 + the index of its entry, or 0 for an empty bucket.
  private var buckets: [Int] = Array(repeating: 0, count: 16)

  /// The id stored for an encoded identity, whether this batch created it, and the payload
  /// fingerprint the store held for it.
  func entry(forKey key: [UInt8]) -> (id: UInt64, isNew: Bool, payloadFingerprint: UInt64)? {
    let hash = Self.hash(key)
    var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
    while true {
      let index = buckets[bucket] - 1
      if index < 0 { return nil }
      let entry = entries[index]
      if entry.hash == hash, matches(entry, key) { return (entry.id, entry.isNew, entry.payloadFingerprint) }
      bucket = (bucket + 1) & (buckets.count - 1)
    }
  }

  /// Records the id of an encoded identity (replacing one recorded before).
  mutating func set(_ id: UInt64, forKey key: [UInt8], isNew: Bool, payloadFingerprint: UInt64 = 0) {
    let hash = Self.hash(key)
    var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
    while true {
      let index = buckets[bucket] - 1
      if index < 0 { break }
      if entries[index].hash == hash, matches(entries[index], key) {
        entries[index].id = id
        entries[index].isNew = isNew
        entries[index].payloadFingerprint = payloadFingerprint
        return
      }
      bucket = (bucket + 1) & (buckets.count - 1)
    }
    entries.append(
      Entry(
        hash: hash, start: bytes.count, count: key.count, id: id, isNew: isNew, payloadFingerprint: payloadFingerprint))
    bytes += key
    buckets[bucket] = entries.count
    // At most half full, so probes stay short.
    if entries.count * 2 > buckets.count { rebuild(bucketCount: buckets.count * 2) }
  }

  /// The ids created in this batch whose identity belongs to `root`.
  func newIDs(root: UInt32) -> [UInt64] {
    var rootBytes: [UInt8] = []
    rootBytes.appendBigEndian(root)
    return entries.filter { $0.isNew && bytes[$0.start..<($0.start + 4)].elementsEqual(rootBytes) }.map(\.id)
  }

  /// Makes room for `count` identities without growing.
  mutating func reserveCapacity(_ count: Int) {
    entries.reserveCapacity(count)
    bytes.reserveCapacity(count * 24)
    var bucketCount = buckets.count
    while bucketCount < count * 2 { bucketCount *= 2 }
    if bucketCount > buckets.count { rebuild(bucketCount: bucketCount) }
  }

  private func matches(_ entry: Entry, _ key: [UInt8]) -> Bool {
    guard entry.count == key.count else { return false }
    var offset = entry.start
    for byte in key {
      if bytes[offset] != byte { return false }
      offset &+= 1
    }
    return true
  }

  private mutating func rebuild(bucketCount: Int) {
    buckets = Array(repeating: 0, count: bucketCount)
    for (index, entry) in entries.enumerated() {
      var bucket = Int(truncatingIfNeeded: entry.hash) & (bucketCount - 1)
      while buckets[bucket] != 0 { bucket = (bucket + 1) & (bucketCount - 1) }
      buckets[bucket] = index + 1
    }
  }

  static func hash(_ key: [UInt8]) -> UInt64 { FNV1a.hash(key.span) }
}
