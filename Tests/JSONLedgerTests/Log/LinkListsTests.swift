import Testing

@testable import JSONLedger

@Suite("Link lists of an object")
struct LinkListsTests {
  @Test func listsIterateByIDWhateverTheOrderTheyWereSetIn() {
    var lists: LinkLists = [9: [1], 2: [5, 6]]
    lists[4] = [7]
    #expect(lists.map(\.key) == [2, 4, 9])
    #expect(lists == [4: [7], 9: [1], 2: [5, 6]])
    #expect(lists[4] == [7])
    #expect(lists[3] == nil)
  }

  @Test func settingNilRemovesAndModifyAddsAnEmptyListFirst() {
    var lists: LinkLists = [1: [10]]
    lists[1] = nil
    lists[8] = nil
    #expect(lists.isEmpty)
    lists.modify(3) { $0.append(30) }
    lists.modify(3) { $0.append(31) }
    #expect(lists[3] == [30, 31])
    #expect(lists.count == 1)
  }
}
