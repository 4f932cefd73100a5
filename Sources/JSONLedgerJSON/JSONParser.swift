/// A byte-level JSON parser.
///
/// It accepts what Foundation's `JSONSerialization` accepts on real payloads, including a
/// trailing comma before `]` or `}`, and rejects anything else with the line and column.
/// Nesting deeper than `maximumDepth` is an error, not a stack overflow.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"name": "Japan",}"#.utf8))
/// ```
public struct JSONParser {
  /// How deep arrays and objects may nest.
  public static let maximumDepth = 1_024

  private let bytes: [UInt8]
  /// Where the text read ends in `bytes` (its count, unless a range of it is read).
  private var end: Int
  private var position = 0
  private var depth = 0
  /// How deep the value being read may nest (`maximumDepth`, less the levels around it).
  private var depthLimit = JSONParser.maximumDepth
  /// The members of the objects being parsed, innermost last: each object's members are
  /// gathered here and moved out once, at their count, instead of growing an array of their
  /// own (an allocation per doubling).
  private let pendingMembers = PendingMembers()
  /// Short object keys met before, by a hash of their bytes: the objects of a collection
  /// repeat a few keys, and a key found here is not made into a string again. Made on the
  /// first key, kept as long as the parser (`JSONValueReader` keeps it from value to value).
  private var keyCache: [CachedKey] = []

  /// A plain ASCII key of at most 15 bytes, as two little-endian words padded with zeros.
  private struct CachedKey {
    var low: UInt64 = 0
    var high: UInt64 = 0
    var count = -1
    var key = ""
  }

  fileprivate init(bytes: [UInt8], range: Range<Int>? = nil) {
    self.bytes = bytes
    end = range?.upperBound ?? bytes.count
    position = range?.lowerBound ?? 0
  }

  /// Parses one JSON document (surrounding white space allowed, and a byte order mark before
  /// it: `ByteOrderMark`).
  public static func parse(_ data: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
    var parser = JSONParser(bytes: Array(data))
    return try parser.parseDocument(skippingByteOrderMark: true)
  }

  /// Parses one value of a larger document, its bytes copied out of it: surrounding white
  /// space allowed, a byte order mark not (only a document begins with one).
  package static func parse(element data: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
    var parser = JSONParser(bytes: Array(data))
    return try parser.parseDocument()
  }

  /// Parses the JSON document at `range` of `bytes`, in place: offsets, lines and columns
  /// (in errors, and in each object's `sourceRange`) count from the start of `bytes`. No byte
  /// order mark is skipped: a caller whose range is a whole text starts it past one.
  package static func parse(_ bytes: [UInt8], in range: Range<Int>) throws(JSONSyntaxError) -> JSONValue {
    var parser = JSONParser(bytes: bytes, range: range)
    return try parser.parseDocument()
  }

  /// Parses a JSON document held in a string.
  public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
    try parse(Array(text.utf8))
  }

  /// Parses the value that starts at `start`, nesting at most `depthLimit` deep: its end is
  /// wherever it ends, and what follows is the caller's to read.
  fileprivate mutating func parseValue(at start: Int, depthLimit: Int) throws(JSONSyntaxError) -> (
    value: JSONValue, end: Int
  ) {
    position = start
    end = bytes.count
    depth = 0
    self.depthLimit = depthLimit
    // What a value that failed left behind.
    pendingMembers.removeAll()
    let value = try parseValue()
    return (value, position)
  }

  /// Parses the text at `range` as one document, as `parse(_:in:)` does.
  fileprivate mutating func parseDocument(in range: Range<Int>) throws(JSONSyntaxError) -> JSONValue {
    position = range.lowerBound
    end = range.upperBound
    depth = 0
    depthLimit = Self.maximumDepth
    pendingMembers.removeAll()
    return try parseDocument()
  }

  /// `skippingByteOrderMark`: the bytes are a whole document, which may begin with a mark.
  private mutating func parseDocument(skippingByteOrderMark: Bool = false) throws(JSONSyntaxError) -> JSONValue {
    if skippingByteOrderMark { position = ByteOrderMark.length(atStartOf: bytes) }
    skipWhitespace()
    guard position < end else { throw failure("the document is empty") }
    let value = try parseValue()
    skipWhitespace()
    if position < end { throw failure("unexpected \(describe(bytes[position])) after the end of the document") }
    return value
  }

  private func failure(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
    let offset = min(offset ?? position, end)
    var line = 1
    var lineStart = 0
    for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
      line += 1
      lineStart = index + 1
    }
    return JSONSyntaxError(line: line, column: offset - lineStart + 1, offset: offset, reason: reason)
  }

  private func describe(_ byte: UInt8) -> String {
    if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    return "byte 0x\(String(byte, radix: 16))"
  }

  /// Compact JSON has no white space between tokens: the first byte is checked where the
  /// caller is, and the loop is called only when it is white space (or the text has ended).
  @inline(__always)
  private mutating func skipWhitespace() {
    if position < end, bytes[position] > 0x20 { return }
    skipWhitespaceRun()
  }

  private mutating func skipWhitespaceRun() {
    while position < end {
      switch bytes[position] {
      case 0x20, 0x0A, 0x0D, 0x09: position += 1
      default: return
      }
    }
  }

  private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
    guard position < end else { throw failure("unexpected end of input, expected a value") }
    switch bytes[position] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try expectWord("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expectWord("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expectWord("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
    case let byte: throw failure("unexpected \(describe(byte)), expected a value")
    }
  }

  private mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
    let start = position
    for index in 0..<word.utf8CodeUnitCount {
      guard position < end, bytes[position] == word.utf8Start[index] else {
        throw failure("invalid literal, expected '\(word)'", at: start)
      }
      position += 1
    }
  }

  private mutating func enter() throws(JSONSyntaxError) {
    depth += 1
    if depth > depthLimit { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
  }

  private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
    try enter()
    position += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if position < end, bytes[position] == UInt8(ascii: "]") {
      position += 1
      depth -= 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      guard position < end else {
        throw failure("unexpected end of input inside an array, expected ',' or ']'")
      }
      switch bytes[position] {
      case UInt8(ascii: ","):
        position += 1
        skipWhitespace()
        if position < end, bytes[position] == UInt8(ascii: "]") {  // trailing comma
          position += 1
          depth -= 1
          return .array(elements)
        }
      case UInt8(ascii: "]"):
        position += 1
        depth -= 1
        return .array(elements)
      case let byte: throw failure("unexpected \(describe(byte)) in an array, expected ',' or ']'")
      }
    }
  }

  private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
    try enter()
    let start = position
    position += 1
    let first = pendingMembers.count
    // An error ends the parse: the pending members are let go with the parser.
    func finish() -> JSONValue {
      .object(JSONObject(pendingMembers.take(from: first), sourceRange: start..<position))
    }
    while true {
      skipWhitespace()
      guard position < end else { throw failure("unexpected end of input inside an object") }
      if bytes[position] == UInt8(ascii: "}") {  // empty object, or a trailing comma
        if pendingMembers.count > first, bytes[position - 1] != UInt8(ascii: ","), !lastSignificantByteIsComma() {
          throw failure("unexpected '}'")
        }
        position += 1
        depth -= 1
        return finish()
      }
      guard bytes[position] == UInt8(ascii: "\"") else {
        throw failure("unexpected \(describe(bytes[position])), expected a string key or '}'")
      }
      let key = try parseKey()
      skipWhitespace()
      guard position < end, bytes[position] == UInt8(ascii: ":") else {
        throw failure("expected ':' after the object key \"\(key)\"")
      }
      position += 1
      skipWhitespace()
      let value = try parseValue()
      pendingMembers.append(JSONObject.Member(key: key, value: value))
      skipWhitespace()
      guard position < end else {
        throw failure("unexpected end of input inside an object, expected ',' or '}'")
      }
      switch bytes[position] {
      case UInt8(ascii: ","): position += 1
      case UInt8(ascii: "}"):
        position += 1
        depth -= 1
        return finish()
      case let byte: throw failure("unexpected \(describe(byte)) in an object, expected ',' or '}'")
      }
    }
  }

  private func lastSignificantByteIsComma() -> Bool {
    var index = position - 1
    while index >= 0 {
      switch bytes[index] {
      case 0x20, 0x0A, 0x0D, 0x09: index -= 1
      case UInt8(ascii: ","): return true
      default: return false
      }
    }
    return false
  }

  private mutating func parseNumber() throws(JSONSyntaxError) -> JSONNumber {
    let start = position
    func digit(_ index: Int) -> Bool { index < end && bytes[index] >= 0x30 && bytes[index] <= 0x39 }
    if bytes[position] == UInt8(ascii: "-") { position += 1 }
    guard digit(position) else { throw failure("a number needs a digit after '-'", at: start) }
    if bytes[position] == UInt8(ascii: "0") {
      position += 1
      if digit(position) { throw failure("a number cannot have a leading zero", at: start) }
    } else {
      while digit(position) { position += 1 }
    }
    if position < end, bytes[position] == UInt8(ascii: ".") {
      position += 1
      guard digit(position) else { throw failure("a number needs digits after '.'", at: start) }
      while digit(position) { position += 1 }
    }
    if position < end, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
      position += 1
      if position < end, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
        position += 1
      }
      guard digit(position) else { throw failure("a number needs digits in its exponent", at: start) }
      while digit(position) { position += 1 }
    }
    let literal = String(decoding: bytes[start..<position], as: UTF8.self)
    return JSONNumber(validLiteral: literal)
  }

  private mutating func parseString() throws(JSONSyntaxError) -> String {
    let start = position
    position += 1
    var runStart = position
    var pieces: [UInt8] = []
    var escaped = false
    var ascii = true
    while true {
      // The run of plain bytes up to the next quote, backslash or control character, read
      // without a bounds check per byte; its bytes are OR-ed together to tell ASCII apart.
      let (runEnd, runBits) = bytes.withUnsafeBufferPointer { buffer in
        var index = position
        var bits: UInt64 = 0
        // Eight bytes at a time while eight are left in the text read.
        if let base = buffer.baseAddress {
          while index &+ 8 <= end {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let stops = StringScan.stopMarks(in: word)
            if stops != 0 {
              // The first flagged byte is a stop (a false flag only ever follows a true one).
              let offset = stops.trailingZeroBitCount >> 3
              if offset > 0 { bits |= word & (UInt64.max >> (64 - 8 * offset)) }
              return (index &+ offset, bits)
            }
            bits |= word
            index &+= 8
          }
        }
        while index < end {
          let byte = buffer[index]
          if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
          bits |= UInt64(byte)
          index += 1
        }
        return (index, bits)
      }
      position = runEnd
      if runBits & 0x8080_8080_8080_8080 != 0 { ascii = false }
      guard position < end else { throw failure("unterminated string", at: start) }
      // The run ends at a quote, a control character or a backslash.
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") { break }
      if byte < 0x20 { throw failure("a control character (0x\(String(byte, radix: 16))) must be escaped in a string") }
      escaped = true
      pieces.append(contentsOf: bytes[runStart..<position])
      position += 1
      guard position < end else { throw failure("unterminated escape", at: start) }
      let escape = bytes[position]
      position += 1
      switch escape {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): pieces.append(escape)
      case UInt8(ascii: "b"): pieces.append(0x08)
      case UInt8(ascii: "f"): pieces.append(0x0C)
      case UInt8(ascii: "n"): pieces.append(0x0A)
      case UInt8(ascii: "r"): pieces.append(0x0D)
      case UInt8(ascii: "t"): pieces.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try parseHex4()
        if scalar >= 0xD800 && scalar < 0xDC00 {
          guard position + 1 < end, bytes[position] == UInt8(ascii: "\\"),
            bytes[position + 1] == UInt8(ascii: "u")
          else {
            throw failure("a high surrogate \\u\(String(scalar, radix: 16)) must be followed by a low one")
          }
          position += 2
          let low = try parseHex4()
          guard low >= 0xDC00 && low < 0xE000 else {
            throw failure("invalid low surrogate \\u\(String(low, radix: 16))")
          }
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if scalar >= 0xDC00 && scalar < 0xE000 {
          throw failure("a lone low surrogate \\u\(String(scalar, radix: 16))")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid unicode escape") }
        pieces.append(contentsOf: Array(String(Character(unicode)).utf8))
      default: throw failure("invalid escape '\\\(Character(Unicode.Scalar(escape)))'", at: position - 2)
      }
      runStart = position
    }
    let text: String?
    if escaped {
      pieces.append(contentsOf: bytes[runStart..<position])
      text = String(validating: pieces, as: UTF8.self)
    } else if ascii {
      // Plain ASCII needs no validation, and is made a string without any: every byte of the
      // run was OR-ed into `runBits`, which stayed below 0x80.
      text = String(copying: unsafe UTF8Span(unchecked: bytes.span.extracting(runStart..<position), isKnownASCII: true))
    } else {
      text = String(validating: bytes[runStart..<position], as: UTF8.self)
    }
    position += 1
    guard let text else { throw failure("a string holds invalid UTF-8", at: start) }
    return text
  }

  /// An object's key: a plain ASCII one of at most 15 bytes from `keyCache` when it was met
  /// before, any other as `parseString` reads it.
  private mutating func parseKey() throws(JSONSyntaxError) -> String {
    let start = position + 1
    guard start + 16 <= end else { return try parseString() }
    let (low, high) = bytes.withUnsafeBufferPointer { buffer -> (UInt64, UInt64) in
      guard let base = buffer.baseAddress else { return (0, 0) }
      let raw = UnsafeRawPointer(base + start)
      return (
        UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)),
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      )
    }
    let lowStops = StringScan.stopMarks(in: low)
    let highStops = StringScan.stopMarks(in: high)
    let count =
      lowStops != 0 ? lowStops.trailingZeroBitCount >> 3 : 8 + (highStops.trailingZeroBitCount >> 3)
    // Ends within the two words, at a quote, with every byte before it ASCII.
    guard count < 16, bytes[start + count] == UInt8(ascii: "\"") else { return try parseString() }
    let keptLow = count >= 8 ? low : low & ~(UInt64.max << (8 * count))
    let keptHigh = count <= 8 ? 0 : high & ~(UInt64.max << (8 * (count - 8)))
    guard (keptLow | keptHigh) & 0x8080_8080_8080_8080 == 0 else { return try parseString() }
    if keyCache.isEmpty { keyCache = Array(repeating: CachedKey(), count: 64) }
    let slot = Int(truncatingIfNeeded: ((keptLow ^ (keptHigh &* 31)) &* 0x9E37_79B9_7F4A_7C15) >> 58)
    if keyCache[slot].count == count, keyCache[slot].low == keptLow, keyCache[slot].high == keptHigh {
      position = start + count + 1
      return keyCache[slot].key
    }
    let key = try parseString()
    keyCache[slot] = CachedKey(low: keptLow, high: keptHigh, count: count, key: key)
    return key
  }

  private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
    guard position + 4 <= end else { throw failure("a \\u escape needs four hex digits") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[position]
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 0x30)
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 0x61 + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 0x41 + 10)
      default: throw failure("a \\u escape needs four hex digits")
      }
      value = value << 4 | digit
      position += 1
    }
    return value
  }
}

/// Parses values of one text one at a time, each where its caller points: a collection's
/// elements, each let go before the next is read, so that no tree of the whole text is held.
/// The room the parser gathers an object's members in is kept from one value to the next.
package struct JSONValueReader {
  private var parser: JSONParser

  /// A reader of `bytes`; offsets, and each object's `sourceRange`, count from their start.
  package init(_ bytes: [UInt8]) { parser = JSONParser(bytes: bytes) }

  /// The value that starts at `start` (no white space before it), nesting at most
  /// `depthLimit` deep, and the offset after it. A syntax error counts its line and column
  /// from the start of the text.
  package mutating func value(at start: Int, depthLimit: Int) throws(JSONSyntaxError) -> (value: JSONValue, end: Int) {
    try parser.parseValue(at: start, depthLimit: depthLimit)
  }

  /// The text at `range` read as one document (white space around the value allowed, nothing
  /// else), as `JSONParser.parse(_:in:)` reads it.
  package mutating func document(in range: Range<Int>) throws(JSONSyntaxError) -> JSONValue {
    try parser.parseDocument(in: range)
  }
}
