import PropertyBased
import Testing

@testable import JSONLedger

/// The names a record lists once each (`RecordCoding.NameIndex`): searched one by one while
/// they are few, found through a table past that. Either way a name keeps the position it was
/// first given, and positions follow the order names were first used.
@Suite("A record's name index")
struct NameIndexTests {
  @Test func eachNameKeepsThePositionItWasFirstGivenBeforeAndAfterTheTableIsMade() async {
    // Up to 40 distinct names, met in any order and repeated: past 16 the table takes over.
    await propertyCheck(count: 300, input: Gen.int(in: 0...39).array(of: 0...120)) { picks in
      var index = RecordCoding.NameIndex()
      var expected: [String] = []
      for pick in picks {
        // Names built afresh each time: equal text, not shared storage.
        let name = "name " + String(pick)
        let position = index.position(of: name)
        if let first = expected.firstIndex(of: name) {
          #expect(position == first)
        } else {
          #expect(position == expected.count)
          expected.append(name)
        }
      }
      #expect(index.names == expected)
      // Asked again after all of them, every name is where it was put.
      for (position, name) in expected.enumerated().reversed() { #expect(index.position(of: name) == position) }
    }
  }
}
