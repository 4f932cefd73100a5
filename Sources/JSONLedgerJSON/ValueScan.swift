/// Where a JSON value ends, found without reading it: its strings followed to their closing
/// quote and its brackets counted, a block of bytes at a time, the state carried from one
/// block to the next. `JSONSkim.valueEnd` scans a whole text with it, `JSONStream` a file as
/// it is read.
struct ValueScan {
  /// The deepest nesting the value may have; one deeper ends the scan (`isTooDeep`).
  let depthLimit: Int
  private(set) var depth = 0
  private(set) var inString = false
  private var escaped = false
  /// Whether the value nests deeper than `depthLimit`: the scan stopped at the bracket that
  /// went past it.
  private(set) var isTooDeep = false

  init(depthLimit: Int = .max) { self.depthLimit = depthLimit }

  /// Scans `bytes` from `start`: the offset after the value and true when it ends in them (a
  /// string or bracket closed at the top, or the comma, white space or closing bracket that
  /// follows a scalar, not taken), else `bytes.count` and false. Past the depth limit: the
  /// offset of the bracket, true, and `isTooDeep`.
  mutating func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (Int, Bool) {
    var index = start
    while index < bytes.count {
      if inString {
        // A string's bytes up to its next quote or backslash are skipped eight at a time:
        // most of a document's bytes are in strings.
        if escaped {
          escaped = false
          index += 1
          continue
        }
        index = StringScan.quoteOrBackslash(in: bytes, from: index)
        guard index < bytes.count else { break }
        if bytes[index] == UInt8(ascii: "\\") {
          escaped = true
        } else {
          inString = false
          if depth == 0 { return (index + 1, true) }
        }
      } else {
        switch bytes[index] {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["):
          depth += 1
          if depth > depthLimit {
            isTooDeep = true
            return (index, true)
          }
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          if depth == 0 { return (index, true) }
          depth -= 1
          if depth == 0 { return (index + 1, true) }
        case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
          if depth == 0 { return (index, true) }
        default: break
        }
      }
      index += 1
    }
    return (bytes.count, false)
  }
}
