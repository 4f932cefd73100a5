/// What a batch did to one relationship of one object, as object ids.
///
/// An unordered relationship's change is the targets the batch linked and unlinked, so a
/// record grows with what changed, not with the list: an object with 100,000 links that
/// gains one costs one id. An ordered relationship's order is part of its value, so its
/// change also keeps the whole list before and after (`order`).
public struct LinkChange: Sendable, Equatable {
  /// The whole list of an ordered relationship before and after a batch.
  public struct Order: Sendable, Equatable {
    /// The linked object ids before the batch, in order.
    public var old: [UInt64]
    /// The linked object ids after the batch, in order.
    public var new: [UInt64]
  }

  /// The relationship id (a hidden reverse link has the high bit set).
  public var relationshipID: UInt32
  /// Targets the batch linked: ascending for an unordered relationship, in list order for
  /// an ordered one.
  public var added: [UInt64]
  /// Targets the batch unlinked, in the same order as `added`.
  public var removed: [UInt64]
  /// For an ordered relationship, the whole list before and after; nil for an unordered one.
  public var order: Order?

  /// A change of an unordered relationship; `added` and `removed` must be ascending and
  /// disjoint.
  init(relationshipID: UInt32, added: [UInt64], removed: [UInt64]) {
    self.relationshipID = relationshipID
    self.added = added
    self.removed = removed
    self.order = nil
  }

  /// The change from one list to another. Unordered lists are kept sorted by object id.
  init(relationshipID: UInt32, from old: [UInt64], to new: [UInt64], isOrdered: Bool) {
    self.relationshipID = relationshipID
    (removed, added) = Self.difference(from: old, to: new)
    order = isOrdered ? Order(old: old, new: new) : nil
  }

  /// The list after this change, given the list before it. Set semantics for an unordered
  /// list: a target added that is already there, or removed that is not, changes nothing
  /// (a forced revert applies an old change to a list that moved on).
  func applied(to list: [UInt64]) -> [UInt64] {
    var result = list
    apply(to: &result)
    return result
  }

  /// Applies this change to `list` (an array, or a state's `LinkTargets`) in place:
  /// appending to a list that only grows (new ids are the largest) costs what was added, not
  /// the list.
  func apply<List: RangeReplaceableCollection & BidirectionalCollection>(to list: inout List)
  where List.Element == UInt64 {
    if let order {
      list = List(order.new)
      return
    }
    if removed.isEmpty, (list.last ?? 0) < (added.first ?? .max) {
      list.append(contentsOf: added)
      return
    }
    list = List(merged(into: list))
  }

  /// An unordered list with this change merged in: both are sorted, so one walk drops what
  /// was removed and inserts what was added.
  private func merged(into list: some Collection<UInt64>) -> [UInt64] {
    var result: [UInt64] = []
    result.reserveCapacity(list.count + added.count)
    var removedIndex = 0
    var addedIndex = 0
    for target in list {
      while addedIndex < added.count, added[addedIndex] < target {
        result.append(added[addedIndex])
        addedIndex += 1
      }
      if addedIndex < added.count, added[addedIndex] == target { addedIndex += 1 }
      while removedIndex < removed.count, removed[removedIndex] < target { removedIndex += 1 }
      if removedIndex < removed.count, removed[removedIndex] == target { continue }
      result.append(target)
    }
    result += added[addedIndex...]
    return result
  }

  /// The change that undoes this one.
  var inverted: LinkChange {
    var inverse = self
    inverse.added = removed
    inverse.removed = added
    inverse.order = order.map { Order(old: $0.new, new: $0.old) }
    return inverse
  }

  /// Whether a later change of the same object touches what this one did: the same link of
  /// an unordered relationship (linked or unlinked by both), or an ordered list at all (its
  /// order is one value).
  func conflicts(with later: LinkChange) -> Bool {
    guard later.relationshipID == relationshipID else { return false }
    if order != nil || later.order != nil { return true }
    let touched = Set(added + removed)
    return later.added.contains(where: touched.contains) || later.removed.contains(where: touched.contains)
  }

  /// Targets only in `old` and targets only in `new`. Unordered lists are kept sorted, so a
  /// merge walk does it without hashing; unsorted input (an ordered list) falls back to sets.
  static func difference(from old: [UInt64], to new: [UInt64]) -> (removed: [UInt64], added: [UInt64]) {
    if old.isEmpty { return ([], new) }
    if new.isEmpty { return (old, []) }
    guard isStrictlyIncreasing(old), isStrictlyIncreasing(new) else {
      let kept = Set(new)
      let had = Set(old)
      return (old.filter { !kept.contains($0) }, new.filter { !had.contains($0) })
    }
    var removed: [UInt64] = []
    var added: [UInt64] = []
    // Walked through spans: a band gaining an album compares lists of hundreds of ids, most
    // equal, and an array's subscript costs more per id than the comparison.
    let (olds, news) = (old.span, new.span)
    var oldIndex = 0
    var newIndex = 0
    while oldIndex < olds.count, newIndex < news.count {
      let (oldID, newID) = (olds[oldIndex], news[newIndex])
      if oldID == newID {
        oldIndex += 1
        newIndex += 1
      } else if oldID < newID {
        removed.append(oldID)
        oldIndex += 1
      } else {
        added.append(newID)
        newIndex += 1
      }
    }
    removed += old[oldIndex...]
    added += new[newIndex...]
    return (removed, added)
  }

  static func isStrictlyIncreasing(_ list: [UInt64]) -> Bool {
    guard var previous = list.first else { return true }
    for id in list.dropFirst() {
      if id <= previous { return false }
      previous = id
    }
    return true
  }
}
