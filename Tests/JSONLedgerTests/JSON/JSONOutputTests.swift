import JSONLedgerJSON
import PropertyBased
import Testing

/// `JSONOutput` writes a document piece by piece in a `JSONWriter`'s layout: the same text as
/// the writer gives for the whole value.
@Suite("JSON written piece by piece")
struct JSONOutputTests {
  /// Writes `value` through `output` a piece at a time (objects and arrays opened and closed,
  /// keys one by one), leaving whole the values at `wholeDepth`.
  static func write(_ value: JSONValue, into output: inout JSONOutput, depth: Int = 0, wholeDepth: Int) {
    switch value {
    case .array(let elements) where depth < wholeDepth:
      output.beginArray()
      for element in elements { write(element, into: &output, depth: depth + 1, wholeDepth: wholeDepth) }
      output.endArray()
    case .object(let object) where depth < wholeDepth:
      output.beginObject()
      for member in object.sortedByKey().members {
        output.key(member.key)
        write(member.value, into: &output, depth: depth + 1, wholeDepth: wholeDepth)
      }
      output.endObject()
    case .string(let text):
      output.string(text)
    case .null:
      output.null()
    default:
      output.value(value)
    }
  }

  /// A value read from numbers: each number makes a leaf, or opens an array or object that
  /// takes the next few; smaller numbers make simpler values.
  static func value(from numbers: inout ArraySlice<Int>, depth: Int = 0) -> JSONValue {
    guard let number = numbers.popFirst() else { return .null }
    let strings = ["", "a", "quote \"", "c1 \u{9B} del \u{7F}", "é\n"]
    switch number % 8 {
    case 0: return .null
    case 1: return .bool(number % 2 == 0)
    case 2: return .number(JSONNumber(number - 500))
    case 3, 4: return .string(strings[number % strings.count])
    case 5,
      6 where depth < 4:
      var elements: [JSONValue] = []
      for _ in 0..<(number / 8 % 4) { elements.append(value(from: &numbers, depth: depth + 1)) }
      return .array(elements)
    default:
      var object = JSONObject()
      for index in 0..<(number / 8 % 4) { object["k\((number + index) % 5)"] = value(from: &numbers, depth: depth + 1) }
      return .object(object)
    }
  }

  @Test func pieceByPieceIsTheWholeValueInEveryLayout() async {
    await propertyCheck(count: 200, input: Gen.int(in: 0...999).array(of: 1...30)) { numbers in
      var rest = numbers[...]
      let value = JSONValue.array([Self.value(from: &rest), Self.value(from: &rest)])
      let wholeDepth = numbers[0] % 4
      for options: JSONWriter.Options in [[], [.sortedKeys], [.prettyPrinted, .sortedKeys], [.escapesAllControls]] {
        let writer = JSONWriter(options: options.union(.sortedKeys))
        var output = JSONOutput(writer: writer)
        Self.write(value, into: &output, wholeDepth: wholeDepth)
        #expect(output.bytes == writer.bytes(from: value), "\(options.rawValue)")
      }
    }
  }

  @Test func takingThePiecesKeepsTheLayout() {
    let writer = JSONWriter(options: [.prettyPrinted])
    var output = JSONOutput(writer: writer)
    var text: [UInt8] = []
    output.beginObject()
    output.key("albums")
    output.beginArray()
    for name in ["Tin Drum", "Quiet Life"] {
      output.value(["name": .string(name)])
      text += output.bytes
      output.removeAll()
    }
    output.endArray()
    output.key("bands")
    output.beginArray()
    output.endArray()
    output.endObject()
    text += output.bytes
    let value: JSONValue = ["albums": [["name": "Tin Drum"], ["name": "Quiet Life"]], "bands": []]
    #expect(text == writer.bytes(from: value))
  }

  @Test func allControlsEscapedLeaveTextAJSONStringOfTheSameValue() throws {
    let text = "esc \u{1B} del \u{7F} csi \u{9B} nbsp \u{A0} é \u{80}"
    let escaped = JSONWriter(options: [.escapesAllControls]).string(from: .string(text))
    #expect(escaped == #""esc \u001b del \u007F csi \u009B nbsp "# + "\u{A0} é " + #"\u0080""#)
    #expect(try JSONParser.parse(escaped) == .string(text))
    // Without the option, JSON's own rule: C0 escaped, the rest raw.
    #expect(
      JSONWriter().string(from: .string(text)) == #""esc \u001b del "# + "\u{7F} csi \u{9B} nbsp \u{A0} é \u{80}\"")
  }

  @Test func keptStringsAreWrittenByTheirNumberAsTheWriterWritesThem() {
    let writer = JSONWriter(options: [.escapesAllControls])
    let texts = ["Tin Drum", "", "quote \" and \u{1B}", "é \u{9B}"]
    var strings = JSONOutput.EncodedStrings()
    var numbers: [Int] = []
    for text in texts { numbers.append(strings.append(text.utf8Span, writer: writer)) }
    #expect(numbers == [0, 1, 2, 3])
    #expect(strings.count == 4)
    var output = JSONOutput(writer: writer)
    output.beginArray()
    for number in numbers.reversed() {
      let written = output.string(number, of: strings)
      #expect(written)
    }
    // A number it does not hold writes nothing.
    let unknown = [output.string(4, of: strings), output.string(-1, of: strings)]
    #expect(unknown == [false, false])
    output.endArray()
    #expect(output.bytes == writer.bytes(from: .array(texts.reversed().map { .string($0) })))
    strings.removeAll(keepingCapacity: true)
    #expect(strings.count == 0 && strings.byteCount == 0)
    let afterRemoval = output.string(0, of: strings)
    #expect(!afterRemoval)
  }

  @Test func keptKeysAreWrittenByTheirNumberAsTheWriterWritesThem() {
    for options: JSONWriter.Options in [[], [.prettyPrinted], [.escapesAllControls]] {
      let writer = JSONWriter(options: options)
      var keys = JSONOutput.EncodedStrings()
      let object: JSONObject = ["name": "Tin Drum", "quote \" \u{9B}": 1, "": .null]
      var output = JSONOutput(writer: writer)
      output.beginObject()
      for member in object.members {
        let key = member.key
        let number = keys.append(key.utf8Span, writer: writer)
        let written = output.key(number, of: keys)
        #expect(written)
        output.value(member.value)
      }
      // A number it does not hold writes nothing.
      let unknown = output.key(keys.count, of: keys)
      #expect(!unknown)
      output.endObject()
      #expect(output.bytes == writer.bytes(from: .object(object)), "\(options)")
    }
  }

  /// The writer copies a string whole when no byte of it needs an escape, checked eight bytes
  /// at a time: strings of every length around a word, with the bytes that need one (and
  /// their neighbours) anywhere, read back as themselves with no raw control left.
  @Test func aStringIsCopiedWholeExactlyWhenNothingInItNeedsAnEscape() async {
    let pieces = [
      "a", "~", " ", "é", "\"", "\\", "\n", "\u{01}", "\u{1F}", "!", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}",
    ]
    await propertyCheck(count: 300, input: Gen.int(in: 0...(pieces.count * 6 - 1)).array(of: 0...40)) { choices in
      // Mostly plain letters, so that long runs with one byte to escape come up.
      let text = choices.map { $0 < pieces.count ? pieces[$0] : "a" }.joined()
      for options: JSONWriter.Options in [[], [.escapesAllControls]] {
        let written = JSONWriter(options: options).bytes(from: .string(text))
        #expect((try? JSONParser.parse(written)) == .string(text), "\(text.debugDescription)")
        let raw = Array(written.dropFirst().dropLast())
        #expect(!raw.contains { $0 < 0x20 }, "\(text.debugDescription)")
        let needsEscape = text.unicodeScalars.contains { scalar in
          scalar == "\"" || scalar == "\\" || scalar.value < 0x20
            || (options.contains(.escapesAllControls) && (0x7F...0x9F).contains(scalar.value))
        }
        #expect((raw == Array(text.utf8)) == !needsEscape, "\(text.debugDescription) \(options)")
      }
    }
  }

  /// An integer written by its digits is the text of its `JSONNumber`, the extremes too.
  @Test func anIntegerIsWrittenAsItsNumberIs() async {
    var output = JSONOutput()
    output.beginArray()
    let extremes: [Int64] = [0, -1, 9, 10, -10, .max, .min]
    for number in extremes { output.integer(number) }
    output.endArray()
    #expect(output.bytes == JSONWriter().bytes(from: .array(extremes.map { .number(JSONNumber($0)) })))
    await propertyCheck(count: 200, input: Gen.int(in: Int.min...Int.max)) { number in
      var output = JSONOutput()
      output.integer(Int64(number))
      #expect(output.bytes == Array(JSONNumber(Int64(number)).literal.utf8))
    }
  }
}
