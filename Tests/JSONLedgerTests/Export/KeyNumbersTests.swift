import PropertyBased
import Testing

@testable import JSONLedger

/// The export's kept-key numbers, by id: the dense array by sequence and the table for ids
/// past it hold what a dictionary holds, through growth and clearing.
@Suite("Kept-key numbers by object id")
struct KeyNumbersTests {
  /// An id from a step: a root from 1 to 4 and the step as its sequence (sequences are
  /// store-wide: no two ids share one), past the dense array's limit for every seventh.
  static func id(_ step: Int) -> UInt64 {
    let root = UInt32(1 + step % 4)
    let sequence = step % 7 == 0 ? KeyNumbers.denseLimit + UInt64(step) : UInt64(step)
    return ObjectIDs.make(root: root, sequence: sequence)
  }

  @Test func theNumbersReadBackAsADictionaryHoldsThemThroughGrowthAndClearing() async {
    await propertyCheck(count: 200, input: Gen.int(in: 0...20_000).array(of: 1...200)) { steps in
      var numbers = KeyNumbers()
      var expected: [UInt64: Int] = [:]
      for (number, step) in steps.enumerated() {
        // Every 50th step clears, as a full key cache does.
        if step % 50 == 49 {
          numbers.removeAll()
          expected = [:]
          continue
        }
        // Kept once, as an export keeps a key.
        guard expected[Self.id(step)] == nil else { continue }
        numbers.insert(Self.id(step), number: number)
        expected[Self.id(step)] = number
      }
      #expect(numbers.count == expected.count, "\(steps)")
      for (id, number) in expected { #expect(numbers[id] == number, "\(steps)") }
      // Steps go to 20,000: these sequences were never given a number.
      for step in steps { #expect(numbers[Self.id(step + 20_001)] == nil, "\(steps)") }
      #if JSONLEDGER_INTERNAL_CHECKS
        #expect(numbers._checkInvariants(), "\(steps)")
      #endif
    }
  }

  @Test func anIDPastTheDenseLimitIsKeptBesideTheArray() {
    var numbers = KeyNumbers()
    numbers.insert(ObjectIDs.make(root: 1, sequence: KeyNumbers.denseLimit * 4), number: 7)
    #expect(numbers[ObjectIDs.make(root: 1, sequence: KeyNumbers.denseLimit * 4)] == 7)
    #expect(numbers[ObjectIDs.make(root: 1, sequence: 0)] == nil)
    #expect(numbers.count == 1)
    #if JSONLEDGER_INTERNAL_CHECKS
      #expect(numbers._checkInvariants())
    #endif
  }
}
