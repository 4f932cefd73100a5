import JSONLedgerSupport

/// An object's attribute values by name, kept sorted by name.
///
/// Reads like a dictionary (`attributes[name]`, `for (name, value) in attributes`) but is a
/// small sorted array. An object has a handful of attributes: finding one compares a few short
/// names, where a `Dictionary` hashes the name on every access and allocates three regions
/// per object. Stored states list attributes sorted by name too, so they are written and read
/// in one pass, with no sorting and no hashing. Iteration is in ascending name order (`<`).
struct AttributeList: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
  typealias Element = (key: String, value: AttributeValue)

  fileprivate struct Entry: Sendable, Equatable {
    var name: String
    var value: AttributeValue
  }

  // Sorted by name, names unique: equal lists are equal attribute sets.
  private var entries: [Entry] = []

  init() {}

  /// An empty list with room for `count` attributes.
  init(minimumCapacity count: Int) { entries.reserveCapacity(count) }

  /// Room for `count` attributes without growing.
  mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

  init(dictionaryLiteral elements: (String, AttributeValue)...) {
    for (name, value) in elements { self[name] = value }
  }

  /// The attributes of a dictionary.
  init(_ dictionary: [String: AttributeValue]) {
    entries = dictionary.map { Entry(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
  }

  var isEmpty: Bool { entries.isEmpty }
  var count: Int { entries.count }

  /// The name of the mark a placeholder's state carries beside its identity: an object known
  /// only because something referred to it by key (a stub), until a payload of its own
  /// delivers it. No attribute has an empty name, so the mark is never a property; it sorts
  /// first. Kept as an attribute so that records, history, as-of reads, revert and replay
  /// carry it as they carry any value.
  static let placeholderMark = ""

  /// Whether the list carries the placeholder mark (`placeholderMark`).
  var isPlaceholder: Bool { entries.first?.name == Self.placeholderMark }
  /// Exact: `map` and other sequence algorithms allocate their result once.
  var underestimatedCount: Int { entries.count }

  /// The attributes as a dictionary (what public snapshots hold).
  var dictionary: [String: AttributeValue] {
    Dictionary(uniqueKeysWithValues: entries.lazy.map { ($0.name, $0.value) })
  }

  /// Where `name` is, or where it would go (binary search).
  private func position(of name: String) -> (index: Int, found: Bool) {
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if entries[middle].name < name { low = middle + 1 } else { high = middle }
    }
    return (low, low < entries.count && entries[low].name == name)
  }

  /// The value of attribute `name`; setting nil removes it.
  subscript(name: String) -> AttributeValue? {
    get {
      let (index, found) = position(of: name)
      return found ? entries[index].value : nil
    }
    set {
      guard let value = newValue else {
        let (index, found) = position(of: name)
        if found { entries.remove(at: index) }
        return
      }
      // Values usually arrive in name order (stored states are sorted): check the end first.
      if entries.isEmpty || entries[entries.count - 1].name < name {
        entries.append(Entry(name: name, value: value))
        return
      }
      let (index, found) = position(of: name)
      if found {
        entries[index].value = value
        return
      }
      entries.insertByMovingDown(Entry(name: name, value: value), at: index)
    }
  }

  /// Calls `body` with each name and value where they lie, in name order: an iterator hands
  /// out copies, and a copy of a value retains its storage.
  func forEachEntry(_ body: (String, AttributeValue) throws -> Void) rethrows {
    for index in entries.indices { try body(entries[index].name, entries[index].value) }
  }

  /// The name of the attribute at `position` in name order (`0..<count`).
  func name(at position: Int) -> String { entries[position].name }

  /// The value at `position` in name order (`0..<count`), lent where it lies: read through
  /// the iterator or `forEachEntry`, it would be copied.
  subscript(valueAt position: Int) -> AttributeValue {
    _read { yield entries[position].value }
  }

  struct Iterator: IteratorProtocol {
    fileprivate var base: IndexingIterator<[Entry]>
    mutating func next() -> Element? { base.next().map { ($0.name, $0.value) } }
  }

  func makeIterator() -> Iterator { Iterator(base: entries.makeIterator()) }

  /// The attributes whose values differ between two lists, in name order: each name's value
  /// in `old` and in `new` (nil where absent). One merge walk over both sorted lists.
  static func differences(from old: AttributeList, to new: AttributeList) -> [(
    name: String, old: AttributeValue?, new: AttributeValue?
  )] {
    var result: [(name: String, old: AttributeValue?, new: AttributeValue?)] = []
    var oldIndex = 0
    var newIndex = 0
    let olds = old.entries
    let news = new.entries
    while oldIndex < olds.count || newIndex < news.count {
      if newIndex == news.count || (oldIndex < olds.count && olds[oldIndex].name < news[newIndex].name) {
        result.append((olds[oldIndex].name, olds[oldIndex].value, nil))
        oldIndex += 1
      } else if oldIndex == olds.count || news[newIndex].name < olds[oldIndex].name {
        result.append((news[newIndex].name, nil, news[newIndex].value))
        newIndex += 1
      } else {
        if olds[oldIndex].value != news[newIndex].value {
          result.append((news[newIndex].name, olds[oldIndex].value, news[newIndex].value))
        }
        oldIndex += 1
        newIndex += 1
      }
    }
    return result
  }
}
