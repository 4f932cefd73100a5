/// Unsigned integers as big-endian bytes, most significant first: the one encoding of every
/// fixed-width number in keys, records and states, so that keys sort as their numbers do.
extension Array where Element == UInt8 {
  /// The bytes of `value`, most significant first.
  init<Integer: FixedWidthInteger & UnsignedInteger>(bigEndian value: Integer) {
    self = []
    appendBigEndian(value)
  }

  /// Appends the bytes of `value`, most significant first, in one memory copy (an
  /// `OutputSpan` costs more to set up than the few bytes it would write).
  mutating func appendBigEndian<Integer: FixedWidthInteger & UnsignedInteger>(_ value: Integer) {
    Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
  }

  /// Overwrites the bytes at `offset` with `value`, most significant first (a reused key
  /// buffer gets its fields set in place), in one store: a byte at a time, each byte's
  /// subscript checked the array's uniqueness and bounds again.
  mutating func setBigEndian<Integer: FixedWidthInteger & UnsignedInteger>(_ value: Integer, at offset: Int) {
    let width = MemoryLayout<Integer>.size
    precondition(offset >= 0 && offset + width <= count, "a fixed-width field lies inside its buffer")
    withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: offset, as: Integer.self) }
  }
}

extension FixedWidthInteger where Self: UnsignedInteger {
  /// The number in the first bytes of `bytes`, most significant first (from fewer bytes when
  /// `bytes` is shorter).
  init(bigEndianBytes bytes: some Collection<UInt8>) {
    var value: Self = 0
    for byte in bytes.prefix(Self.bitWidth / 8) { value = value &<< 8 | Self(byte) }
    self = value
  }

  /// The number in `bytes` from `start` on, most significant first (from fewer bytes when
  /// they end sooner): a part of a key read in place.
  init(bigEndianBytes bytes: some ByteSource, from start: Int) {
    var value: Self = 0
    for index in start..<Swift.min(start + Self.bitWidth / 8, bytes.count) { value = value &<< 8 | Self(bytes[index]) }
    self = value
  }

  /// The number in the first bytes of a span read in place, most significant first. Always
  /// inlined: a read by key reads several, and the optimizer's choice moved with unrelated
  /// changes elsewhere in the module (1.4k instructions a read when outlined).
  @inline(__always)
  init(bigEndianBytes bytes: Span<UInt8>) {
    var value: Self = 0
    for index in 0..<Swift.min(Self.bitWidth / 8, bytes.count) { value = value &<< 8 | Self(bytes[index]) }
    self = value
  }
}
