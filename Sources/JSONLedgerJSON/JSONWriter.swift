/// Writes `JSONValue`s as UTF-8 JSON text.
///
/// Members are written in the order they hold; `JSONWriter.Options.sortedKeys` orders them by
/// key, so that two exports of the same state are byte-identical.
public struct JSONWriter: Sendable {
  /// How the text is laid out.
  public struct Options: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Newlines and two-space indentation.
    public static let prettyPrinted = Options(rawValue: 1)
    /// Object members ordered by key.
    public static let sortedKeys = Options(rawValue: 2)
    /// DEL and the C1 controls (U+0080 to U+009F), which JSON allows raw, written as
    /// `\u007F`-style escapes too: text that a terminal shows as it is.
    public static let escapesAllControls = Options(rawValue: 4)
  }

  /// The layout.
  public var options: Options

  /// A writer with these options.
  public init(options: Options = [.sortedKeys]) { self.options = options }

  /// The JSON text of `value`.
  public func string(from value: JSONValue) -> String {
    var output: [UInt8] = []
    write(value, into: &output, indent: 0)
    return String(decoding: output, as: UTF8.self)
  }

  /// The JSON bytes of `value`.
  public func bytes(from value: JSONValue) -> [UInt8] {
    var output: [UInt8] = []
    write(value, into: &output, indent: 0)
    return output
  }

  func newline(_ output: inout [UInt8], _ indent: Int) {
    guard options.contains(.prettyPrinted) else { return }
    output.append(0x0A)
    output.append(contentsOf: repeatElement(0x20, count: indent * 2))
  }

  func write(_ value: JSONValue, into output: inout [UInt8], indent: Int) {
    switch value {
    case .null: output.append(contentsOf: "null".utf8)
    case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
    case .number(let number): output.append(contentsOf: number.literal.utf8)
    case .string(let string): writeString(string, into: &output)
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        newline(&output, indent + 1)
        write(element, into: &output, indent: indent + 1)
      }
      if !elements.isEmpty { newline(&output, indent) }
      output.append(UInt8(ascii: "]"))
    case .object(let object):
      let members = options.contains(.sortedKeys) ? object.sortedByKey().members : object.members
      output.append(UInt8(ascii: "{"))
      for (index, member) in members.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        newline(&output, indent + 1)
        writeString(member.key, into: &output)
        output.append(UInt8(ascii: ":"))
        if options.contains(.prettyPrinted) { output.append(0x20) }
        write(member.value, into: &output, indent: indent + 1)
      }
      if !members.isEmpty { newline(&output, indent) }
      output.append(UInt8(ascii: "}"))
    }
  }

  private static let upperHex = Array("0123456789ABCDEF".utf8)
  private static let lowerHex = Array("0123456789abcdef".utf8)

  /// `string` as a JSON string: quoted, with what JSON (and `escapesAllControls`) requires
  /// escaped.
  func writeString(_ string: String, into output: inout [UInt8]) {
    writeString(utf8: string.utf8.span, into: &output)
  }

  /// Valid UTF-8 `bytes` as a JSON string.
  func writeString(utf8 bytes: Span<UInt8>, into output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    // Most strings need no escape: then they are copied whole instead of byte by byte.
    let escapesAll = options.contains(.escapesAllControls)
    if !Self.needsEscape(bytes, escapesAll: escapesAll) {
      bytes.withUnsafeBufferPointer { output.append(contentsOf: $0) }
      output.append(UInt8(ascii: "\""))
      return
    }
    func escape(_ value: UInt8, uppercase: Bool) {
      let digits = uppercase ? Self.upperHex : Self.lowerHex
      output.append(contentsOf: [
        0x5C, UInt8(ascii: "u"), 0x30, 0x30, digits[Int(value >> 4)], digits[Int(value & 0xF)],
      ])
    }
    var afterC2 = false
    for index in bytes.indices {
      let byte = bytes[index]
      if afterC2 {
        afterC2 = false
        // U+0080 to U+009F are 0xC2 0x80 to 0xC2 0x9F.
        if byte <= 0x9F {
          escape(byte, uppercase: true)
          continue
        }
        output.append(0xC2)
      }
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
      case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
      case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
      case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
      case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
      case 0..<0x20: escape(byte, uppercase: false)
      case 0x7F where escapesAll: escape(byte, uppercase: true)
      case 0xC2 where escapesAll: afterC2 = true
      default: output.append(byte)
      }
    }
    if afterC2 { output.append(0xC2) }
    output.append(UInt8(ascii: "\""))
  }

  /// Whether any byte needs an escape: eight bytes at a time (the last eight of a longer
  /// string overlapping the word before), a shorter string byte by byte.
  private static func needsEscape(_ bytes: Span<UInt8>, escapesAll: Bool) -> Bool {
    let raw = bytes.bytes
    let count = raw.byteCount
    func needsEscape(inWordAt offset: Int) -> Bool {
      let word = raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self)
      if hasByte(below: 0x20, in: word) || hasByte(0x22, in: word) || hasByte(0x5C, in: word) { return true }
      return escapesAll && (hasByte(0x7F, in: word) || hasByte(0xC2, in: word))
    }
    if count >= 8 {
      var offset = 0
      while offset + 8 < count {
        if needsEscape(inWordAt: offset) { return true }
        offset += 8
      }
      return needsEscape(inWordAt: count - 8)
    }
    for index in bytes.indices {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return true }
      if escapesAll, byte == 0x7F || byte == 0xC2 { return true }
    }
    return false
  }

  private static let lowBits: UInt64 = 0x0101_0101_0101_0101
  private static let highBits: UInt64 = 0x8080_8080_8080_8080

  /// Whether any of the eight bytes of `word` is below `limit` (at most 0x80): a byte below it
  /// borrows through its high bit when `limit` is taken from it, and only such a byte does
  /// where its own high bit was clear.
  private static func hasByte(below limit: UInt8, in word: UInt64) -> Bool {
    (word &- lowBits &* UInt64(limit)) & ~word & highBits != 0
  }

  /// Whether any of the eight bytes of `word` is `byte` (a zero byte of their difference).
  private static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
    hasByte(below: 1, in: word ^ (lowBits &* UInt64(byte)))
  }
}
