import JSONLedgerJSON
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

  @Test func nestingPastTheDepthLimitHasNoEnd() {
    let skim = JSONSkim(Array(#"[{"a": [[]]}]"#.utf8))
    #expect(skim.valueEnd(from: 0, depthLimit: 4) == 13)
    #expect(skim.valueEnd(from: 0, depthLimit: 3) == nil)
    #expect(skim.valueEnd(from: 1, depthLimit: 3) == 12)
  }
}
