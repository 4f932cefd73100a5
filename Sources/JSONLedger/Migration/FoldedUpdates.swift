import LMDB

/// The undo images that a migration removing attributes leaves out: those of updates that
/// changed only removed attributes. Under the next model such an update is no change, so a
/// replay folds it away (`RecordTranslation.translate`): it writes no undo image for it, and
/// the object's entry in `keys` keeps the payload fingerprint of the change before. A rewrite
/// finds them by comparing each undo image with the state after its batch (the object's next
/// image, or its current state), both before and after the rewrite.
///
/// An undo image may keep a long list as the change from the next state's list
/// (`StoredLinkList`), with a chain counted on from the image before it. A list's change cannot
/// be compared with a whole list: where an update that changed removed attributes has one in
/// its image or in the state after, the migration replays the log (`NeedsReplay`). Otherwise
/// the image left out keeps every list whole, and so does the next: its chains, counted on from
/// zero, came out longer than its lists, and counted on from the image before (as the replay
/// counts them) they come out no shorter.
struct FoldedUpdates {
  /// One undo image as the rewrite walks them, in key order (object, then batch).
  private struct Image {
    let objectID: UInt64
    let batch: UInt64
    let key: [UInt8]
    let original: [UInt8]
    /// Nil when the rewrite left its bytes as they were.
    let rewritten: [UInt8]?
    let sections: StateCoding.Sections?
    /// The batch of the nearest image before it, of the same object, that stays.
    let keptBatchBefore: UInt64?

    var bytes: [UInt8] { rewritten ?? original }
  }

  /// An object whose last change is folded away: its entry in `keys` takes the payload
  /// fingerprint of the change of `batch` (the one before, which the replay registers last).
  struct Registration {
    let objectID: UInt64
    let batch: UInt64
    /// Its current state, rewritten: its entity and identity give the entry's key.
    let state: [UInt8]
  }

  /// The states of the rewrite, by entity number: which entities lost attributes.
  private let rewrites: [Int: StateCoding.AttributeRewrite]
  /// The image seen last, waiting for the state after its batch.
  private var pending: Image?
  /// The undo images to remove, by key, with their bytes as rewritten.
  private(set) var folded: [(key: [UInt8], bytes: [UInt8])] = []
  /// The entries of `keys` to register again.
  private(set) var registrations: [Registration] = []

  init(rewrites: [Int: StateCoding.AttributeRewrite]) { self.rewrites = rewrites }

  /// Takes the next undo image of the walk: `original` as stored, `rewritten` as the rewrite
  /// wrote it (nil when it left it). `currentState` gives an object's current state as stored
  /// and as rewritten, nil when it has none.
  mutating func see(
    key: BorrowedBytes, original: BorrowedBytes, rewritten: [UInt8]?,
    currentState: (UInt64) throws -> (original: [UInt8], rewritten: [UInt8])?
  ) throws {
    let objectID = key.bigEndianUInt64(at: 0)
    let copy = original.copy(0..<original.count)
    var keptBatchBefore: UInt64?
    if let pending {
      if pending.objectID == objectID {
        let isFolded = try decide(pending, after: (copy, rewritten ?? copy))
        keptBatchBefore = isFolded ? pending.keptBatchBefore : pending.batch
      } else {
        try decideLast(pending, currentState: currentState)
      }
    }
    pending = Image(
      objectID: objectID, batch: key.bigEndianUInt64(at: 8), key: key.copy(0..<key.count), original: copy,
      rewritten: rewritten, sections: try StateCoding.sections(of: rewritten ?? copy), keptBatchBefore: keptBatchBefore)
  }

  /// Ends the walk: the last image is compared with its object's current state.
  mutating func finish(currentState: (UInt64) throws -> (original: [UInt8], rewritten: [UInt8])?) throws {
    guard let pending else { return }
    try decideLast(pending, currentState: currentState)
    self.pending = nil
  }

  /// `decide` for an object's last image, whose state after is the current one.
  private mutating func decideLast(
    _ image: Image, currentState: (UInt64) throws -> (original: [UInt8], rewritten: [UInt8])?
  ) throws {
    // Only an image that may be folded needs the current state read.
    guard let sections = image.sections, rewrites[sections.entityNumber]?.removesAttributes == true,
      let after = try currentState(image.objectID), try decide(image, after: after)
    else { return }
    // The change before: the nearest image kept, or the one that began the object's life.
    registrations.append(
      Registration(objectID: image.objectID, batch: image.keptBatchBefore ?? sections.since, state: after.rewritten))
  }

  /// Whether `image`'s batch only changed removed attributes of its object, `after` being the
  /// object's state after that batch (nil: the batch deleted it); such an image is folded.
  private mutating func decide(_ image: Image, after: (original: [UInt8], rewritten: [UInt8])?) throws -> Bool {
    // An empty image is a creation's; an empty state after is a deletion's.
    guard let sections = image.sections, rewrites[sections.entityNumber]?.removesAttributes == true,
      let after, let afterSections = try StateCoding.sections(of: after.rewritten)
    else { return false }
    if !sections.keepsListChanges && !afterSections.keepsListChanges {
      // Equal once rewritten and different before: only removed attributes changed. Equal
      // before too is an update that changed nothing a state holds, which the replay keeps.
      guard image.bytes == after.rewritten, image.original != after.original else { return false }
    } else {
      guard Self.sameOutsideLists(image.bytes, sections, after.rewritten, afterSections) else { return false }
      guard
        let originalSections = try StateCoding.sections(of: image.original),
        let afterOriginalSections = try StateCoding.sections(of: after.original),
        !Self.sameOutsideLists(image.original, originalSections, after.original, afterOriginalSections)
      else { return false }
      // Removed attributes changed; whether links changed too only the replay tells.
      throw NeedsReplay()
    }
    folded.append((image.key, image.bytes))
    return true
  }

  /// Whether two states hold the same entity, identity, `since` and attributes.
  private static func sameOutsideLists(
    _ left: [UInt8], _ leftSections: StateCoding.Sections, _ right: [UInt8], _ rightSections: StateCoding.Sections
  ) -> Bool {
    left[..<leftSections.links] == right[..<rightSections.links]
      && left[leftSections.attributes...] == right[rightSections.attributes...]
  }
}

/// A rewrite cannot give the projections a replay would build: the migration replays the log.
struct NeedsReplay: Error {}
