/// Finds where values start and end in JSON text without building them: the import's way
/// to hand each element of a collection on as bytes, so that one the store already holds is
/// recognised by its bytes alone.
///
/// The bounds of arrays and objects it walks (`firstItem`, `nextItem`, `memberKey`) are
/// checked as strictly as `JSONParser` checks them. The inside of a value is only
/// skimmed: its strings are followed to their closing quote and its brackets counted, nothing
/// more. A caller either parses such a value with `JSONParser` or recognises its bytes as
/// ones parsed before, so nothing unchecked is ever read; and when anything here fails, the
/// caller parses the whole text with `JSONParser` for the error, with its line and column.
package struct JSONSkim: Sendable {
  package let bytes: [UInt8]

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// The offset of the document's first value: past a byte order mark it begins with, and
  /// past white space.
  package var documentStart: Int { skipWhitespace(from: ByteOrderMark.length(atStartOf: bytes)) }

  /// The offset of the first byte from `index` on that is not white space.
  package func skipWhitespace(from index: Int) -> Int {
    var index = index
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x0A, 0x0D, 0x09: index += 1
      default: return index
      }
    }
    return index
  }

  /// Whether only white space follows `index`.
  package func isAtEnd(from index: Int) -> Bool { skipWhitespace(from: index) == bytes.count }

  /// The end of the value that starts at `start`, or nil when no value can end there: an
  /// unterminated string, unbalanced brackets, nesting deeper than `depthLimit`.
  package func valueEnd(from start: Int, depthLimit: Int = JSONParser.maximumDepth) -> Int? {
    guard start < bytes.count else { return nil }
    switch bytes[start] {
    case UInt8(ascii: "\""):
      return stringEnd(from: start)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var scan = ValueScan(depthLimit: depthLimit)
      let (end, found) = bytes.withUnsafeBufferPointer { scan.end(in: $0, from: start) }
      return found && !scan.isTooDeep ? end : nil
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "t"), UInt8(ascii: "f"),
      UInt8(ascii: "n"):
      var index = start + 1
      while index < bytes.count {
        switch bytes[index] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return index
        default: index += 1
        }
      }
      return index
    default:
      return nil
    }
  }

  /// The end of the string whose opening quote is at `start` (after its closing quote).
  private func stringEnd(from start: Int) -> Int? { closingQuote(ofStringAt: start).map { $0.index + 1 } }

  /// The closing quote of the string whose opening quote is at `start`, and whether the
  /// string holds an escape; nil when it does not close. Inlined into its two callers: called,
  /// it cost the re-import 0.9%.
  @inline(__always)
  private func closingQuote(ofStringAt start: Int) -> (index: Int, hasEscapes: Bool)? {
    bytes.withUnsafeBufferPointer { bytes in
      var index = start + 1
      var hasEscapes = false
      while true {
        index = StringScan.quoteOrBackslash(in: bytes, from: index)
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "\"") { return (index, hasEscapes) }
        hasEscapes = true
        index += 2  // past the backslash and the byte it escapes
      }
    }
  }

  /// Where an array's or object's first element or member starts (after white space), or,
  /// with `closed`, the offset after its closing bracket when it is empty; `start` is at its
  /// opening bracket.
  package func firstItem(ofContainerAt start: Int) -> (index: Int, closed: Bool)? {
    guard start < bytes.count else { return nil }
    let closing: UInt8
    switch bytes[start] {
    case UInt8(ascii: "["): closing = UInt8(ascii: "]")
    case UInt8(ascii: "{"): closing = UInt8(ascii: "}")
    default: return nil
    }
    let index = skipWhitespace(from: start + 1)
    guard index < bytes.count else { return nil }
    return bytes[index] == closing ? (index + 1, true) : (index, false)
  }

  /// After an element or member that ends at `end`: where the next one starts, or, with
  /// `closed`, the offset after the closing bracket (`]` for an array, `}` for an object; a
  /// trailing comma before it is accepted, as `JSONParser` accepts it).
  package func nextItem(after end: Int, closing: UInt8) -> (index: Int, closed: Bool)? {
    var index = skipWhitespace(from: end)
    guard index < bytes.count else { return nil }
    if bytes[index] == closing { return (index + 1, true) }
    guard bytes[index] == UInt8(ascii: ",") else { return nil }
    index = skipWhitespace(from: index + 1)
    guard index < bytes.count else { return nil }
    return bytes[index] == closing ? (index + 1, true) : (index, false)
  }

  /// The key of the member at `index` (its opening quote): raw, between the quotes, whether
  /// it holds an escape, and where its value starts (after the colon and white space).
  package func memberKey(at index: Int) -> (key: Range<Int>, hasEscapes: Bool, value: Int)? {
    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
    guard let (end, escaped) = closingQuote(ofStringAt: index) else { return nil }
    let colon = skipWhitespace(from: end + 1)
    guard colon < bytes.count, bytes[colon] == UInt8(ascii: ":") else { return nil }
    return ((index + 1)..<end, escaped, skipWhitespace(from: colon + 1))
  }

  /// Parses the value at `range` with `JSONParser`, in place (its objects' `sourceRange`s
  /// count from the start of `bytes`).
  package func parse(_ range: Range<Int>) throws(JSONSyntaxError) -> JSONValue {
    try JSONParser.parse(bytes, in: range)
  }
}
