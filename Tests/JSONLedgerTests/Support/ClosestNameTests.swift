import JSONLedgerSupport
import PropertyBased
import Testing

@Suite("The name a typo most likely meant")
struct ClosestNameTests {
  static let commands = ["init", "import", "export", "get", "log", "show", "diff", "revert", "rewind", "verify"]

  @Test func aTypoOrAnotherCaseFindsTheNameAndNonsenseFindsNone() {
    #expect(closestName(to: "exprot", among: Self.commands) == "export")
    #expect(closestName(to: "improt", among: Self.commands) == "import")
    #expect(closestName(to: "verfy", among: Self.commands) == "verify")
    #expect(closestName(to: "Band", among: ["band", "album"]) == "band")
    #expect(closestName(to: "zzz", among: Self.commands) == nil)
    #expect(closestName(to: "", among: Self.commands) == nil)
    // Two names one edit away: no guess.
    #expect(closestName(to: "cat", among: ["bat", "hat"]) == nil)
    #expect(closestName(to: "rewert", among: ["revert", "rewind", "reward"]) == "revert")
    // A short name takes one edit at most.
    #expect(closestName(to: "gt", among: ["get", "log"]) == "get")
    #expect(closestName(to: "lxx", among: ["log"]) == nil)
  }

  @Test func theEditDistanceIsZeroOnlyForEqualTextsSymmetricAndAtMostTheLongerLength() async {
    let letters = Gen.int(in: 0...3).map { Character(UnicodeScalar(UInt8(97 + $0))) }
    await propertyCheck(count: 300, input: letters.array(of: 0...7), letters.array(of: 0...7)) { a, b in
      let distance = editDistance(a, b)
      #expect(distance == editDistance(b, a))
      #expect((distance == 0) == (a == b))
      #expect(distance <= max(a.count, b.count))
      #expect(distance >= abs(a.count - b.count))
      #expect(editDistance(a, a + ["z"]) == 1)
    }
  }
}
