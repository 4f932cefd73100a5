import Foundation
import JSONLedgerTestSupport
import PropertyBased
import Testing

@testable import JSONLedger

@Suite("JSON parser")
struct JSONParserTests {
  /// Converts Foundation's parse result into a `JSONValue` for comparison.
  static func fromFoundation(_ value: Any) -> JSONValue {
    switch value {
    case is NSNull: return .null
    case let number as NSNumber:
      if String(describing: type(of: number)).contains("Boolean") { return .bool(number.boolValue) }
      return .number(JSONNumber(number.doubleValue))
    case let string as String: return .string(string)
    case let array as [Any]: return .array(array.map(fromFoundation))
    case let object as [String: Any]:
      return .object(JSONObject(object.keys.sorted().map { .init(key: $0, value: fromFoundation(object[$0] as Any)) }))
    default: return .null
    }
  }

  /// Our value with numbers normalised through Double and keys sorted, as Foundation gives.
  static func normalised(_ value: JSONValue) -> JSONValue {
    switch value {
    case .number(let number): return .number(JSONNumber(number.doubleValue))
    case .array(let elements): return .array(elements.map(normalised))
    case .object(let object):
      var merged: [String: JSONValue] = [:]
      for member in object { merged[member.key] = normalised(member.value) }
      return .object(JSONObject(merged.keys.sorted().map { .init(key: $0, value: merged[$0]!) }))
    default: return value
    }
  }

  static let documents: [String] = [
    #"{"a": [1, 2.5, -3e2, true, false, null], "b": {"c": "d\n\u00e9\ud83d\ude00"}}"#,
    #"[1, 2, ]"#, #"[{"a": 1, }]"#, #"{"a": {"b": [], "c": {}}, }"#, #""just a string""#, "  42  ",
    #"{"dup": 1, "dup": 2}"#, #"[0, -0, 0.5, 1E+2, 1e-2]"#,
    // Plain runs before, between and after escapes and non-ASCII bytes.
    #"["a plain run, then \"quoted\", Sigur Rós, \u0041\\ and a run to the end", "", "\n", "é"]"#,
  ]

  @Test(arguments: documents)
  func agreesWithFoundation(text: String) throws {
    let ours = try JSONParser.parse(text)
    let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    #expect(Self.normalised(ours) == Self.fromFoundation(theirs))
  }

  @Test(arguments: ["bands-initial.json", "bands-update.json", "bands-model.json"])
  func agreesWithFoundationOnFixtures(name: String) throws {
    let data = try Data(contentsOf: Fixtures.url(name))
    let ours = try JSONParser.parse(data)
    let theirs = try JSONSerialization.jsonObject(with: data)
    #expect(Self.normalised(ours) == Self.fromFoundation(theirs))
  }

  @Test(
    arguments: [
      ("{\"a\": }", 1, 7), ("[1, 2", 1, 6), ("{\n  \"a\": tru\n}", 2, 8), ("[01]", 1, 2), ("{'a': 1}", 1, 2),
      ("[1,,2]", 1, 4), ("\"abc", 1, 1), ("[1] x", 1, 5), ("", 1, 1), ("{\"a\" 1}", 1, 6), ("[\"\\x\"]", 1, 3),
      ("[,]", 1, 2), ("{,}", 1, 2), ("[\"abc\u{01}\"]", 1, 6), ("[\"ab\\", 1, 2),
    ] as [(String, Int, Int)])
  func malformedInputIsRejectedWithLineAndColumn(text: String, line: Int, column: Int) {
    #expect {
      try JSONParser.parse(text)
    } throws: { error in
      guard let syntax = error as? JSONSyntaxError else { return false }
      return syntax.line == line && syntax.column == column
    }
  }

  @Test func nestingIsBoundedWithAnError() throws {
    let deep = String(repeating: "[", count: 1_000) + String(repeating: "]", count: 1_000)
    #expect(throws: Never.self) { try JSONParser.parse(deep) }
    let tooDeep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(tooDeep) }
  }

  @Test func invalidUTF8IsRejected() {
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    // After a plain run, and at the end of one.
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0x61, 0x62, 0xFF, 0x63, 0x22]) }
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0x61, 0x62, 0xC3, 0x22]) }
  }

  /// A UTF-8 byte order mark (EF BB BF) that a document begins with is not part of it, as
  /// Foundation's `JSONSerialization` reads it; anywhere else it is an unexpected byte.
  @Test func aByteOrderMarkBeforeADocumentIsSkippedAndNowhereElse() throws {
    let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
    let document = Array(#"{"bands": [{"name": "Wire"}]}"#.utf8)
    #expect(try JSONParser.parse(mark + document) == JSONParser.parse(document))
    #expect(try JSONParser.parse(mark + Array(" 42 ".utf8)) == 42)
    #expect(try JSONParser.parse("\u{FEFF}[1]") == [1])
    // Only one, only first, and never a document by itself.
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(mark + mark + document) }
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(" ".utf8) + mark + document) }
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array("[".utf8) + mark + Array("1]".utf8)) }
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(mark) }
    #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(mark.prefix(2) + document) }
  }

  /// Each object's members are gathered on one stack and moved out when it closes: objects
  /// read one after another from one text, each nesting others, keep every member, in order,
  /// and a value read earlier is unchanged by the reads after it.
  @Test func objectsReadOneAfterAnotherKeepTheirMembers() throws {
    let elements = (0..<40).map { index -> String in
      let nested = (0..<(index % 5)).map { #""k\#($0)": {"x": \#($0), "y": [{"z": "\#(index)"}]}"# }
      return #"{"name": "album \#(index)", "band": {"name": "band \#(index)", "members": [{"name": "m"}, {}]}"#
        + (nested.isEmpty ? "" : ", " + nested.joined(separator: ", ")) + "}"
    }
    let text = Array(("[" + elements.joined(separator: ",") + "]").utf8)
    var reader = JSONValueReader(text)
    var offset = 1
    var values: [JSONValue] = []
    for element in elements {
      let (value, end) = try reader.value(at: offset, depthLimit: 16)
      values.append(value)
      offset = end + 1
      #expect(value == (try JSONParser.parse(element)))
    }
    for (value, element) in zip(values, elements) {
      #expect(JSONWriter().string(from: value) == JSONWriter().string(from: try JSONParser.parse(element)))
      #expect(value.objectValue?.members.map(\.key).prefix(2) == ["name", "band"])
    }
    // A read that fails inside nested objects leaves their members behind; the next read
    // starts without them.
    let broken = Array(#"{"a": {"b": {"c": 1, "d": }}} {"e": {"f": 2}}"#.utf8)
    var again = JSONValueReader(broken)
    #expect(throws: JSONSyntaxError.self) { try again.value(at: 0, depthLimit: 16) }
    let next = try again.value(at: 30, depthLimit: 16)
    #expect(next.value == ["e": ["f": 2]])
  }

  @Test func writerRoundTripsThroughTheParser() throws {
    let value: JSONValue = ["s": "quote \" backslash \\ tab \t control \u{01}", "n": [1, 2.5, nil, true], "o": [:]]
    for options: JSONWriter.Options in [[], [.prettyPrinted], [.sortedKeys, .prettyPrinted]] {
      let text = JSONWriter(options: options).string(from: value)
      #expect(JSONWriter().string(from: try JSONParser.parse(text)) == JSONWriter().string(from: value))
    }
    // Plain strings (any script) are copied whole; the others escaped byte by byte.
    #expect(
      JSONWriter().string(from: ["plain": "Sigur Rós ✓", "escaped": "a\"b\\c\nd\u{1F}"])
        == #"{"escaped":"a\"b\\c\nd\u001f","plain":"Sigur Rós ✓"}"#)
  }

  /// Strings are read eight bytes at a time: any mix of plain ASCII, escapes, non-ASCII and
  /// raw control characters, at any offset from the start of the text and running to its
  /// very end, reads as Foundation reads it, and is refused where Foundation refuses it.
  @Test func stringsReadAWordAtATimeAgreeWithFoundation() async {
    let pieces = ["a", "Zq", "0123456", "\\\"", "\\\\", "\\n", "\\u00e9", "é", "ø€", "😀", "\u{01}", "\u{1F}", " ", "~"]
    let input = zip(Gen.int(in: 0...pieces.count - 1).array(of: 0...24), Gen.int(in: 0...9))
    await propertyCheck(count: 300, input: input) { picks, padding in
      let body = picks.map { pieces[$0] }.joined()
      // As an array's string, as the whole text, and as object keys met twice (the second
      // time from the parser's cache of keys).
      let keyed = "[{\"\(body)\": 1, \"x\(body)\": 2}, {\"x\(body)\": 3, \"\(body)\": 4, \"\(body)\(body)\": 5}]"
      for text in [String(repeating: " ", count: padding) + "[\"\(body)\"]", "\"\(body)\"", keyed] {
        let bytes = Array(text.utf8)
        let theirs = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        let ours = try? JSONParser.parse(bytes)
        #expect((ours == nil) == (theirs == nil), "\(text)")
        if let ours, let theirs { #expect(Self.normalised(ours) == Self.fromFoundation(theirs), "\(text)") }
        // Counted in UTF-16 too: a long string made as ASCII that is not counts its bytes.
        if case .array(let elements)? = ours, case .string(let string)? = elements.first,
          let theirString = (theirs as? [Any])?.first as? String
        {
          #expect(string.utf16.count == theirString.utf16.count && string.count == theirString.count)
        }
      }
    }
  }

  /// A non-ASCII character at every place of a long string, among the words its run is read
  /// in: the string is never taken for ASCII (which would count its UTF-8 bytes as UTF-16).
  @Test func aNonASCIICharacterAnywhereInALongStringIsSeen() throws {
    for before in 0...24 {
      for after in 0...9 {
        let string = String(repeating: "a", count: before) + "é" + String(repeating: "b", count: after)
        for text in ["[\"\(string)\"]", "\"\(string)\"", "{\"\(string)\": 1}"] {
          let parsed = try JSONParser.parse(text)
          let read: String? =
            switch parsed {
            case .string(let value): value
            case .array(let elements): if case .string(let value)? = elements.first { value } else { nil }
            case .object(let object): object.members.first?.key
            default: nil
            }
          #expect(read == string)
          #expect(read?.utf16.count == string.utf16.count, "\(text)")
        }
      }
    }
  }

  /// More short keys than the parser keeps, many alike in their first eight bytes, met three
  /// times over: each reads as itself, whether it was kept or pushed out.
  @Test func keysAlikeInTheirFirstWordReadAsThemselves() throws {
    let keys =
      (0..<100).map { "abcdefgh\($0)" } + (0..<16).map { String(repeating: "k", count: $0) } + ["é", "aé", "\\n"]
    let object = "{" + keys.enumerated().map { "\"\($0.element)\": \($0.offset)" }.joined(separator: ",") + "}"
    let parsed = try JSONParser.parse("[\(object), \(object), \(object)]")
    guard case .array(let objects) = parsed else {
      Issue.record("not an array")
      return
    }
    let expected = keys.map { $0.replacingOccurrences(of: "\\n", with: "\n") }
    for case .object(let read) in objects { #expect(read.members.map(\.key) == expected) }
    #expect(objects.count == 3)
  }

  /// - Reliability: Random bytes never crash the parser
  /// - Size: 3,000 inputs
  @Test(.tags(.reliability)) func randomBytesNeverCrashTheParser() {
    var generator = SeededGenerator(seed: 7)
    let alphabet = Array("{}[]\",:0123456789-+.eEtruefalsn \n\\u".utf8)
    for _ in 0..<3_000 {
      let length = Int.random(in: 0..<40, using: &generator)
      let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
      _ = try? JSONParser.parse(bytes)
    }
  }
}
