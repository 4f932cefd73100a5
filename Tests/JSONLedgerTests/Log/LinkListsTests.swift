import JSONLedgerTestSupport
import PropertyBased
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

  /// Any run of sets, removals and modifications leaves what it leaves in a dictionary, and
  /// the lists iterate in id order.
  @Test func behavesLikeADictionaryAndIteratesInIDOrder() async {
    await propertyCheck(count: 200, input: Gen.int(in: 0...599).array(of: 0...40)) { steps in
      var lists = LinkLists()
      var dictionary: [UInt32: [UInt64]] = [:]
      for step in steps {
        let id = UInt32(step % 10)
        let target = UInt64(step / 30)
        switch step / 10 % 3 {
        case 0:
          lists[id] = nil
          dictionary[id] = nil
        case 1:
          lists[id] = [target]
          dictionary[id] = [target]
        default:
          lists.modify(id) { $0.append(target) }
          dictionary[id, default: []].append(target)
        }
        #expect(lists[id].map(Array.init) == dictionary[id])
        #expect(lists.count == dictionary.count)
      }
      #expect(lists.map(\.key) == dictionary.keys.sorted())
      #expect(Dictionary(uniqueKeysWithValues: lists.map { ($0.key, Array($0.value)) }) == dictionary)
    }
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

@Suite("The targets of one link list")
struct LinkTargetsTests {
  /// Any run of edits leaves the same targets as the same edits to an array, held as a list
  /// of that count is held (one target inline), equal and hashed like a list built whole.
  @Test func editsLeaveWhatTheSameEditsLeaveInAnArray() async {
    await propertyCheck(count: 200, input: Gen.int(in: 0...999).array(of: 0...24)) { steps in
      var targets: LinkTargets = []
      var array: [UInt64] = []
      for step in steps {
        let value = UInt64(step / 6)
        switch step % 6 {
        case 0:
          targets.append(value)
          array.append(value)
        case 1:
          let position = step % (array.count + 1)
          targets.insert(value, at: position)
          array.insert(value, at: position)
        case 2 where !array.isEmpty:
          let position = step % array.count
          #expect(targets.remove(at: position) == array.remove(at: position))
        case 3:
          targets.removeAll { $0 % 3 == value % 3 }
          array.removeAll { $0 % 3 == value % 3 }
        case 4:
          // One target appended to an empty list is held inline.
          let appended = step % 2 == 0 ? [value] : [value, value + 1]
          targets.append(contentsOf: appended)
          array.append(contentsOf: appended)
        default:
          let low = array.isEmpty ? 0 : step % array.count
          let high = low + (array.count - low) / 2
          let replacement = Array(repeating: value, count: step % 3)
          targets.replaceSubrange(low..<high, with: replacement)
          array.replaceSubrange(low..<high, with: replacement)
        }
        targets._checkInvariants()
        #expect(Array(targets) == array)
        #expect(targets.array == array)
        #expect(targets.count == array.count)
        #expect(targets == LinkTargets(array))
        #expect(targets.hashValue == LinkTargets(array).hashValue)
      }
    }
  }

  @Test func aChangeAppliesToTargetsAsToAnArray() {
    let lists: [[UInt64]] = [[], [4], [2, 9], [1, 3, 5, 7]]
    let changes = [
      LinkChange(relationshipID: 1, added: [6], removed: []),
      LinkChange(relationshipID: 1, added: [], removed: [4]),
      LinkChange(relationshipID: 1, added: [2, 8], removed: [3, 9]),
      LinkChange(relationshipID: 1, from: [4], to: [9, 4], isOrdered: true),
    ]
    for list in lists {
      for change in changes {
        var targets = LinkTargets(list)
        change.apply(to: &targets)
        targets._checkInvariants()
        #expect(targets.array == change.applied(to: list))
      }
    }
  }
}

extension LinkTargetsTests {
  /// What holding one target inline is for: a list costs no more than an array's reference
  /// beside its relationship id.
  @Test func aListOfOneTakesNoMoreRoomThanAnArrayReference() {
    #expect(MemoryLayout<LinkTargets>.size == 9)
    #expect(LinkLists.entryStride == 16)
  }
}
