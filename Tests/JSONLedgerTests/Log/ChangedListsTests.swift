import Testing

@testable import JSONLedger

/// `ChangedAttributes` and `ChangedLinks`: a creation's or deletion's change holds its
/// state's lists, and says the same as the changes listed one by one.
@Suite("A change holding its state's lists")
struct ChangedListsTests {
  @Test func aStatesAttributesListAsACreationsOrADeletionsChanges() {
    let list: AttributeList = ["name": .string("Tin Drum"), "label": .string("Virgin")]
    let created = ChangedAttributes.whole(list, isNew: true)
    let listed = [
      AttributeChange(name: "label", old: nil, new: .string("Virgin")),
      AttributeChange(name: "name", old: nil, new: .string("Tin Drum")),
    ]
    #expect(created.changes == listed)
    #expect(created.count == 2)
    #expect(created.inverted.changes == listed.map { AttributeChange(name: $0.name, old: $0.new, new: $0.old) })
    #expect(created.isEqual(to: .listed(listed)) && ChangedAttributes.listed(listed).isEqual(to: created))
    #expect(!created.isEqual(to: .whole(list, isNew: false)))
  }

  @Test func aStatesLinkListsListAsACreationsOrADeletionsChanges() {
    // Relationship 4 is ordered: its list keeps its order.
    let lists: LinkLists = [3: [5, 9], 4: [2, 1]]
    let created = ChangedLinks(whole: lists, isNew: true) { $0 == 4 }
    guard case .whole = created else {
      Issue.record("a state's lists are held whole")
      return
    }
    let listed = [
      LinkChange(relationshipID: 3, from: [], to: [5, 9], isOrdered: false),
      LinkChange(relationshipID: 4, from: [], to: [2, 1], isOrdered: true),
    ]
    #expect(created.changes == listed)
    #expect(created.count == 2)
    #expect(created.inverted.changes == listed.map(\.inverted))
    #expect(created.isEqual(to: .listed(listed)) && ChangedLinks.listed(listed).isEqual(to: created))
    #expect(!created.isEqual(to: created.inverted))

    // Applied to nothing, a creation gives the state's lists back, as listed changes do.
    let change = ObjectChange(
      objectID: 1, entity: "Album", identity: [], kind: .created, changedAttributes: .listed([]),
      changedLinks: created)
    var fromWhole = ObjectState(entity: "Album", identity: [])
    fromWhole.apply(change)
    var fromListed = ObjectState(entity: "Album", identity: [])
    fromListed.apply(
      ObjectChange(objectID: 1, entity: "Album", identity: [], kind: .created, attributes: [], links: listed))
    #expect(fromWhole.links == lists && fromListed.links == lists)
    #expect(
      change == ObjectChange(objectID: 1, entity: "Album", identity: [], kind: .created, attributes: [], links: listed))
  }

  /// An empty list is no change: a state holding one is listed, without it.
  @Test func aStateWithAnEmptyListHasItsOtherListsListed() {
    let deleted = ChangedLinks(whole: [3: [5], 6: []], isNew: false) { _ in false }
    guard case .listed(let changes) = deleted else {
      Issue.record("a state with an empty list is listed")
      return
    }
    #expect(changes == [LinkChange(relationshipID: 3, from: [5], to: [], isOrdered: false)])
  }
}
