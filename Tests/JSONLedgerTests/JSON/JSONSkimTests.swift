import JSONLedgerJSON
import PropertyBased
import Testing

@Suite("Skimming JSON text")
struct JSONSkimTests {
  @Test(
    arguments: [
      #"{"a": [1, {"b": "x]}"}], "c": "\\"}"#, #"[ "x\\", {"k": "\\\"}]", "l": ["\\"]}, "\\\\", "a\"b" ]"#,
      #"[]"#, #"{}"#, #"[[[]]]"#, #"{"a":"}{]["}"#,
    ])
  func aContainerEndsAtItsClosingBracketWhateverItsStringsHold(text: String) {
    let skim = JSONSkim(Array((text + " , 1").utf8))
    #expect(skim.valueEnd(from: 0) == text.utf8.count)
  }

  @Test(arguments: [#"{"a": [1, 2}"#, #"["x]"#, #"["x\"]"#, #"[[]"#])
  func aContainerThatDoesNotCloseHasNoEnd(text: String) {
    #expect(JSONSkim(Array(text.utf8)).valueEnd(from: 0) == nil)
  }

  /// The bytes a string scan meets: the two it stops at, their neighbours, bytes that differ
  /// from them only in the top bit, and the borrow's edge cases.
  static let scannedBytes: [UInt8] = [
    0x22, 0x5C, 0x21, 0x23, 0x5B, 0x5D, 0xA2, 0xDC, 0x00, 0x01, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xFF, 0x61,
  ]

  /// Eight bytes compared at a time find what a byte-by-byte search finds, from every start,
  /// whatever bytes lie around it: the first quote or backslash, and the end of plain text.
  @Test func aStringScanFindsWhatAByteByByteSearchFindsFromEveryStart() async {
    let input = Gen.int(in: 0...(Self.scannedBytes.count * 4 - 1)).array(of: 0...40)
    await propertyCheck(count: 400, input: input) { picks in
      // Mostly plain bytes, as strings are, with the others mixed in.
      let bytes = picks.map { $0 < Self.scannedBytes.count ? Self.scannedBytes[$0] : 0x61 }
      bytes.withUnsafeBufferPointer { buffer in
        for start in 0...bytes.count {
          let expected = bytes[start...].firstIndex { $0 == 0x22 || $0 == 0x5C } ?? bytes.count
          #expect(StringScan.quoteOrBackslash(in: buffer, from: start) == expected, "\(bytes) from \(start)")
          let plainEnd =
            bytes[start...].firstIndex { $0 < 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C } ?? bytes.count
          #expect(StringScan.plainTextEnd(in: buffer, from: start) == plainEnd, "\(bytes) from \(start)")
        }
      }
    }
  }

  /// A string value and a member's key end at their closing quote, escapes and all, however
  /// their bytes fall into eight-byte blocks.
  @Test func stringsAndKeysEndAtTheirClosingQuote() async {
    let pieces = ["a", "\"", "\\", "é", "\u{1F600}", "\n", "xyzxyzxy", "/"]
    await propertyCheck(count: 300, input: Gen.int(in: 0...(pieces.count - 1)).array(of: 0...30)) { picks in
      let text = picks.map { pieces[$0] }.joined()
      let string = JSONWriter().bytes(from: .string(text))
      let skim = JSONSkim(string + Array(#", "x""#.utf8))
      #expect(skim.valueEnd(from: 0) == string.count, "\(text)")
      let member = JSONSkim(Array("{".utf8) + string + Array(#": 1}"#.utf8))
      let key = member.memberKey(at: 1)
      #expect(key?.key == 2..<(string.count))
      #expect(key?.hasEscapes == string.contains(0x5C))
      #expect(key.map { member.bytes[$0.value] } == UInt8(ascii: "1"))
    }
  }

  @Test func nestingPastTheDepthLimitHasNoEnd() {
    let skim = JSONSkim(Array(#"[{"a": [[]]}]"#.utf8))
    #expect(skim.valueEnd(from: 0, depthLimit: 4) == 13)
    #expect(skim.valueEnd(from: 0, depthLimit: 3) == nil)
    #expect(skim.valueEnd(from: 1, depthLimit: 3) == 12)
  }
}
