import CLMDB

/// Bytes lent for the length of one call: a value in LMDB's map (`Transaction.withBorrowedValue`,
/// `Transaction.forEachBorrowed`), or an array's storage (`BorrowedBytes.withBytes(of:_:)`).
///
/// It reads in place, with no copy. Keep it only inside the call that lends it: once the
/// call returns, the memory may be reused. Every read is checked against `count`, so a bad
/// index stops the program rather than reading outside the value; decoders guard their
/// positions against `count` first, so stored bytes never reach that check.
public struct BorrowedBytes {
  @usableFromInline let base: UnsafeRawBufferPointer

  @usableFromInline init(_ base: UnsafeRawBufferPointer) { self.base = base }

  /// The number of bytes.
  @inlinable public var count: Int { base.count }

  /// The byte at `index`.
  @inlinable public subscript(index: Int) -> UInt8 {
    precondition(index >= 0 && index < base.count, "a byte outside the borrowed value")
    return base.load(fromByteOffset: index, as: UInt8.self)
  }

  /// The eight bytes from `offset` on as a number, most significant first.
  @inlinable public func bigEndianUInt64(at offset: Int) -> UInt64 {
    precondition(offset >= 0 && offset <= base.count - 8, "a number outside the borrowed value")
    return UInt64(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }

  /// A copy of the bytes in `range`.
  @inlinable public func copy(_ range: Range<Int>) -> [UInt8] {
    precondition(range.lowerBound >= 0 && range.upperBound <= base.count, "a range outside the borrowed value")
    return Array(UnsafeRawBufferPointer(rebasing: base[range]))
  }

  /// Calls `body` with the bytes as a span.
  @inlinable public func withSpan<R>(_ body: (Span<UInt8>) throws -> R) rethrows -> R {
    try body(base.assumingMemoryBound(to: UInt8.self).span)
  }

  /// Appends the bytes in `range` to `bytes`.
  @inlinable public func append(_ range: Range<Int>, to bytes: inout [UInt8]) {
    precondition(range.lowerBound >= 0 && range.upperBound <= base.count, "a range outside the borrowed value")
    bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: base[range]).assumingMemoryBound(to: UInt8.self))
  }

  /// The bytes in `range` as UTF-8 text, or nil when they are not valid UTF-8.
  @inlinable public func string(_ range: Range<Int>) -> String? {
    precondition(range.lowerBound >= 0 && range.upperBound <= base.count, "a range outside the borrowed value")
    let bytes = UnsafeRawBufferPointer(rebasing: base[range]).assumingMemoryBound(to: UInt8.self)
    guard let text = try? UTF8Span(validating: bytes.span) else { return nil }
    return String(copying: text)
  }

  /// Calls `body` with the bytes in `range` as UTF-8 text, in place; nil when they are not
  /// valid UTF-8.
  @inlinable public func withUTF8<R>(_ range: Range<Int>, _ body: (UTF8Span) throws -> R) rethrows -> R? {
    precondition(range.lowerBound >= 0 && range.upperBound <= base.count, "a range outside the borrowed value")
    let bytes = UnsafeRawBufferPointer(rebasing: base[range]).assumingMemoryBound(to: UInt8.self)
    // ASCII (most keys and names) is valid UTF-8: one loop checks it, faster than validating.
    if !bytes.contains(where: { $0 >= 0x80 }) {
      return try body(unsafe UTF8Span(unchecked: bytes.span, isKnownASCII: true))
    }
    guard let text = try? UTF8Span(validating: bytes.span) else { return nil }
    return try body(text)
  }

  /// Whether the bytes in `range` are `other`.
  @inlinable public func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool {
    precondition(range.lowerBound >= 0 && range.upperBound <= base.count, "a range outside the borrowed value")
    return UnsafeRawBufferPointer(rebasing: base[range]).elementsEqual(other)
  }

  /// Calls `body` with `array`'s bytes lent in place.
  public static func withBytes<R>(of array: [UInt8], _ body: (BorrowedBytes) throws -> R) rethrows -> R {
    try array.withUnsafeBytes { try body(BorrowedBytes($0)) }
  }
}

extension Transaction {
  /// Calls `body` with the bytes stored under `key`, lent in place (no copy; valid only inside
  /// `body`), or returns nil when the key is absent.
  ///
  /// Inlinable over a non-generic lookup, so that a caller's `body` is specialised and
  /// inlined rather than called through generic thunks on every read.
  @inlinable public func withBorrowedValue<R>(
    forKey key: [UInt8], in database: Database, _ body: (BorrowedBytes) throws -> R
  ) throws -> R? {
    guard let bytes = try key.withUnsafeBytes({ try lookUp($0, in: database) }) else { return nil }
    return try body(BorrowedBytes(bytes))
  }

  /// `withBorrowedValue(forKey:in:_:)` for a key that is `key`'s eight bytes, most significant
  /// first (an id): the key is not allocated.
  @inlinable public func withBorrowedValue<R>(
    forBigEndianKey key: UInt64, in database: Database, _ body: (BorrowedBytes) throws -> R
  ) throws -> R? {
    guard let bytes = try withUnsafeBytes(of: key.bigEndian, { try lookUp($0, in: database) }) else { return nil }
    return try body(BorrowedBytes(bytes))
  }

  /// `withBorrowedValue(forKey:in:_:)` for a key of at most `capacity` bytes, which `writeKey`
  /// writes into room on the stack: no array is allocated for it.
  @inlinable public func withBorrowedValue<R>(
    forKeyOfAtMost capacity: Int, writtenBy writeKey: (inout OutputSpan<UInt8>) -> Void, in database: Database,
    _ body: (BorrowedBytes) throws -> R
  ) throws -> R? {
    try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { room in
      var key = OutputSpan(buffer: room, initializedCount: 0)
      writeKey(&key)
      let count = key.finalize(for: room)
      guard let bytes = try lookUp(UnsafeRawBufferPointer(start: room.baseAddress, count: count), in: database) else {
        return nil
      }
      return try body(BorrowedBytes(bytes))
    }
  }

  /// The bytes stored under `key` in place, or nil when it is absent: valid until the
  /// transaction ends or writes, so only the lending calls above use it, within their call.
  @usableFromInline func lookUp(_ key: UnsafeRawBufferPointer, in database: Database) throws -> UnsafeRawBufferPointer?
  {
    let txn = try handle
    var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var value = MDB_val()
    let code = mdb_get(txn, database.handle, &keyValue, &value)
    if code == MDB_NOTFOUND { return nil }
    try check(code, "get from \(database.name)")
    return UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
  }

  /// Calls `body` with the key and the value of the first entry at or after `start` whose key
  /// starts with `prefix`, both lent in place (valid only during that call); nil when there
  /// is none.
  @inlinable public func withFirstBorrowed<R>(
    in database: Database, prefix: [UInt8], atOrAfter start: [UInt8],
    _ body: (_ key: BorrowedBytes, _ value: BorrowedBytes) throws -> R
  ) throws -> R? {
    guard let (key, value) = try firstEntry(in: database, prefix: prefix, atOrAfter: start) else { return nil }
    return try body(BorrowedBytes(key), BorrowedBytes(value))
  }

  /// The key and value of that entry in place, or nil: valid until the transaction ends or
  /// writes (the cursor's closing does not move LMDB's pages), so only `withFirstBorrowed`
  /// uses it, within its call. Not generic, so that the lending call specialises in its
  /// caller with no metadata made at run time.
  @usableFromInline func firstEntry(in database: Database, prefix: [UInt8], atOrAfter start: [UInt8]) throws
    -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer)?
  {
    try withCursor(on: database) { cursor -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer)? in
      guard try cursor.rawSeek(atOrAfter: start) else { return nil }
      return try cursor.rawCurrent { key, value in
        key.count >= prefix.count && key.starts(with: prefix) ? (key, value) : nil
      }
    }
  }

  /// Calls `body` with the key and the value of each entry whose key starts with `prefix`,
  /// in key order, both lent in place (valid only during that call). `body` returns false to
  /// stop.
  public func forEachBorrowed(
    in database: Database, prefix: [UInt8], _ body: (_ key: BorrowedBytes, _ value: BorrowedBytes) throws -> Bool
  ) throws {
    try forEachRaw(in: database, prefix: prefix) { key, value in try body(BorrowedBytes(key), BorrowedBytes(value)) }
  }

  /// Calls `body` with each entry whose key starts with `prefix`, in key order, read in place,
  /// and a buffer: when it returns true, the buffer's bytes replace the entry's value where the
  /// cursor stands, with no second search. The borrowed bytes are valid until `body` returns,
  /// and not after; the buffer is reused from one entry to the next.
  public func replaceEach(
    in database: Database, prefix: [UInt8],
    _ body: (_ key: BorrowedBytes, _ value: BorrowedBytes, _ replacement: inout [UInt8]) throws -> Bool
  ) throws {
    try withCursor(on: database) { cursor in
      var more = try cursor.rawSeek(atOrAfter: prefix)
      // The key is copied before the put: a value of another size moves the entry, key and all.
      var key: [UInt8] = []
      var replacement: [UInt8] = []
      while more {
        let step = try cursor.rawCurrent { rawKey, value -> (goOn: Bool, replace: Bool) in
          guard rawKey.count >= prefix.count, rawKey.starts(with: prefix) else { return (false, false) }
          guard try body(BorrowedBytes(rawKey), BorrowedBytes(value), &replacement) else { return (true, false) }
          if key.count == rawKey.count {
            key.withUnsafeMutableBytes { $0.copyMemory(from: rawKey) }
          } else {
            key = Array(rawKey)
          }
          return (true, true)
        }
        guard step.goOn else { return }
        if step.replace { try cursor.replaceCurrent(with: replacement, key: key) }
        more = try cursor.rawMove(next: true)
      }
    }
  }
}
