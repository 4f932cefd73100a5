/// The targets of one link list of one object: a to-one's target, or a to-many's targets.
///
/// Most lists hold one target: every to-one, and the reverse of a one-to-many. One target is
/// held inline, so that such a list allocates nothing (an array of one costs a 40-byte heap
/// block); any other count is an array. Reads like an array of object ids.
struct LinkTargets: RandomAccessCollection, RangeReplaceableCollection, ExpressibleByArrayLiteral, Hashable,
  Sendable
{
  private enum Storage: Sendable {
    case one(UInt64)
    /// Never one element: a single target is `one`, so that equal lists are held alike.
    case array([UInt64])
  }

  private var storage: Storage

  init() { storage = .array([]) }

  init(_ targets: [UInt64]) {
    storage = targets.count == 1 ? .one(targets[0]) : .array(targets)
  }

  init<Targets: Sequence<UInt64>>(_ targets: Targets) { self.init(Array(targets)) }

  init(arrayLiteral targets: UInt64...) { self.init(targets) }

  /// The targets as an array (allocates for one target).
  var array: [UInt64] {
    switch storage {
    case .one(let target): [target]
    case .array(let targets): targets
    }
  }

  var startIndex: Int { 0 }

  var endIndex: Int {
    switch storage {
    case .one: 1
    case .array(let targets): targets.count
    }
  }

  subscript(position: Int) -> UInt64 {
    switch storage {
    case .one(let target):
      precondition(position == 0, "index out of range")
      return target
    case .array(let targets): return targets[position]
    }
  }

  func index(after index: Int) -> Int { index + 1 }
  func index(before index: Int) -> Int { index - 1 }

  struct Iterator: IteratorProtocol {
    fileprivate var single: UInt64?
    fileprivate var rest: IndexingIterator<[UInt64]>

    mutating func next() -> UInt64? {
      if let target = single {
        single = nil
        return target
      }
      return rest.next()
    }
  }

  func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt64>) throws -> R) rethrows -> R? {
    switch storage {
    case .one: nil
    case .array(let targets): try targets.withContiguousStorageIfAvailable(body)
    }
  }

  func makeIterator() -> Iterator {
    switch storage {
    case .one(let target): Iterator(single: target, rest: [].makeIterator())
    case .array(let targets): Iterator(single: nil, rest: targets.makeIterator())
    }
  }

  /// Moves the targets out as an array, leaving the list empty: the array is then the only
  /// reference to its storage, so a change to it happens in place.
  private mutating func takeArray() -> [UInt64] {
    defer { storage = .array([]) }
    switch storage {
    case .one(let target): return [target]
    case .array(let targets): return targets
    }
  }

  mutating func append(_ target: UInt64) {
    switch storage {
    case .one(let first): storage = .array([first, target])
    case .array(let targets) where targets.isEmpty: storage = .one(target)
    case .array:
      var targets = takeArray()
      targets.append(target)
      storage = .array(targets)
    }
  }

  mutating func append<Targets: Sequence<UInt64>>(contentsOf targets: Targets) {
    // An empty list given one target (a to-one linked, a replayed creation's usual list)
    // holds it inline: no array is made and let go.
    if isEmpty, let single = targets.withContiguousStorageIfAvailable({ $0.count == 1 ? $0[0] : nil }) ?? nil {
      storage = .one(single)
      return
    }
    var all = takeArray()
    all.append(contentsOf: targets)
    self = LinkTargets(all)
  }

  mutating func replaceSubrange<Targets: Collection<UInt64>>(_ range: Range<Int>, with targets: Targets) {
    var all = takeArray()
    all.replaceSubrange(range, with: targets)
    self = LinkTargets(all)
  }

  static func == (left: LinkTargets, right: LinkTargets) -> Bool {
    switch (left.storage, right.storage) {
    case (.one(let a), .one(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    // One target is always `one`, so the counts differ; compared anyway, it costs nothing.
    default: left.elementsEqual(right)
    }
  }

  /// Checks that the list is held as one of its kind is: one target inline, never an array
  /// of one.
  func _checkInvariants() {
    if case .array(let targets) = storage { precondition(targets.count != 1, "one link target held as an array") }
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(count)
    for target in self { hasher.combine(target) }
  }
}

extension LinkTargets: CustomStringConvertible {
  var description: String { array.description }
}
