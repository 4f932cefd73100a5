import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Link list differences and JSON paths")
struct LinkChangeTests {
  @Test(arguments: 1...20)
  func mergeWalkFindsWhatASetComparisonFinds(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    func sortedList() -> [UInt64] {
      Array(
        Set((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt64.random(in: 1...60, using: &generator) })
      ).sorted()
    }
    let old = sortedList()
    let new = sortedList()
    let (removed, added) = LinkChange.difference(from: old, to: new)
    #expect(removed == old.filter { !new.contains($0) })
    #expect(added == new.filter { !old.contains($0) })
  }

  @Test func unsortedListsFallBackToSets() {
    let (removed, added) = LinkChange.difference(from: [5, 1, 3], to: [3, 7, 1])
    #expect(removed == [5])
    #expect(added == [7])
  }

  @Test func pathsFormatKeysWithDotsAndIndexesWithBrackets() {
    #expect(
      JSONPath("albums").appending(index: 3).appending(key: "producer").appending(key: "name").description
        == "albums[3].producer.name")
    #expect(JSONPath("").appending(key: "name").description == "name")
    #expect(JSONPath("").appending(index: 0).appending(key: "born").description == "[0].born")
    #expect(
      JSONPath("bands").appending(index: 1).appending(key: "members").appending(index: 2).description
        == "bands[1].members[2]")
    let deep = (0..<7).reduce(JSONPath("a")) { path, depth in
      depth.isMultiple(of: 2) ? path.appending(index: depth) : path.appending(key: "k\(depth)")
    }
    #expect(deep.description == "a[0].k1[2].k3[4].k5[6]")
    #expect(deep.appending(key: "x").appending(index: 9).description == "a[0].k1[2].k3[4].k5[6].x[9]")
  }
}
