import JSONLedgerJSON
import JSONLedgerSupport

extension Exporter {
  /// The keys of related objects written so far by one exporter, each read once.
  final class WrittenKeys {
    // Unchecked exclusivity: only `keep` and `writeKey` touch these, one access at a time, on
    // the thread of the export's read transaction.
    @exclusivity(unchecked) var numbers = KeyNumbers()
    @exclusivity(unchecked) var strings = JSONOutput.EncodedStrings()
    /// The keys that are no single string, read through the snapshots' cache.
    var keys: TargetKeys

    /// What the kept keys may take before they are let go and kept afresh: their text (24 MB
    /// at most) and 8 bytes each for where it ends (2M keys, 16 MB), beside `KeyNumbers`' 4
    /// bytes per object of the store (32 MB at most). An export of a million objects keeps
    /// them all, in about 30 MB; a larger one stays under 72 MB.
    static let maximumCount = 1 << 21
    static let maximumBytes = 24 << 20

    init(store: ProjectionStore) { keys = TargetKeys(store: store, caches: true) }

    /// The number of the kept key of object `id`, or nil.
    func number(of id: UInt64) -> Int? { numbers[id] }

    /// Keeps the key `text` of object `id`, encoded by `writer`, and returns its number.
    func keep(_ id: UInt64, _ text: UTF8Span, writer: JSONWriter) -> Int {
      if strings.count >= Self.maximumCount || strings.byteCount >= Self.maximumBytes {
        numbers.removeAll()
        strings.removeAll(keepingCapacity: true)
      }
      let number = strings.append(text, writer: writer)
      numbers.insert(id, number: number)
      return number
    }
  }
}

/// Numbers by object id, in an array indexed by the id's sequence (`ObjectIDs`): 4 bytes an
/// object of the store, where a hash table takes 32 at half load, and one read that needs no
/// hashing. Sequences are store-wide (no two ids share one), so one array serves every
/// entity. An id whose sequence
/// is past `denseLimit` (a store of over 8M objects) goes to a `SlotTable`, so that the array
/// never passes 32 MB.
struct KeyNumbers {
  static let denseLimit: UInt64 = 1 << 23

  /// By sequence: the number plus one (0: none), so that growing fills with "none".
  private var dense: [UInt32] = []
  private var far = SlotTable()
  private var farCount = 0
  /// How many ids have a number.
  private(set) var count = 0

  init() {}

  /// The number of `id`, or nil.
  subscript(id: UInt64) -> Int? {
    let sequence = ObjectIDs.sequence(of: id)
    guard sequence < Self.denseLimit else { return far[id] }
    let index = Int(sequence)
    guard index < dense.count, dense[index] != 0 else { return nil }
    return Int(dense[index] - 1)
  }

  /// Gives `id`, which has none yet, the number `number` (below 2^32 - 1).
  mutating func insert(_ id: UInt64, number: Int) {
    let sequence = ObjectIDs.sequence(of: id)
    guard sequence < Self.denseLimit else {
      far.insert(id, slot: number)
      count += 1
      farCount += 1
      return
    }
    let index = Int(sequence)
    if index >= dense.count {
      // Doubling, so that ids in rising order cost amortised O(1).
      let grown = min(Int(Self.denseLimit), max(index + 1, dense.count * 2, 1024))
      dense.append(contentsOf: repeatElement(0, count: grown - dense.count))
    }
    dense[index] = UInt32(truncatingIfNeeded: number + 1)
    count += 1
  }

  /// Forgets every number, keeping the array's room.
  mutating func removeAll() {
    dense.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    far = SlotTable()
    farCount = 0
    count = 0
  }

  #if JSONLEDGER_INTERNAL_CHECKS
    /// Checks that `count` is the number of ids that have a number, and that the array never
    /// passed its limit.
    func _checkInvariants() -> Bool {
      dense.count <= Int(Self.denseLimit) && count == dense.lazy.filter { $0 != 0 }.count + farCount
    }
  #endif
}
