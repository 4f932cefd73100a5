/// JSON text written a piece at a time, in a `JSONWriter`'s layout: what an export writes as
/// it reads, without building the document first.
///
/// It places the commas, newlines and indentation; the caller opens and closes objects and
/// arrays in a valid order and writes an object's keys in the order it wants them (the
/// writer's `sortedKeys` orders the members of each `JSONValue` written whole, not the keys
/// written one by one). `bytes` can be taken and emptied between pieces
/// (`removeAll(keepingCapacity:)`), to send a long document in chunks.
///
/// ```swift
/// var output = JSONOutput()
/// output.beginObject()
/// output.key("albums")
/// output.beginArray()
/// output.value(["name": "Tin Drum"])
/// output.endArray()
/// output.endObject()
/// // output.bytes: {"albums":[{"name":"Tin Drum"}]}
/// ```
public struct JSONOutput: Sendable {
  /// The text written since the last `removeAll(keepingCapacity:)`.
  public private(set) var bytes: [UInt8] = []
  /// The layout.
  public let writer: JSONWriter
  /// How many objects and arrays are open.
  private var depth = 0
  /// Whether the innermost open object or array has no member yet.
  private var isEmpty = true
  /// Whether a key was written and its value is next.
  private var isAfterKey = false

  /// An empty output in `writer`'s layout.
  public init(writer: JSONWriter = JSONWriter()) { self.writer = writer }

  /// Empties `bytes`; what is open stays open.
  public mutating func removeAll(keepingCapacity: Bool = true) { bytes.removeAll(keepingCapacity: keepingCapacity) }

  /// Reserves room for `count` more bytes.
  public mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(bytes.count + count) }

  /// Opens an object (as a value).
  public mutating func beginObject() { open(UInt8(ascii: "{")) }

  /// Closes the innermost object.
  public mutating func endObject() { close(UInt8(ascii: "}")) }

  /// Opens an array (as a value).
  public mutating func beginArray() { open(UInt8(ascii: "[")) }

  /// Closes the innermost array.
  public mutating func endArray() { close(UInt8(ascii: "]")) }

  /// The key of the next member of the innermost object; its value comes next.
  public mutating func key(_ key: String) {
    startElement()
    writer.writeString(key, into: &bytes)
    bytes.append(UInt8(ascii: ":"))
    if writer.options.contains(.prettyPrinted) { bytes.append(0x20) }
    isAfterKey = true
  }

  /// An object key written once and kept, for writing the same keys object after object.
  public struct Key: Sendable {
    /// The key quoted and escaped, then the colon.
    let encoded: [UInt8]

    /// `key` as `writer` writes it.
    public init(_ key: String, writer: JSONWriter) {
      var encoded: [UInt8] = []
      writer.writeString(key, into: &encoded)
      encoded.append(UInt8(ascii: ":"))
      self.encoded = encoded
    }
  }

  /// A string value written once and kept, for writing it many times (the key of an object
  /// that many others point to).
  public struct EncodedString: Sendable {
    /// The string quoted and escaped.
    let encoded: [UInt8]

    /// `text` as `writer` writes it.
    public init(_ text: UTF8Span, writer: JSONWriter) {
      var encoded: [UInt8] = []
      writer.writeString(utf8: text.span, into: &encoded)
      self.encoded = encoded
    }
  }

  /// A string value, as kept.
  public mutating func string(_ string: EncodedString) {
    startElement()
    bytes.append(contentsOf: string.encoded)
  }

  /// Many strings written once and kept in one buffer, each known by the number `append`
  /// gave it: the keys of many objects kept without an allocation each.
  public struct EncodedStrings: Sendable {
    /// The strings quoted and escaped, one after another.
    private var text: [UInt8] = []
    /// Where each string ends in `text`.
    private var ends: [Int] = []

    public init() {}

    /// How many strings are kept.
    public var count: Int { ends.count }
    /// How many bytes they take.
    public var byteCount: Int { text.count }

    /// Keeps `text` as `writer` writes it, and returns its number.
    public mutating func append(_ text: UTF8Span, writer: JSONWriter) -> Int {
      writer.writeString(utf8: text.span, into: &self.text)
      ends.append(self.text.count)
      return ends.count - 1
    }

    /// Forgets every string; their numbers are given again.
    public mutating func removeAll(keepingCapacity: Bool = false) {
      text.removeAll(keepingCapacity: keepingCapacity)
      ends.removeAll(keepingCapacity: keepingCapacity)
    }

    fileprivate func bytes(of number: Int) -> ArraySlice<UInt8>? {
      guard ends.indices.contains(number) else { return nil }
      return text[(number == 0 ? 0 : ends[number - 1])..<ends[number]]
    }
  }

  /// The string numbered `number` in `strings`, as kept; false, with nothing written, when
  /// `strings` has no such number.
  @discardableResult
  public mutating func string(_ number: Int, of strings: EncodedStrings) -> Bool {
    guard let encoded = strings.bytes(of: number) else { return false }
    startElement()
    bytes.append(contentsOf: encoded)
    return true
  }

  /// The key of the next member of the innermost object, as kept; its value comes next.
  public mutating func key(_ key: Key) {
    startElement()
    bytes.append(contentsOf: key.encoded)
    if writer.options.contains(.prettyPrinted) { bytes.append(0x20) }
    isAfterKey = true
  }

  /// The key numbered `number` in `keys` (kept as `EncodedStrings.append` writes them) of the
  /// next member of the innermost object; its value comes next. False, with nothing written,
  /// when `keys` has no such number.
  @discardableResult
  public mutating func key(_ number: Int, of keys: EncodedStrings) -> Bool {
    guard let encoded = keys.bytes(of: number) else { return false }
    startElement()
    bytes.append(contentsOf: encoded)
    bytes.append(UInt8(ascii: ":"))
    if writer.options.contains(.prettyPrinted) { bytes.append(0x20) }
    isAfterKey = true
    return true
  }

  /// A whole value, in the writer's layout.
  public mutating func value(_ value: JSONValue) {
    startElement()
    writer.write(value, into: &bytes, indent: depth)
  }

  /// A string value.
  public mutating func string(_ string: String) {
    startElement()
    writer.writeString(string, into: &bytes)
  }

  /// A string value from UTF-8 text already validated (text read in place).
  public mutating func string(_ text: UTF8Span) {
    startElement()
    writer.writeString(utf8: text.span, into: &bytes)
  }

  /// An integer value, its digits written where they go (the text of `JSONNumber(value)`).
  public mutating func integer(_ value: Int64) {
    startElement()
    // At most 19 digits and a sign.
    bytes.append(addingCapacity: 20) { output in
      if value < 0 { output.append(UInt8(ascii: "-")) }
      var rest = value.magnitude
      var digits = InlineArray<20, UInt8>(repeating: 0)
      var count = 0
      repeat {
        digits[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
        rest /= 10
        count += 1
      } while rest > 0
      while count > 0 {
        count -= 1
        output.append(digits[count])
      }
    }
  }

  /// `null`.
  public mutating func null() {
    startElement()
    bytes.append(contentsOf: "null".utf8)
  }

  private mutating func open(_ bracket: UInt8) {
    startElement()
    bytes.append(bracket)
    depth += 1
    isEmpty = true
  }

  private mutating func close(_ bracket: UInt8) {
    depth -= 1
    if !isEmpty { writer.newline(&bytes, depth) }
    bytes.append(bracket)
    isEmpty = false
  }

  /// A value or key begins: after a key it follows it; in an object or array, a comma before
  /// every member but the first, and a newline in the pretty layout.
  private mutating func startElement() {
    if isAfterKey {
      isAfterKey = false
      return
    }
    guard depth > 0 else { return }
    if !isEmpty { bytes.append(UInt8(ascii: ",")) }
    writer.newline(&bytes, depth)
    isEmpty = false
  }
}
