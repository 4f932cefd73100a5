import JSONLedgerSupport
import PropertyBased
import Testing

/// A two-tail buffer holds two lists in room made by hand: whatever is appended, copied,
/// moved and let go, each value must read as the two arrays the same steps build, its
/// invariants must hold after every step, and no element may outlive the last block holding it.
@Suite("A two-tail buffer")
struct TwoTailBufferTests {
  /// An element whose life is watched: a weak reference to its token goes nil once every copy
  /// of the element is destroyed (and a second destroy would free it twice and crash).
  final class Token: Sendable {
    let number: Int
    init(_ number: Int) { self.number = number }
  }

  struct Item {
    var name: String
    var token: Token
  }

  /// A block whose elements are destroyed by the base class's generic `deinit`.
  final class GenericBlock: TwoTailBuffer<Int, Item, Token> {}

  /// A block that destroys its elements in its own `deinit`, as `MappedObject`'s does.
  final class OwnBlock: TwoTailBuffer<Int, Item, Token> {
    deinit {
      destroyLists()
    }
  }

  /// A value over a block, copied on write and grown as `MappedObject` is.
  struct Lists<Block: TwoTailBuffer<Int, Item, Token>> {
    var block: Block

    init(firstRoom: Int, secondRoom: Int) {
      block = Block.make(0, firstRoom: firstRoom, secondRoom: secondRoom)
    }

    var first: [String] {
      block.withPointers { header, first, _ in
        (0..<header.pointee.firstCount).map { "\(first[$0].name)/\(first[$0].token.number)" }
      }
    }
    var second: [Int] {
      block.withPointers { header, _, second in (0..<header.pointee.secondCount).map { second[$0].number } }
    }
    var fields: Int { block.withPointers { header, _, _ in header.pointee.fields } }

    private mutating func makeUnique(growing: (first: Bool, second: Bool) = (false, false)) {
      let (firstRoom, secondRoom, full) = block.withPointers { header, _, _ in
        let h = header.pointee
        return (
          h.firstRoom, h.secondRoom,
          (first: growing.first && h.firstCount == h.firstRoom, second: growing.second && h.secondCount == h.secondRoom)
        )
      }
      let unique = isKnownUniquelyReferenced(&block)
      if full.first || full.second || !unique {
        block = block.copy(
          firstRoom: full.first ? max(4, firstRoom * 2) : firstRoom,
          secondRoom: full.second ? max(4, secondRoom * 2) : secondRoom, moving: unique)
      }
    }

    mutating func append(_ item: Item) {
      makeUnique(growing: (true, false))
      block.appendFirst(item)
    }

    mutating func append(_ token: Token) {
      makeUnique(growing: (false, true))
      block.appendSecond(token)
    }

    mutating func setFields(_ value: Int) {
      makeUnique()
      block.withPointers { header, _, _ in header.pointee.fields = value }
    }
  }

  /// Runs `steps` over values of `Block` beside arrays, checking both read alike and the
  /// invariants hold after each step; returns weak references to every token made.
  func run<Block: TwoTailBuffer<Int, Item, Token>>(_ steps: [Int], as _: Block.Type) -> [() -> Token?] {
    var watched: [() -> Token?] = []
    func token(_ number: Int) -> Token {
      let token = Token(number)
      watched.append { [weak token] in token }
      return token
    }
    let first = steps.first ?? 0
    var values = [Lists<Block>(firstRoom: first % 3, secondRoom: first / 3 % 3)]
    var expected: [(first: [String], second: [Int], fields: Int)] = [([], [], 0)]
    for step in steps.dropFirst() {
      let which = step % values.count
      switch step / 5 % 5 {
      case 0:
        values[which].append(Item(name: "i\(step)", token: token(step)))
        expected[which].first.append("i\(step)/\(step)")
      case 1:
        values[which].append(token(step))
        expected[which].second.append(step)
      case 2:
        values.append(values[which])
        expected.append(expected[which])
      case 3:
        values[which].setFields(step)
        expected[which].fields = step
      default:
        if values.count > 1 {
          values.remove(at: which)
          expected.remove(at: which)
        }
      }
      for (value, wanted) in zip(values, expected) {
        value.block._checkInvariants()
        #expect(value.first == wanted.first)
        #expect(value.second == wanted.second)
        #expect(value.fields == wanted.fields)
      }
    }
    return watched
  }

  @Test func readsAsTwoArraysWhateverItsRoomCopiesAndMovesAndLeavesNoElementAlive() async {
    await propertyCheck(count: 300, input: Gen.int(in: 0...999).array(of: 0...60)) { steps in
      for watched in [run(steps, as: GenericBlock.self), run(steps, as: OwnBlock.self)] {
        #expect(watched.allSatisfy { $0() == nil }, "an element outlived every block holding it")
      }
    }
  }

  /// A block made with no room holds nothing and grows on the first append of each list.
  @Test func aBlockWithNoRoomGrowsOnItsFirstAppend() {
    var lists = Lists<OwnBlock>(firstRoom: 0, secondRoom: 0)
    lists.block._checkInvariants()
    lists.append(Token(1))
    lists.append(Item(name: "a", token: Token(2)))
    lists.block._checkInvariants()
    #expect(lists.first == ["a/2"])
    #expect(lists.second == [1])
  }
}
