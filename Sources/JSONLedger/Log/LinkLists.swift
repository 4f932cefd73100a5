import JSONLedgerSupport

/// An object's link lists by relationship id, kept sorted by id.
///
/// Reads like a dictionary (`lists[id]`, `for (id, targets) in lists`) but is a small array:
/// an object has a handful of relationships, and scanning a few ids costs far less than the
/// hashing a `Dictionary` does on every access. Iteration is in ascending id order.
struct LinkLists: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
  typealias Element = (key: UInt32, value: LinkTargets)

  fileprivate struct Entry: Sendable, Equatable {
    // Targets first: the id fits in the padding after their 9 bytes, so an entry takes 16
    // bytes, not 24.
    var targets: LinkTargets
    var id: UInt32

    init(id: UInt32, targets: LinkTargets) {
      self.targets = targets
      self.id = id
    }
  }

  private var entries: [Entry] = []

  /// Bytes an entry takes in the array (for a test of the layout).
  static var entryStride: Int { MemoryLayout<Entry>.stride }

  init() {}

  init(dictionaryLiteral elements: (UInt32, LinkTargets)...) {
    for (id, targets) in elements { self[id] = targets }
  }

  var isEmpty: Bool { entries.isEmpty }
  var count: Int { entries.count }
  /// Exact: `map` and other sequence algorithms allocate their result once.
  var underestimatedCount: Int { entries.count }
  var keys: [UInt32] { entries.map(\.id) }

  /// Where `id` is, or where it would go.
  private func position(of id: UInt32) -> (index: Int, found: Bool) {
    var index = 0
    while index < entries.count, entries[index].id < id { index += 1 }
    return (index, index < entries.count && entries[index].id == id)
  }

  /// The list of relationship `id`; setting nil removes it.
  subscript(id: UInt32) -> LinkTargets? {
    get {
      let (index, found) = position(of: id)
      return found ? entries[index].targets : nil
    }
    set { entries.setSortedEntry(newValue.map { Entry(id: id, targets: $0) }, at: position(of: id)) }
  }

  /// Runs `body` on the list of relationship `id` where it is stored (an empty list is added
  /// first when there is none): no copy of the list, so appending to a long one stays cheap.
  mutating func modify<Result>(_ id: UInt32, _ body: (inout LinkTargets) -> Result) -> Result {
    let (index, found) = position(of: id)
    if !found { entries.setSortedEntry(Entry(id: id, targets: []), at: (index, false)) }
    return body(&entries[index].targets)
  }

  /// Keeps each list reserved for `count` relationships without growing.
  mutating func reserveCapacity(_ count: Int) {
    entries.reserveCapacity(count)
  }

  struct Iterator: IteratorProtocol {
    fileprivate var base: IndexingIterator<[Entry]>
    mutating func next() -> Element? { base.next().map { ($0.id, $0.targets) } }
  }

  func makeIterator() -> Iterator { Iterator(base: entries.makeIterator()) }
}
