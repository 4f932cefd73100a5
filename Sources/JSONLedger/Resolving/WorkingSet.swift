import JSONLedgerSupport

/// The objects a batch touches: for each, its state before the batch and its working state,
/// which the resolver, the link graph and revert change in place.
///
/// Objects get slots in first-touch order (the order of the record's changes); the slot
/// indexes the arrays below, so that the many reads and in-place updates of one object cost
/// one lookup, not one each. An object the store holds is found by hashing its id; one the
/// batch creates, by its sequence number (`newSlots`).
struct WorkingSet {
  let model: Model
  let source: any StateSource
  /// Slots of objects the store holds (or of ids it does not know), by id.
  private var slots = SlotTable()
  /// Room asked for (`reserveCapacity`), taken by `slots` when the first object the store
  /// holds is touched: a batch of new objects makes no table.
  private var slotsWanted = 0
  /// Slots of the objects the batch creates, by sequence number from `firstNewSequence`.
  /// New ids are handed out one after another, each taking its slot as it is made, so they
  /// need 4 bytes each here and no hashing (`findSlot` checks the id the slot holds).
  private var newSlots: [UInt32] = []
  private var firstNewSequence: UInt64 = 0
  /// Object id by slot.
  private(set) var ids: [UInt64] = []
  /// Working state by slot (nil: absent after the batch, or packed).
  private var states: [ObjectState?] = []
  /// By slot, up to the last slot when states were last packed: the state of an object the
  /// batch creates, packed once a part of the batch went by without touching it
  /// (`packColdStates`); `states` holds nil there meanwhile, and a touch unpacks it.
  private var packed: [PackedState?] = []
  /// By slot: the part of the batch that last touched the object (`packColdStates` counts).
  private var touched: [UInt32] = []
  /// By slot, up to the last slot when states were last packed: how many times the state
  /// was packed. One packed `n` times is packed again only once `2^n` parts went by without
  /// touching it (`packColdStates`).
  private var timesPacked: [UInt8] = []
  private var part: UInt32 = 0
  /// The slots whose working state is that of an object the batch creates, unpacked since
  /// the last `packColdStates`: each once, from its creation or its unpacking. The next
  /// `packColdStates` packs each, or files it in `waitingCreations`. Kept from the first
  /// `packColdStates` on: a batch resolved in one part lists nothing.
  private var unpackedCreations: [Int] = []
  /// Listed slots that were not yet due to be packed when last looked at, by the part from
  /// which they may be (the part they were last touched in, plus their wait): each is looked
  /// at again then, not in every part. A large batch's hubs (a band its albums link to every
  /// few parts) wait here for as long as they are touched, and reading each one's state in
  /// every part went to memory once per hub and part.
  private var waitingCreations: [UInt32: [Int]] = [:]
  /// The slots of `waitingCreations` due in the next part, most of them (a state created in
  /// this part waits one): an array, with no hashing.
  private var dueInNextPart: [Int] = []
  private var listsCreations = false
  private var packingBuffer = BinaryWriter(capacity: 256)
  /// The same objects as they were before the batch (nil: did not exist), by slot, up to the
  /// last slot of an object that existed: a batch of new objects holds none (`before(_:)`).
  private var beforeStates: [ObjectState?] = []
  /// By slot: whether the payload named the object (for the "unchanged" count).
  private var mentioned: [Bool] = []
  /// By slot: a counter of changes to the working state. A change to an attribute, or to a
  /// link list the object's payload names, moves it; links another object adds or removes
  /// in a list the payload does not name do not.
  private var versions: [UInt32] = []
  /// By slot: the payload that made the working state, kept in the record only if the
  /// counter still matches (then applying that payload again changes nothing).
  private var marks: [PayloadMark] = []
  /// Objects skipped as unchanged; one touched later takes its payload's mark.
  var unchanged = UnchangedPayloads()
  /// After `finish`: the state after the batch of each change's object, in change order
  /// (nil for a created one, see `Projector.apply`).
  private var afterStates: [ObjectState?] = []

  init(model: Model, source: any StateSource) {
    self.model = model
    self.source = source
  }

  /// Room for `count` objects without growing.
  mutating func reserveCapacity(_ count: Int) {
    slotsWanted = max(slotsWanted, count)
    newSlots.reserveCapacity(count)
    ids.reserveCapacity(count)
    states.reserveCapacity(count)
    touched.reserveCapacity(count)
    mentioned.reserveCapacity(count)
    versions.reserveCapacity(count)
    marks.reserveCapacity(count)
  }

  /// The slot of an object already touched, or nil.
  func existingSlot(_ id: UInt64) -> Int? { findSlot(id) }

  private func findSlot(_ id: UInt64) -> Int? {
    // An id the store holds has a lower sequence number: the offset wraps past the count.
    let offset = ObjectIDs.sequence(of: id) &- firstNewSequence
    if offset < UInt64(newSlots.count) {
      let slot = Int(newSlots[Int(offset)])
      if ids[slot] == id { return slot }
    }
    return slots[id]
  }

  /// The object's slot, loading its state from the store on first touch.
  mutating func slot(_ id: UInt64) throws -> Int {
    if let slot = findSlot(id) { return slot }
    let state = try source.state(of: id)
    return addSlot(id, state: state, before: state)
  }

  /// A slot for an object the store does not have (a new id).
  mutating func addNewSlot(_ id: UInt64) -> Int {
    let sequence = ObjectIDs.sequence(of: id)
    if newSlots.isEmpty { firstNewSequence = sequence }
    guard sequence == firstNewSequence &+ UInt64(newSlots.count), let slot = UInt32(exactly: ids.count) else {
      return addSlot(id, state: nil, before: nil)
    }
    newSlots.append(slot)
    return addSlot(id, state: nil, before: nil, hashed: false)
  }

  private mutating func addSlot(
    _ id: UInt64, state: consuming ObjectState?, before: consuming ObjectState?, hashed: Bool = true
  ) -> Int {
    let slot = ids.count
    if hashed {
      if slotsWanted > 0 {
        slots.reserveCapacity(slotsWanted)
        slotsWanted = 0
      }
      slots.insert(id, slot: slot)
    }
    mentioned.append(false)
    versions.append(0)
    // A skipped object's state is what its payload made it: the mark still holds.
    marks.append(unchanged.mark(ofSkipped: id) ?? PayloadMark())
    ids.append(id)
    states.append(consume state)
    touched.append(part)
    if case .some = before {
      // The first object that existed: room for every slot reserved, the new ones before it nil.
      if beforeStates.isEmpty { beforeStates.reserveCapacity(ids.capacity) }
      beforeStates.append(contentsOf: repeatElement(nil, count: slot - beforeStates.count))
      beforeStates.append(consume before)
    }
    return slot
  }

  /// Whether the object in `slot` existed before the batch (read from the tag alone: a
  /// comparison with nil would copy the state).
  private func existedBefore(_ slot: Int) -> Bool {
    guard slot < beforeStates.count, case .some = beforeStates[slot] else { return false }
    return true
  }

  /// The state before the batch of the object in `slot` (nil: it did not exist).
  func before(_ slot: Int) -> ObjectState? { slot < beforeStates.count ? beforeStates[slot] : nil }

  /// Gives the current state of objects the caller has already read, so that they are not
  /// read again. Must come before any other touch.
  mutating func seed(_ currentStates: [(UInt64, ObjectState?)]) {
    for (id, state) in currentStates where findSlot(id) == nil { _ = addSlot(id, state: state, before: state) }
  }

  /// Marks an object as named by the payload.
  mutating func mention(_ id: UInt64) throws {
    mentioned[try slot(id)] = true
  }

  /// Reads part of a slot's state where it lies: an `inout` access borrows the element, where
  /// a plain read would copy the whole state.
  @inline(__always)
  mutating func inspect<Result>(_ slot: Int, _ body: (inout ObjectState?) -> Result) -> Result {
    touch(slot)
    return body(&states[slot])
  }

  /// Reads a slot's state, a packed one decoded for the call and left packed.
  func peek<Result>(_ slot: Int, _ body: (ObjectState?) -> Result) -> Result {
    if let state = packedState(slot) { return body(state.state) }
    return body(states[slot])
  }

  /// The working state of an object (a copy).
  mutating func state(of id: UInt64) throws -> ObjectState? {
    let slot = try slot(id)
    touch(slot)
    return states[slot]
  }

  /// Whether the object exists in the working state.
  mutating func exists(_ id: UInt64) throws -> Bool {
    let slot = try slot(id)
    if case .some = packedState(slot) { return true }
    // A pattern match reads the tag alone; comparing with nil copies the whole state.
    return inspect(slot) { if case .some = $0 { true } else { false } }
  }

  /// The concrete entity of an object in the working state (nil: absent).
  mutating func concreteEntity(of id: UInt64) throws -> String? {
    let slot = try slot(id)
    if let state = packedState(slot) { return state.entity.name }
    return inspect(slot) { $0?.entity }
  }

  /// The packed state in `slot`, if it holds one (none before the first pack).
  private func packedState(_ slot: Int) -> PackedState? {
    guard listsCreations, slot < packed.count else { return nil }
    return packed[slot]
  }

  /// Notes that the part of the batch being resolved touched `slot`, and unpacks its state if
  /// it was packed.
  @inline(__always)
  private mutating func touch(_ slot: Int) {
    // Until the first pack every object is in part 0, where `addSlot` put it.
    guard listsCreations else { return }
    touched[slot] = part
    guard slot < packed.count, let state = packed[slot].take() else { return }
    states[slot] = state.state
    unpackedCreations.append(slot)
  }

  /// How many objects a batch holds before it packs any (a test of packing sets it lower).
  var objectsBeforePacking = 1 << 14

  /// Packs the working states of the objects the batch creates that the part just resolved
  /// did not touch, and starts the next part: a large batch read in parts holds the states
  /// it created as their bytes (`PackedState`), and those of the last two parts whole.
  /// Packing starts once the batch holds `objectsBeforePacking` objects.
  ///
  /// A state unpacked again waits longer each time before it is packed again: twice as many
  /// parts as the time before. An object the parts keep coming back to (a band each part's
  /// albums link to, a few parts apart) stays whole after a few rounds, instead of being
  /// decoded and encoded again for every part that touches it; one touched once more is
  /// packed again two parts later.
  mutating func packColdStates() {
    defer { part &+= 1 }
    if !listsCreations {
      // A batch of fewer objects holds them whole: they take a few megabytes, and packing
      // costs a tenth of the batch's instructions (RESULTS.md).
      guard ids.count >= objectsBeforePacking else { return }
      listsCreations = true
      // Every object counts as touched in this part: the next one packs those it leaves.
      for slot in ids.indices {
        touched[slot] = part
        if before(slot) == nil, case .some = states[slot] { unpackedCreations.append(slot) }
      }
      return
    }
    // Those listed since the last part, and those whose wait ends in this one.
    var candidates: [Int] = []
    swap(&candidates, &unpackedCreations)
    candidates += dueInNextPart
    dueInNextPart.removeAll(keepingCapacity: true)
    if let due = waitingCreations.removeValue(forKey: part) { candidates += due }
    guard !candidates.isEmpty else { return }
    if packed.count < ids.count { packed.append(contentsOf: repeatElement(nil, count: ids.count - packed.count)) }
    if timesPacked.count < ids.count {
      timesPacked.append(contentsOf: repeatElement(0, count: ids.count - timesPacked.count))
    }
    for slot in candidates {
      // Deleted since it was created: no longer listed (a new state lists it again).
      guard case .some = states[slot] else { continue }
      let wait: UInt32 = 1 << min(timesPacked[slot], 16)
      guard part &- touched[slot] >= wait else {
        let due = touched[slot] &+ wait
        if due == part &+ 1 { dueInNextPart.append(slot) } else { waitingCreations[due, default: []].append(slot) }
        continue
      }
      // Checked where it lies, then moved into its packing: a copy would retain each of its
      // lists, met again here for the first time in many parts.
      guard let entity = Self.packingEntity(of: &states[slot], model: model), let state = states[slot].take() else {
        // Not one to pack (`PackedState.entity(packing:model:)`): kept whole, and no longer listed.
        continue
      }
      packed[slot] = PackedState(state, entity: entity, scratch: &packingBuffer)
      timesPacked[slot] = min(timesPacked[slot] + 1, 16)
    }
  }

  /// `PackedState.entity(packing:model:)` of a state where it lies (an `inout` access borrows
  /// it; a read would copy it).
  private static func packingEntity(of state: inout ObjectState?, model: Model) -> ResolvedEntity? {
    guard case .some = state else { return nil }
    return PackedState.entity(packing: state!, model: model)
  }

  /// One link list of an object in the working state (empty when it has none).
  mutating func links(_ id: UInt64, _ relationshipID: UInt32) throws -> LinkTargets {
    inspect(try slot(id)) { $0?.links[relationshipID] ?? [] }
  }

  /// Changes an existing object's working state in place (no copy of its link lists).
  /// `relationshipID`: the change touches that link list alone.
  @inline(__always)
  mutating func update(_ id: UInt64, changingLinksOf relationshipID: UInt32? = nil, _ body: (inout ObjectState) -> Void)
    throws
  {
    let slot = try slot(id)
    touch(slot)
    guard case .some = states[slot] else { return }
    body(&states[slot]!)
    if let relationshipID, marks[slot].mask & PayloadFingerprint.maskBit(relationshipID) == 0 { return }
    versions[slot] &+= 1
  }

  /// Sets an object's working state outright (nil: absent after the batch).
  mutating func set(_ id: UInt64, to state: consuming ObjectState?) throws {
    let slot = try slot(id)
    touch(slot)
    // Listed once: a state that was absent (or packed, unlisted by then) was not listed.
    if listsCreations, case .none = states[slot], case .some = state, before(slot) == nil {
      unpackedCreations.append(slot)
    }
    states[slot] = consume state
    versions[slot] &+= 1
  }

  /// Records that the payload with `mark` made the object's working state as it is now.
  mutating func setPayload(_ id: UInt64, fingerprint: UInt64, mask: UInt64) {
    guard let slot = findSlot(id) else { return }
    marks[slot] = PayloadMark(fingerprint: fingerprint, version: versions[slot], mask: mask)
  }

  /// Whether the payload with `fingerprint` made the object's working state as it is now:
  /// its mark, and nothing the payload names changed since, so that merging the payload
  /// again would change nothing (what the record's payload fingerprint also stands for).
  func isMade(byPayload fingerprint: UInt64, _ id: UInt64) -> Bool {
    guard fingerprint != 0, let slot = findSlot(id) else { return false }
    return marks[slot].fingerprint == fingerprint && marks[slot].version == versions[slot]
  }

  /// Moves the state before the batch out of `slot` (for `finish`).
  private mutating func takeBefore(_ slot: Int) -> ObjectState? {
    slot < beforeStates.count ? beforeStates[slot].take() : nil
  }

  /// Builds the changes and the after-states (which let the projector skip reading back what
  /// is known here). Consumes the working states and lets the slot table go: the last step
  /// of a resolve, after which only `takeAfterStates` is called.
  mutating func finish(ignoredKeys: [String]) -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics) {
    var statistics = ChangeRecord.Statistics()
    statistics.ignoredKeys = ignoredKeys
    // A skipped object touched later in the batch is counted with the others below.
    for (id, _) in unchanged.skipped {
      if let slot = findSlot(id) { mentioned[slot] = true } else { statistics.unchanged += 1 }
    }
    // Nothing is looked up by id from here on: the table goes before the changes are built,
    // when a large batch's memory peaks, and with the resolver's identity cache (gone by
    // now) is handed back: the changes' array does not fit in the gaps they leave.
    slots = SlotTable()
    newSlots = []
    touched = []
    timesPacked = []
    unpackedCreations = []
    waitingCreations = [:]
    dueInNextPart = []
    packingBuffer = BinaryWriter(capacity: 0)
    if ids.count >= Ledger.largeBatch { FreedMemory.returnToSystem() }
    var changes: [ObjectChange] = []
    changes.reserveCapacity(ids.count)
    // No states after while every change so far is a creation: a fresh import holds no
    // array of nils (see below).
    afterStates = []
    for (slot, id) in ids.enumerated() {
      // A packed state is an object the batch created, and the change holds it as it is.
      if slot < packed.count, let state = packed[slot].take() {
        var change = ObjectChange(objectID: id, created: state)
        if marks[slot].version == versions[slot] { change.payloadFingerprint = marks[slot].fingerprint }
        if !afterStates.isEmpty { afterStates.append(nil) }
        statistics.created += 1
        changes.append(consume change)
        continue
      }
      // An object the batch created: its state moves into its change.
      if !existedBefore(slot), let created = states[slot].take() {
        var change = ObjectChange(objectID: id, creating: created, model: model)
        if marks[slot].version == versions[slot] { change.payloadFingerprint = marks[slot].fingerprint }
        if !afterStates.isEmpty { afterStates.append(nil) }
        statistics.created += 1
        changes.append(consume change)
        continue
      }
      // Moved out, not copied: the working states are not read after this.
      let new = states[slot].take()
      guard var change = ObjectChange(objectID: id, before: takeBefore(slot), after: new, model: model) else {
        if mentioned[slot], case .some = new { statistics.unchanged += 1 }
        continue
      }
      if case .some = new, marks[slot].version == versions[slot] { change.payloadFingerprint = marks[slot].fingerprint }
      // A created object's state is its change applied to nothing: the projector works it
      // out, and it is not held twice meanwhile.
      if change.kind != .created {
        if afterStates.isEmpty {
          afterStates.reserveCapacity(ids.count)
          afterStates.append(contentsOf: repeatElement(nil, count: changes.count))
        }
        afterStates.append(consume new)
      } else if !afterStates.isEmpty {
        afterStates.append(nil)
      }
      switch change.kind {
      case .created: statistics.created += 1
      case .updated: statistics.updated += 1
      case .deleted: statistics.deleted += 1
      }
      changes.append(consume change)
    }
    packed = []
    return (changes, statistics)
  }

  /// The state after the batch of each change's object, in change order (after `finish`),
  /// handed over so the projector can move them out one by one; nil when every change is a
  /// creation, whose state the projector works out from the change alone.
  mutating func takeAfterStates() -> [ObjectState?]? {
    defer { afterStates = [] }
    return afterStates.isEmpty ? nil : afterStates
  }
}
