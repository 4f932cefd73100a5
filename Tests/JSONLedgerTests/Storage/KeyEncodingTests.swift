import JSONLedgerSupport
import JSONLedgerTestSupport
import PropertyBased
import Testing

@testable import JSONLedger

@Suite("Identity keys and the resolver's slot table")
struct KeyEncodingTests {
  /// The projector appends new objects' keys in this order, as LMDB orders keys: bytes first,
  /// then a prefix before what it begins (a key out of order is still put, just slower).
  @Test func newKeysComeOutInLMDBsOrderWithTheirValues() async {
    await propertyCheck(count: 200, input: Gen.int(in: 0...3).array(of: 0...5).array(of: 0...12)) { keyDigits in
      let keys = Array(Set(keyDigits.map { $0.map(UInt8.init) }))
      var newKeys = Projector.NewKeys()
      // Values of every length up to a few hundred bytes, each starting with its index.
      for (index, key) in keys.enumerated() {
        newKeys.add(key) { $0 += [UInt8(index)] + [UInt8](repeating: 7, count: index * 37 % 300) }
      }
      var seen: [([UInt8], [UInt8])] = []
      newKeys.forEachInKeyOrder { key, value in seen.append((Array(key), Array(value))) }
      #expect(seen.map(\.0) == keys.sorted { $0.lexicographicallyPrecedes($1) })
      #expect(seen.allSatisfy { keys[Int($0.1[0])] == $0.0 && $0.1.count == 1 + Int($0.1[0]) * 37 % 300 })
    }
  }

  /// An identity's bytes are what the layout says (`OrderedEncoding`), however the encoder
  /// writes them (a lone text with its root in one reserved write; a text with a NUL byte by
  /// byte), into a buffer that held a longer or shorter key before.
  @Test func anIdentityIsEncodedAsItsLayoutSays() async {
    let input = Gen.int(in: 0...99).array(of: 0...40).array(of: 1...3)
    var buffer: [UInt8] = Array(repeating: 9, count: 50)
    await propertyCheck(count: 300, input: input) { parts in
      // Each part a text of those code points (0 is NUL, 99 is "é"), or a whole number when
      // it starts with 98.
      let values: [AttributeValue] = parts.map { part in
        if part.first == 98 { return .integer(Int64(part.count) - 20) }
        return .string(String(part.map { $0 == 99 ? "é" : Character(Unicode.Scalar(UInt8($0))) }))
      }
      var expected: [UInt8] = [0, 0, 1, 7]
      for value in values {
        switch value {
        case .string(let text):
          expected.append(1)
          for byte in text.utf8 { expected += byte == 0 ? [0, 0xFF] : [byte] }
          expected += [0, 1]
        case .integer(let number):
          expected.append(2)
          expected.appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63))
        default: break
        }
      }
      OrderedEncoding.encodeIdentity(root: 263, values, into: &buffer)
      #expect(buffer == expected)
      if values.count == 1 {
        OrderedEncoding.encodeIdentity(root: 263, CollectionOfOne(values[0]), into: &buffer)
        #expect(buffer == expected)
      }
    }
  }

  @Test func identityKeysSortLikeTheirStringsAndKeepNULsApart() {
    let names = ["", "a", "a\u{0}", "a\u{0}b", "a\u{0}\u{0}", "a\u{1}", "ab", "b", "é"]
    let keys = names.map { StoreKeys.identity(root: 7, [.string($0)]).key }
    #expect(Set(keys).count == names.count)
    #expect(
      keys.sorted { $0.lexicographicallyPrecedes($1) }
        == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map {
          StoreKeys.identity(root: 7, [.string($0)]).key
        })
    #expect(keys[1] == [0, 0, 0, 7, 1, 0x61, 0, 1])
    #expect(keys[2] == [0, 0, 0, 7, 1, 0x61, 0, 0xFF, 0, 1])
  }

  @Test func objectsWhoseKeysDifferOnlyByNULsAreDistinct() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: MappingRuleTests.model)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "a"], ["name": "a\u{0}"], ["name": "a\u{0}b"], ["name": "a\u{0}"]], as: "Tag")
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.created == 3)
    try ledger.read { (view: borrowing View) throws in
      for name in ["a", "a\u{0}", "a\u{0}b"] {
        #expect(try view.object("Tag", key: .string(name))?["name"] == .string(name))
      }
      #expect(try view.object("Tag", key: "a\u{0}c") == nil)
    }
  }

  @Test func slotTableFindsEveryIDAcrossGrowth() {
    var table = SlotTable()
    var generator = SeededGenerator(seed: 11)
    let ids = (0..<5_000).map { index in
      index % 3 == 0 ? UInt64(index + 1) : UInt64.random(in: 1...UInt64.max, using: &generator)
    }
    var expected: [UInt64: Int] = [:]
    for (slot, id) in ids.enumerated() where expected[id] == nil {
      #expect(table[id] == nil)
      table.insert(id, slot: slot)
      expected[id] = slot
    }
    table.insert(0, slot: -1)
    for (id, slot) in expected { #expect(table[id] == slot) }
    #expect(table[0] == -1)
    #expect(table[UInt64.max - 1] == expected[UInt64.max - 1])
  }

  @Test func slotTableReservedUpFrontHoldsTheSame() {
    var table = SlotTable()
    table.reserveCapacity(1_000)
    for id in 1...3_000 as ClosedRange<UInt64> { table.insert(id * 1_024, slot: Int(id)) }
    #expect((1...3_000 as ClosedRange<UInt64>).allSatisfy { table[$0 * 1_024] == Int($0) })
    #expect(table[1] == nil)
  }
}
