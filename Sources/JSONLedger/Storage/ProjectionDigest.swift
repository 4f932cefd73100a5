import LMDB

/// A digest of the projections, kept up to date by every write to them, so that `verify` can
/// check them against the log by reading each entry once instead of replaying the log.
///
/// The digest is the wrapping sum, over every entry of every projection, of a 64-bit hash of
/// the entry's database, key and value. A sum, so that a write updates it where it happens (the
/// old entry's hash taken out, the new one's put in), in whatever order entries are written,
/// and a store rebuilt by replay sums to the same value as the one written batch by batch.
/// It finds damage and writes that went around the projector; it is not a defence against
/// someone who forges entries and the digest together.
///
/// `meta` keeps it with the head and the first batch it was taken at (`Kept`). A write by a
/// version of JSONLedger that did not keep it, such as a compact, leaves the kept head or first
/// batch behind the store's, and `verify` then replays the log instead of trusting it.
struct ProjectionDigest: Equatable, Sendable {
  /// The wrapping sum of the entries' hashes.
  private(set) var sum: UInt64 = 0

  /// The projection an entry belongs to, fed into its hash so that one key and value in two
  /// databases hash apart.
  enum Part: UInt64, CaseIterable {
    case keys = 1
    case state, history, idempotency, indexes, reverts
  }

  /// Counts an entry written where there was none.
  mutating func add(_ part: Part, key: Span<UInt8>, value: Span<UInt8>) {
    sum &+= Self.hash(part, key: key, value: value)
  }

  /// Counts an entry as gone.
  mutating func remove(_ part: Part, key: Span<UInt8>, value: Span<UInt8>) {
    sum &-= Self.hash(part, key: key, value: value)
  }

  /// Counts as gone an entry whose hash was taken when it was read (`hash`).
  mutating func remove(hash: UInt64) {
    sum &-= hash
  }

  /// The hash of one entry: the part and both lengths, then the key's and the value's bytes
  /// sixteen at a time (a full-width multiply of two words each, as wyhash does), then a final
  /// mix, so that any change of a byte changes about half the bits of the hash. Words are read
  /// little-endian on every machine.
  static func hash(_ part: Part, key: Span<UInt8>, value: Span<UInt8>) -> UInt64 {
    var state = (part.rawValue &<< 56) ^ (UInt64(key.count) &<< 28) ^ UInt64(value.count)
    state = (state ^ 0x243F_6A88_85A3_08D3) &* 0x9E37_79B9_7F4A_7C15
    mix(key.bytes, into: &state)
    mix(value.bytes, into: &state)
    // MurmurHash3's 64-bit finaliser.
    state ^= state &>> 33
    state &*= 0xFF51_AFD7_ED55_8CCD
    state ^= state &>> 33
    state &*= 0xC4CE_B9FE_1A85_EC53
    state ^= state &>> 33
    return state
  }

  private static func mix(_ bytes: RawSpan, into state: inout UInt64) {
    let count = bytes.byteCount
    func word(at offset: Int) -> UInt64 {
      UInt64(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    func fold(_ word: UInt64) {
      state = (state ^ word) &* 0x9E37_79B9_7F4A_7C15
      state ^= state &>> 29
    }
    var offset = 0
    while offset &+ 16 <= count {
      let product = (word(at: offset) ^ 0xA076_1D64_78BD_642F).multipliedFullWidth(by: word(at: offset &+ 8) ^ state)
      state = product.high ^ product.low
      offset &+= 16
    }
    if offset &+ 8 <= count {
      fold(word(at: offset))
      offset &+= 8
    }
    let remaining = count &- offset
    guard remaining > 0 else { return }
    if count >= 8 {
      // The last eight bytes, read at once: the ones not yet folded are its high bytes.
      fold(word(at: count &- 8) &>> UInt64((8 &- remaining) &* 8))
    } else {
      var tail: UInt64 = 0
      for index in 0..<remaining {
        tail |= UInt64(bytes.unsafeLoad(fromByteOffset: offset &+ index, as: UInt8.self)) &<< UInt64(index &* 8)
      }
      fold(tail)
    }
  }
}

extension ProjectionDigest {
  /// The digest `meta` keeps, with the head and first batch of the log it was taken at.
  struct Kept: Equatable {
    var head: UInt64
    var firstBatch: UInt64
    var digest: ProjectionDigest

    /// The digest kept in `txn`, or nil when there is none (a store of a version that did not
    /// keep one) or its bytes are not a digest's.
    static func read(_ txn: Transaction, _ layout: StoreLayout) throws -> Kept? {
      try txn.withValue(forKey: MetaKey.projectionDigest, in: layout.meta) { bytes -> Kept? in
        guard bytes.count == 24 else { return nil }
        var digest = ProjectionDigest()
        digest.sum = UInt64(bigEndianBytes: bytes.extracting(16...))
        return Kept(
          head: UInt64(bigEndianBytes: bytes), firstBatch: UInt64(bigEndianBytes: bytes.extracting(8...)),
          digest: digest)
      } ?? nil
    }

    func write(_ txn: Transaction, _ layout: StoreLayout) throws {
      var bytes: [UInt8] = []
      bytes.reserveCapacity(24)
      bytes.appendBigEndian(head)
      bytes.appendBigEndian(firstBatch)
      bytes.appendBigEndian(digest.sum)
      try txn.put(bytes, forKey: MetaKey.projectionDigest, in: layout.meta)
    }
  }

  /// The digest of the projections as they stand at `extent`, for a write to carry on from:
  /// nothing yet for empty projections (a new store, or one whose projections are being
  /// rebuilt), the kept one when it was taken at this very extent, and nil when the store has
  /// none to trust (its writes then keep none, and `verify` replays).
  static func continuing(_ txn: Transaction, _ layout: StoreLayout, at extent: LogExtent) throws -> ProjectionDigest? {
    if extent.head == 0 { return ProjectionDigest() }
    guard let kept = try Kept.read(txn, layout), kept.head == extent.head, kept.firstBatch == extent.firstBatch
    else { return nil }
    return kept.digest
  }

  /// Keeps `digest` as the projections' at `extent`, or, when the write had none to carry
  /// on from, removes a digest left by an earlier extent.
  static func keep(_ digest: ProjectionDigest?, _ txn: Transaction, _ layout: StoreLayout, at extent: LogExtent)
    throws
  {
    if let digest {
      try Kept(head: extent.head, firstBatch: extent.firstBatch, digest: digest).write(txn, layout)
    } else {
      _ = try txn.delete(MetaKey.projectionDigest, in: layout.meta)
    }
  }

  /// The digest of the projections as they are in `txn`, each entry read in place once, and
  /// the number of entries; `visit` sees each entry's part and key on the way.
  static func computed(
    _ txn: Transaction, _ layout: StoreLayout, visiting visit: (Part, Span<UInt8>) -> Void = { _, _ in }
  ) throws -> (digest: ProjectionDigest, entries: Int) {
    var digest = ProjectionDigest()
    var entries = 0
    for part in Part.allCases {
      try txn.forEachInPlace(in: layout.database(of: part), prefix: []) { key, value in
        digest.add(part, key: key, value: value)
        entries += 1
        visit(part, key)
        return true
      }
    }
    return (digest, entries)
  }
}

extension StoreLayout {
  /// The database of a projection.
  func database(of part: ProjectionDigest.Part) -> Database {
    switch part {
    case .keys: keys
    case .state: state
    case .history: history
    case .idempotency: idempotency
    case .indexes: indexes
    case .reverts: reverts
    }
  }
}
