import JSONLedgerSupport

/// The payload that made an object's working state what it is, as far as the unchanged-
/// payload skip needs it (see `PayloadFingerprint`).
struct PayloadMark {
  /// The payload's fingerprint (0: none).
  var fingerprint: UInt64 = 0
  /// The working set's change counter of the object when the payload was merged: the mark
  /// holds while the counter has not moved since.
  var version: UInt32 = 0
  /// The relationships the payload names (`PayloadFingerprint.maskBit`).
  var mask: UInt64 = 0
}

/// The objects a batch skipped because their payload matched the fingerprint the store keeps
/// for them: applying it again would change nothing, so they are not read.
struct UnchangedPayloads {
  /// Skipped objects in skip order, with the mark their payload gives them (handed to the
  /// object's slot if the batch touches it later).
  private(set) var skipped: [(id: UInt64, mark: PayloadMark)] = []
  private var byID = SlotTable()
  /// The same, by fingerprint: a payload met again (a nested object repeated under many
  /// parents) is skipped again without looking up its key.
  private var byFingerprint = SlotTable()

  var isEmpty: Bool { skipped.isEmpty }

  /// The mark of a skipped object, or nil when it was not skipped.
  func mark(ofSkipped id: UInt64) -> PayloadMark? {
    guard !skipped.isEmpty, let index = byID[id] else { return nil }
    return skipped[index].mark
  }

  /// The object skipped with a payload of this fingerprint, if any.
  func skippedObject(withFingerprint fingerprint: UInt64) -> UInt64? {
    guard !skipped.isEmpty, let index = byFingerprint[fingerprint] else { return nil }
    return skipped[index].id
  }

  /// Makes room for `count` skipped objects (a batch staged from text the store holds skips
  /// most of its objects: growing the tables one doubling at a time rebuilt them often).
  mutating func reserveCapacity(_ count: Int) {
    skipped.reserveCapacity(count)
    byID.reserveCapacity(count)
    byFingerprint.reserveCapacity(count)
  }

  /// Records an object as skipped (once: a later payload with the same mark changes nothing).
  mutating func skip(_ id: UInt64, mark: PayloadMark) {
    guard byID[id] == nil else { return }
    byID.insert(id, slot: skipped.count)
    byFingerprint.insert(mark.fingerprint, slot: skipped.count)
    skipped.append((id, mark))
  }
}
