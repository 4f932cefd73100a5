import Foundation
import JSONLedgerSupport

/// Object ids by identity, for the identities a batch meets: the resolver's cache in front of
/// the `keys` database, looked up several times per object (an album's own key, its band's,
/// its producer's).
///
/// Keys are identities in `OrderedEncoding`, stored back to back in one byte array, hashed
/// with FNV-1a and found by open addressing. Hashing and comparing
/// these bytes costs a fraction of a `Dictionary` keyed by `[AttributeValue]`.
///
/// A bucket holds its entry's hash beside the entry's number, so that a probe past another
/// key (every probe of a key the table lacks, as each of a fresh import's) reads the bucket
/// array alone: in a large batch an entry and its bytes, reached at random, are each a cache
/// miss.
struct IdentityTable {
  /// 24 bytes: a large batch holds one per identity, at its memory's peak. A key's bytes
  /// start where the entry before's end (keys are only appended), so only the end is kept.
  private struct Entry {
    var isNew: Bool
    var end: Int
    var id: UInt64
  }

  /// Bytes an entry takes in the array (for a test of the layout).
  static var entryStride: Int { MemoryLayout<Entry>.stride }

  /// The most entries a table holds: a bucket holds 1 + an entry's index in 32 bits.
  static let maximumCount = Int(UInt32.max) - 1

  /// The encoded keys, back to back, in the order of their entries.
  private var bytes: [UInt8] = []
  private var entries: [Entry] = []
  /// By entry: the payload fingerprint the store holds for the identity. Empty while every
  /// one is 0, as in a batch of new objects, which then holds no array of zeros.
  private var payloadFingerprints: [UInt64] = []
  /// By bucket: the low 32 bits of its key's hash above 1 + the index of its entry, or 0 for
  /// an empty bucket.
  private var buckets: [UInt64] = Array(repeating: 0, count: 16)

  /// The id stored for an encoded identity, whether this batch created it, and the payload
  /// fingerprint the store held for it.
  func entry(forKey key: [UInt8]) -> (id: UInt64, isNew: Bool, payloadFingerprint: UInt64)? {
    lookUp(key).entry
  }

  /// Where a key looked up and not found would go: filing that key next (`set(_:forKey:isNew:
  /// payloadFingerprint:at:)`) takes it without hashing and probing again, as long as nothing
  /// was filed in between.
  struct Miss {
    fileprivate let bucket: Int
    fileprivate let hash: UInt32
    fileprivate let entryCount: Int
    fileprivate let bucketCount: Int
  }

  /// `entry(forKey:)`, and when the key is not there, where it would go.
  func lookUp(_ key: [UInt8]) -> (entry: (id: UInt64, isNew: Bool, payloadFingerprint: UInt64)?, miss: Miss?) {
    let (found, bucket, hash) = find(key)
    guard let index = found else {
      return (nil, Miss(bucket: bucket, hash: hash, entryCount: entries.count, bucketCount: buckets.count))
    }
    let entry = entries[index]
    return ((entry.id, entry.isNew, payloadFingerprint(index)), nil)
  }

  /// The entry holding `key`, or nil and the empty bucket where it would go; and its hash.
  private func find(_ key: [UInt8]) -> (entry: Int?, bucket: Int, hash: UInt32) {
    let hash = Self.hash(key)
    let tag = UInt64(hash) << 32
    var bucket = Int(hash) & (buckets.count - 1)
    while true {
      let word = buckets[bucket]
      if word == 0 { return (nil, bucket, hash) }
      if word & 0xFFFF_FFFF_0000_0000 == tag {
        let index = Int(truncatingIfNeeded: word & 0xFFFF_FFFF) - 1
        if matches(index, key) { return (index, bucket, hash) }
      }
      bucket = (bucket + 1) & (buckets.count - 1)
    }
  }

  /// Records the id of an encoded identity (replacing one recorded before); throws when the
  /// table already holds `maximumCount` other identities.
  /// `miss`: what looking `key` up last found, when nothing was filed since.
  mutating func set(
    _ id: UInt64, forKey key: [UInt8], isNew: Bool, payloadFingerprint: UInt64 = 0, at miss: Miss? = nil
  )
    throws(LedgerError)
  {
    // A miss still holds while no entry was added and the buckets were not rebuilt: the
    // bucket it names is still the first empty one on the key's probe path.
    let (found, bucket, hash): (entry: Int?, bucket: Int, hash: UInt32)
    if let miss, miss.entryCount == entries.count, miss.bucketCount == buckets.count {
      (found, bucket, hash) = (nil, miss.bucket, miss.hash)
    } else {
      (found, bucket, hash) = find(key)
    }
    if let index = found {
      entries[index].id = id
      entries[index].isNew = isNew
      setPayloadFingerprint(payloadFingerprint, at: index)
      return
    }
    guard entries.count < Self.maximumCount else {
      throw .invalidBatch("a batch can name at most \(Self.maximumCount) identities")
    }
    bytes += key
    entries.append(Entry(isNew: isNew, end: bytes.count, id: id))
    setPayloadFingerprint(payloadFingerprint, at: entries.count - 1)
    buckets[bucket] = UInt64(hash) << 32 | UInt64(entries.count)
    // At most three quarters full: a probe past another key reads only its bucket.
    if entries.count * 4 > buckets.count * 3 { rebuild(bucketCount: buckets.count * 2) }
  }

  private func payloadFingerprint(_ index: Int) -> UInt64 {
    index < payloadFingerprints.count ? payloadFingerprints[index] : 0
  }

  /// Sets entry `index`'s fingerprint. The array of them is made on the first that is not 0,
  /// up to that entry; an entry past its end has 0, and is filled out when it is set.
  private mutating func setPayloadFingerprint(_ fingerprint: UInt64, at index: Int) {
    if payloadFingerprints.isEmpty {
      guard fingerprint != 0 else { return }
      payloadFingerprints.reserveCapacity(entries.capacity)
    }
    if index < payloadFingerprints.count {
      payloadFingerprints[index] = fingerprint
    } else {
      payloadFingerprints.append(contentsOf: repeatElement(0, count: index - payloadFingerprints.count))
      payloadFingerprints.append(fingerprint)
    }
  }

  /// The ids created in this batch whose identity belongs to `root`.
  func newIDs(root: UInt32) -> [UInt64] {
    var rootBytes: [UInt8] = []
    rootBytes.appendBigEndian(root)
    return entries.indices.filter { index in
      let start = self.start(of: index)
      return entries[index].isNew && bytes[start..<(start + 4)].elementsEqual(rootBytes)
    }.map { entries[$0].id }
  }

  /// Makes room for `count` identities without growing.
  mutating func reserveCapacity(_ count: Int) {
    entries.reserveCapacity(count)
    bytes.reserveCapacity(count * 24)
    var bucketCount = buckets.count
    while bucketCount * 3 < count * 4 { bucketCount *= 2 }
    if bucketCount > buckets.count { rebuild(bucketCount: bucketCount) }
  }

  /// Where the key of entry `index` starts in `bytes`.
  private func start(of index: Int) -> Int { index == 0 ? 0 : entries[index - 1].end }

  private func matches(_ index: Int, _ key: [UInt8]) -> Bool {
    let offset = start(of: index)
    guard entries[index].end - offset == key.count else { return false }
    // One `memcmp`: a walk with a bounds check per byte costs several times as much.
    return bytes.withUnsafeBufferPointer { stored in
      key.withUnsafeBufferPointer { wanted in
        guard let storedBase = stored.baseAddress, let wantedBase = wanted.baseAddress,
          offset + wanted.count <= stored.count
        else { return wanted.isEmpty }
        return memcmp(storedBase + offset, wantedBase, wanted.count) == 0
      }
    }
  }

  private mutating func rebuild(bucketCount: Int) {
    let old = buckets
    buckets = Array(repeating: 0, count: bucketCount)
    for word in old where word != 0 {
      var bucket = Int(truncatingIfNeeded: word >> 32) & (bucketCount - 1)
      while buckets[bucket] != 0 { bucket = (bucket + 1) & (bucketCount - 1) }
      buckets[bucket] = word
    }
  }

  /// FNV-1a of the key, its low 32 bits.
  static func hash(_ key: [UInt8]) -> UInt32 { UInt32(truncatingIfNeeded: FNV1a.hash(key.span)) }
}
