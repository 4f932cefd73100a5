/// Reading a JSON string's plain run eight bytes at a time: most of a document's bytes are in
/// strings, and a string's bytes matter only at a quote, a backslash or a byte it may not hold.
///
/// Each test marks the high bit of the bytes of a 64-bit word (little-endian: its first byte
/// lowest) that it looks for: a byte equal to the one sought becomes zero after an XOR, and a
/// zero byte, or one below a limit, is marked by the borrow of subtracting from each byte
/// (`(v - 0x01…) & ~v & 0x80…`). A borrow can mark a byte above a marked one, never one below
/// it, so only the lowest mark of a word (or of several tests OR-ed) is to be read.
package enum StringScan {
  private static let ones: UInt64 = 0x0101_0101_0101_0101
  private static let highs: UInt64 = 0x8080_8080_8080_8080

  /// The marks of the bytes of `word` that are `byte`.
  @inline(__always)
  private static func marks(of byte: UInt8, in word: UInt64) -> UInt64 {
    let zeroed = word ^ (ones &* UInt64(byte))
    return (zeroed &- ones) & ~zeroed & highs
  }

  /// The marks of the bytes of `word` below `limit` (at most 0x80).
  @inline(__always)
  private static func marks(below limit: UInt8, in word: UInt64) -> UInt64 {
    (word &- ones &* UInt64(limit)) & ~word & highs
  }

  /// The marks of the bytes of `word` that end a string's run as the parser reads it: a
  /// quote, a backslash or a control character.
  @inline(__always)
  package static func stopMarks(in word: UInt64) -> UInt64 {
    marks(of: UInt8(ascii: "\""), in: word) | marks(of: UInt8(ascii: "\\"), in: word) | marks(below: 0x20, in: word)
  }

  /// The offset of the first quote or backslash in `bytes` at or after `start`, or
  /// `bytes.count` when there is none.
  @inline(__always)
  package static func quoteOrBackslash(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    firstMarked(in: bytes, from: start) { word in
      marks(of: UInt8(ascii: "\""), in: word) | marks(of: UInt8(ascii: "\\"), in: word)
    } isMarked: { byte in
      byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
  }

  /// The offset of the first byte in `bytes` at or after `start` that is not printable ASCII
  /// other than a quote or a backslash (a quote, a backslash, a control byte, DEL, or any byte
  /// of a non-ASCII character), or `bytes.count` when there is none: where a string's plain
  /// text ends.
  @inline(__always)
  package static func plainTextEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    firstMarked(in: bytes, from: start) { word in
      // A byte of 0x80 or more is marked by its own high bit.
      stopMarks(in: word) | marks(of: 0x7F, in: word) | word & highs
    } isMarked: { byte in
      byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
  }

  /// The offset of the first byte at or after `start` that `marks` marks in its word (whole
  /// words while eight bytes are left), or that `isMarked` says of it alone (the last few).
  @inline(__always)
  private static func firstMarked(
    in bytes: UnsafeBufferPointer<UInt8>, from start: Int, marks: (UInt64) -> UInt64, isMarked: (UInt8) -> Bool
  ) -> Int {
    var index = start
    if let base = bytes.baseAddress {
      let raw = UnsafeRawPointer(base)
      while index &+ 8 <= bytes.count {
        let found = marks(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
        if found != 0 { return index &+ found.trailingZeroBitCount &>> 3 }
        index &+= 8
      }
    }
    while index < bytes.count, !isMarked(bytes[index]) { index &+= 1 }
    return index
  }
}
