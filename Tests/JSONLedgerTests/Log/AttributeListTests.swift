import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("An object's attribute list")
struct AttributeListTests {
  @Test func behavesLikeADictionaryAndIteratesInNameOrder() {
    var generator = SeededGenerator(seed: 5)
    var list = AttributeList()
    var dictionary: [String: AttributeValue] = [:]
    let names = ["name", "sales", "label", "released", "a", "zz", "é", "Name", "name2", ""]
    for step in 0..<2_000 {
      let name = names[Int.random(in: 0..<names.count, using: &generator)]
      let value: AttributeValue? = Int.random(in: 0..<4, using: &generator) == 0 ? nil : .integer(Int64(step))
      list[name] = value
      dictionary[name] = value
      #expect(list[name] == dictionary[name])
      #expect(list.count == dictionary.count)
    }
    #expect(list.map(\.key) == dictionary.keys.sorted())
    #expect(list.dictionary == dictionary)
    #expect(AttributeList(dictionary) == list)
  }

  @Test func equalListsHoldTheSameAttributesWhateverTheOrderOfSetting() {
    var first = AttributeList()
    var second = AttributeList()
    first["b"] = .integer(2)
    first["a"] = .string("x")
    second["a"] = .string("x")
    second["c"] = .bool(true)
    second["b"] = .integer(2)
    second["c"] = nil
    #expect(first == second)
    #expect(first == ["a": .string("x"), "b": .integer(2)])
  }

  @Test func differencesListEachChangedNameOnceInNameOrder() {
    let old: AttributeList = ["kept": .integer(1), "changed": .string("old"), "removed": .bool(true)]
    let new: AttributeList = ["kept": .integer(1), "changed": .string("new"), "added": .double(2.5)]
    let differences = AttributeList.differences(from: old, to: new)
    #expect(differences.map(\.name) == ["added", "changed", "removed"])
    #expect(differences.map(\.old) == [nil, .string("old"), .bool(true)])
    #expect(differences.map(\.new) == [.double(2.5), .string("new"), nil])
    #expect(AttributeList.differences(from: new, to: new).isEmpty)
    #expect(AttributeList.differences(from: [:], to: new).map(\.name) == ["added", "changed", "kept"])
  }
}
