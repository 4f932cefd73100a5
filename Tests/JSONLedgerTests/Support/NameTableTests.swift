import JSONLedgerSupport
import Testing

@testable import JSONLedger

@Suite("Name tables (the model's lookups by name)")
struct NameTableTests {
  @Test func findsEveryNameAcrossGrowthAndNothingElse() {
    var table = NameTable<Int>()
    // Short and long names, non-ASCII ones, and names that are prefixes of others.
    let names = (0..<300).map { index in
      switch index % 4 {
      case 0: "a\(index)"
      case 1: "attribute_with_a_long_name_\(index)"
      case 2: "Sigur Rós \(index)"
      default: String(repeating: "k", count: index % 20 + 1)
      }
    }
    var expected: [String: Int] = [:]
    for (index, name) in names.enumerated() {
      table.updateValue(index, forName: name)
      expected[name] = index
    }
    #expect(table.count == expected.count)
    for (name, index) in expected { #expect(table[name] == index, "\(name)") }
    #expect(table["a"] == nil)
    #expect(table["attribute_with_a_long_name_"] == nil)
    #expect(table[""] == nil)
  }

  @Test func settingANameAgainReplacesItsValue() {
    var table: NameTable<String> = ["name": "first", "id": "remoteID"]
    table.updateValue("second", forName: "name")
    #expect(table["name"] == "second")
    #expect(table["id"] == "remoteID")
    #expect(table.count == 2)
  }

  @Test func aTableOfADictionaryHoldsTheSamePairs() {
    let dictionary = ["Band": 1, "Album": 2, "Musician": 3]
    let table = NameTable(dictionary)
    for (name, value) in dictionary { #expect(table[name] == value) }
    #expect(table["band"] == nil)
  }
}
