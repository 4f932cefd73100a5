/// Appending variable-length integers and strings' UTF-8 to byte arrays, for every encoding
/// of the store (records, states, keys), each after one capacity check.
extension Array where Element == UInt8 {
  /// Appends `value` as an LEB128 varint: 7 bits per byte, least significant first, the high
  /// bit set on every byte but the last (1 to 10 bytes).
  @inlinable @inline(__always)
  public mutating func appendVarint(_ value: UInt64) {
    // Most varints (lengths, counts, small numbers) are one byte: appended where the caller
    // is, without a call.
    if value < 0x80 {
      append(UInt8(truncatingIfNeeded: value))
      return
    }
    appendLongVarint(value)
  }

  /// `appendVarint` of a value of two bytes or more.
  @inlinable
  mutating func appendLongVarint(_ value: UInt64) {
    // Two or three bytes (positions, lengths, most id deltas) cost less appended one by one.
    if value < 1 << 21 {
      append(UInt8(truncatingIfNeeded: value) | 0x80)
      if value < 1 << 14 {
        append(UInt8(truncatingIfNeeded: value &>> 7))
      } else {
        append(UInt8(truncatingIfNeeded: value &>> 7) | 0x80)
        append(UInt8(truncatingIfNeeded: value &>> 14))
      }
      return
    }
    append(addingCapacity: 10) { output in
      var rest = value
      while rest >= 0x80 {
        output.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest &>>= 7
      }
      output.append(UInt8(truncatingIfNeeded: rest))
    }
  }

  /// Appends the UTF-8 of `string`, copied from its span in one memory copy.
  /// `append(contentsOf: string.utf8)` goes through the generic sequence path, and a copy
  /// byte by byte through an `OutputSpan` checks its capacity at each byte: several times the
  /// cost, for the short strings (names, keys, values) written here.
  @inlinable
  public mutating func appendUTF8(of string: String) {
    string.utf8.span.withUnsafeBufferPointer { append(contentsOf: $0) }
  }
}
