extension Array {
  /// Sets an entry of an array kept sorted by key, at the position a search for its key gave
  /// (`found`: an entry with that key is there): replaces or inserts `entry`, or removes the
  /// entry there when it is nil. `LinkLists` sets its lists through it. `AttributeList`'s
  /// setter, on the import's hot path, shares only the insertion below: wrapping each value in
  /// an optional entry to come through here costs it measurably (RESULTS.md, 2026-11-29).
  @inlinable @inline(__always)
  public mutating func setSortedEntry(_ entry: consuming Element?, at position: (index: Int, found: Bool)) {
    switch (position.found, entry) {
    case (true, let entry?): self[position.index] = entry
    case (true, nil): remove(at: position.index)
    // Entries mostly arrive in key order (decoded states, mapped objects): an append.
    case (false, let entry?) where position.index == count: append(entry)
    case (false, let entry?): insertByMovingDown(entry, at: position.index)
    case (false, nil): break
    }
  }

  /// Inserts `entry` at `index` by appending it and swapping it down into place: a sorted list
  /// holds a handful of entries, and `insert` takes the general replace-a-range path, several
  /// times the cost.
  @inlinable @inline(__always)
  public mutating func insertByMovingDown(_ entry: consuming Element, at index: Int) {
    append(entry)
    var slot = count - 1
    while slot > index {
      swapAt(slot, slot - 1)
      slot -= 1
    }
  }
}
