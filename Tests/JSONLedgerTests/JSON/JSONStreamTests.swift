import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Streaming JSON reader")
struct JSONStreamTests {
  func elements(_ text: String, blockSize: Int) throws -> [(String?, JSONValue)] {
    let directory = try TemporaryDirectory()
    let file = directory.path + "/input.json"
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    var stream = try JSONStream(path: file, blockSize: blockSize)
    var result: [(String?, JSONValue)] = []
    try stream.forEachElement { result.append(($0, $1)) }
    return result
  }

  @Test(arguments: [1, 3, 7, 64, 1 << 20])
  func givesTheSameElementsAsTheWholeDocumentParser(blockSize: Int) throws {
    let text = try String(contentsOf: Fixtures.url("bands-initial.json"), encoding: .utf8)
    let streamed = try elements(text, blockSize: blockSize)
    let whole = try JSONParser.parse(text)
    var expected: [(String?, JSONValue)] = []
    for member in whole.objectValue ?? [:] {
      for element in member.value.arrayValue ?? [] { expected.append((member.key, element)) }
    }
    #expect(streamed.map(\.0) == expected.map(\.0))
    #expect(streamed.map(\.1) == expected.map(\.1))
  }

  @Test(arguments: [2, 5, 1 << 20])
  func topLevelArraysScalarsAndTrailingCommas(blockSize: Int) throws {
    let streamed = try elements(#" [ {"a": "x,]}"}, 12 , "s\"]", [1, [2]], null, true, ] "#, blockSize: blockSize)
    #expect(streamed.map(\.1) == [["a": "x,]}"], 12, "s\"]", [1, [2]], nil, true])
    #expect(streamed.allSatisfy { $0.0 == nil })
  }

  /// As `JSONParser` reads a document: a byte order mark it begins with is skipped, and one
  /// anywhere else is an unexpected byte, whichever block it falls in.
  /// Each element handed on as text is its bytes in the file, placed where it starts (line,
  /// column and offset, counted over the whole file), whatever blocks the file is read in.
  @Test(arguments: [1, 3, 8, 1 << 20])
  func elementsAsTextArePlacedWhereTheyStartInTheFile(blockSize: Int) throws {
    let text = "{\"a\": [\n  {\"b\": 1},\n\n   \"x\\ny\",\n 12, [3,\n 4]\n],\n\"c\": [true]}"
    let bytes = Array(text.utf8)
    let directory = try TemporaryDirectory()
    let file = directory.path + "/input.json"
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    var stream = try JSONStream(path: file, blockSize: blockSize)
    var placed: [(bytes: [UInt8], place: JSONElementPlace)] = []
    try stream.forEachElementText { _, bytes, place in placed.append((Array(bytes), place)) }
    #expect(
      placed.map { String(decoding: $0.bytes, as: UTF8.self) } == [#"{"b": 1}"#, #""x\ny""#, "12", "[3,\n 4]", "true"])
    for (elementBytes, element) in placed {
      #expect(Array(bytes[element.offset..<(element.offset + elementBytes.count)]) == elementBytes)
      let before = bytes[..<element.offset]
      let lineStart = (before.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
      #expect(element.line == before.count { $0 == UInt8(ascii: "\n") } + 1)
      #expect(element.column == element.offset - lineStart + 1)
    }
  }

  /// A backslash escapes the byte after it, also a backslash, also where a block ends between
  /// the two: a string ending in an escaped backslash ends at its quote.
  @Test(arguments: [1, 2, 3, 5, 1 << 20])
  func escapedBackslashesAndQuotesEndStringsWhereTheyEnd(blockSize: Int) throws {
    let streamed = try elements(#"[ "x\\", {"k": "\\\"}]", "l": ["\\"]}, "\\\\", "a\"b" ]"#, blockSize: blockSize)
    #expect(streamed.map(\.1) == [#"x\"#, ["k": #"\"}]"#, "l": [#"\"#]], #"\\"#, #"a"b"#])
  }

  @Test(arguments: [1, 2, 3, 4, 1 << 20])
  func aByteOrderMarkBeforeTheDocumentIsSkipped(blockSize: Int) throws {
    let streamed = try elements("\u{FEFF}" + #"{"bands": [{"name": "Wire"}, 2]}"#, blockSize: blockSize)
    #expect(streamed.map(\.0) == ["bands", "bands"])
    #expect(streamed.map(\.1) == [["name": "Wire"], 2])
    #expect(try elements("\u{FEFF}[1]", blockSize: blockSize).map(\.1) == [1])
    #expect(throws: JSONSyntaxError.self) { _ = try elements(" \u{FEFF}[1]", blockSize: blockSize) }
    #expect(throws: JSONSyntaxError.self) { _ = try elements("\u{FEFF}\u{FEFF}[1]", blockSize: blockSize) }
    #expect(throws: JSONSyntaxError.self) { _ = try elements("\u{FEFF}", blockSize: blockSize) }
  }

  @Test(
    arguments: [
      ("[1, 2", 1, 6), ("[{\"a\": }]", 1, 8), ("{\"bands\": [1,\n 2 3]}", 2, 4), ("[1] 2", 1, 5),
      ("[\n{\"a\":\n tru}]", 3, 2),
    ] as [(String, Int, Int)])
  func errorsNameTheLineAndColumnInTheWholeFile(text: String, line: Int, column: Int) throws {
    for blockSize in [2, 1 << 20] {
      #expect {
        _ = try elements(text, blockSize: blockSize)
      } throws: { error in
        // The JSON target's own error: it knows nothing of a ledger.
        guard let syntax = error as? JSONSyntaxError else { return false }
        return syntax.line == line && syntax.column == column
      }
    }
  }
}
