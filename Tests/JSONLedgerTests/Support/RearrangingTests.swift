import JSONLedgerSupport
import PropertyBased
import Testing

@Suite("Arrays rearranged and refitted in place")
struct RearrangingTests {
  /// Any permutation puts at each position the element its order names, as mapping the
  /// order over the elements does: by swaps alone (the elements are class instances here, and
  /// each stays the one instance, never copied into another).
  @Test func anArrayRearrangedByAnOrderHoldsTheElementsThatOrderNames() async {
    await propertyCheck(count: 300, input: Gen.int(in: 0...1_000).array(of: 0...40)) { keys in
      final class Box {
        let key: Int
        init(_ key: Int) { self.key = key }
      }
      var boxes = keys.map(Box.init)
      let original = boxes
      // An order that sorts by key, ties by position: every permutation shape turns up.
      let order = boxes.indices.sorted { (boxes[$0].key, $0) < (boxes[$1].key, $1) }
      boxes.rearrange(by: order)
      #expect(boxes.map(\.key) == keys.sorted())
      #expect(zip(boxes, order).allSatisfy { $0 === original[$1] })
    }
  }
}
