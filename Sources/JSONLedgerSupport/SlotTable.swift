/// Object id → slot: the resolver's index of the objects a batch touches, looked up many
/// times per object.
///
/// Open addressing with linear probing and a multiplicative (Fibonacci) hash. Object ids are
/// counters; `Dictionary` would run SipHash over each one, which costs several times the
/// multiply and shift this table needs. The hash spreads consecutive ids evenly, so probes
/// stay short with the table up to three quarters full: a batch of just over a power of two
/// objects (1,050,000) takes 2M buckets, not 4M (32 MB less at its memory's peak).
public struct SlotTable {
  /// An id and its slot side by side: a hit reads one cache line, not one in each of two
  /// arrays (the buckets are reached at random, so each read is a miss in a large batch).
  @usableFromInline
  struct Bucket {
    /// 0 marks an empty bucket (the id 0 is kept aside in `zeroSlot`).
    @usableFromInline var id: UInt64
    @usableFromInline var slot: Int

    @inlinable
    init(id: UInt64, slot: Int) {
      self.id = id
      self.slot = slot
    }
  }

  @usableFromInline var buckets: [Bucket]
  @usableFromInline var zeroSlot: Int?
  @usableFromInline var count = 0
  /// 64 minus log2 of the bucket count: the hash keeps the top bits of the product.
  @usableFromInline var shift: UInt64

  @inlinable
  public init(minimumCapacity: Int = 8) {
    var bucketCount = 16
    while bucketCount * 3 < minimumCapacity * 4 { bucketCount *= 2 }
    buckets = Array(repeating: Bucket(id: 0, slot: 0), count: bucketCount)
    shift = UInt64(64 - bucketCount.trailingZeroBitCount)
  }

  @inlinable
  func bucket(of id: UInt64) -> Int {
    Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  /// The slot of `id`, if it has one.
  @inlinable
  public subscript(id: UInt64) -> Int? {
    if id == 0 { return zeroSlot }
    var index = bucket(of: id)
    while true {
      let found = buckets[index]
      if found.id == id { return found.slot }
      if found.id == 0 { return nil }
      index = (index + 1) & (buckets.count - 1)
    }
  }

  /// Gives `id` its slot (`id` must not have one yet).
  @inlinable
  public mutating func insert(_ id: UInt64, slot: Int) {
    if id == 0 {
      zeroSlot = slot
      return
    }
    // At most three quarters full, so probes stay short.
    if (count + 1) * 4 > buckets.count * 3 { rebuild(minimumCapacity: buckets.count) }
    var index = bucket(of: id)
    while buckets[index].id != 0 { index = (index + 1) & (buckets.count - 1) }
    buckets[index] = Bucket(id: id, slot: slot)
    count += 1
  }

  /// Makes room for `count` ids without growing.
  @inlinable
  public mutating func reserveCapacity(_ count: Int) {
    guard count * 4 > buckets.count * 3 else { return }
    rebuild(minimumCapacity: count)
  }

  @usableFromInline
  mutating func rebuild(minimumCapacity: Int) {
    var larger = SlotTable(minimumCapacity: max(minimumCapacity, count))
    for bucket in buckets where bucket.id != 0 { larger.insert(bucket.id, slot: bucket.slot) }
    larger.zeroSlot = zeroSlot
    self = larger
  }
}
