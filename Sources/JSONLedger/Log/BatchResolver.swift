/// Resolves a staged batch against the current state into the object changes of the next
/// record: finds objects by identity, merges values, creates stubs, maintains both sides of
/// every link, prunes, and takes the before-image of everything it touches.
struct BatchResolver {
  let model: Model
  let source: any StateSource
  let strict: Bool

  /// The slot of every object touched so far. Slots are numbered in first-touch order (the
  /// order of the record's changes) and index the arrays below, so that the many reads and
  /// in-place updates of one object's state cost one hash lookup, not one each.
  private var slots = SlotTable()
  /// Object id by slot.
  private var ids: [UInt64] = []
  /// Working state by slot (nil: absent after the batch).
  private var states: [ObjectState?] = []
  /// The same objects as they were before the batch (nil: did not exist).
  private var before: [ObjectState?] = []
  /// After `finish`: the state after the batch of each change's object, in change order.
  private var afterStates: [ObjectState?] = []
  /// Identities created in this batch (not yet in the `keys` database), and those found in
  /// the `keys` database, so that an object named many times in a batch (a band referred to
  /// by each of its albums) is looked up once. An identity's id never changes, so the cache
  /// cannot go stale within the batch.
  private var identities = IdentityTable()
  /// The identity being looked up, encoded (reused: one allocation per batch, not per lookup).
  private var identityKey: [UInt8] = []
  /// By slot: whether the payload named the object (for the "unchanged" count).
  private var mentioned: [Bool] = []
  /// By slot: a counter of changes to the working state, and the fingerprint of the payload
  /// that made it (merged in this batch, or skipped as already applied) with the counter at
  /// that point and the relationships the payload names (`PayloadFingerprint.mask`). A
  /// change to an attribute, or to a link list the payload names, moves the counter; links
  /// another object adds or removes in a list the payload does not name do not. The change's
  /// fingerprint is kept only if the counter still matches: then applying that payload again
  /// changes nothing.
  private var versions: [UInt32] = []
  private var fingerprints: [SlotFingerprint] = []
  /// Objects whose payload matched their stored fingerprint and were skipped unread, with
  /// that fingerprint and mask (given to the slot if the object is touched later), indexed
  /// by id.
  private var skipped: [(id: UInt64, fingerprint: SlotFingerprint)] = []
  private var skippedIndex = SlotTable()
  /// The same, indexed by fingerprint: a payload met again (a nested object repeated under
  /// many parents) is skipped again without looking up its key.
  private var skippedByFingerprint = SlotTable()

  private struct SlotFingerprint {
    var fingerprint: UInt64 = 0
    var version: UInt32 = 0
    var mask: UInt64 = 0
  }
  private var nextID: UInt64
  private var problems = ProblemCollector()
  private var mapper: Mapper?
  /// Membership sets of long ordered link lists (built on first need, kept in step with the
  /// lists), so that adding to a list of 100,000 links is not a linear search each time.
  /// Unordered lists are sorted and searched by bisection instead.
  private var membership: [LinkList: Set<UInt64>] = [:]

  private struct LinkList: Hashable {
    var object: UInt64
    var relationship: UInt32
  }

  init(model: Model, source: any StateSource, strict: Bool) throws {
    self.model = model
    self.source = source
    self.strict = strict
    self.nextID = try source.nextObjectID()
  }

  /// The changes, in first-touch order, and the counts.
  mutating func resolve(_ batch: ChangeBatch) throws -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics) {
    // Growing these by doubling costs more than the work itself on large batches (page
    // faults of fresh memory): size them for the staged objects and a link partner each.
    let expected = batch.stagedObjectCount * 2
    slots.reserveCapacity(expected)
    ids.reserveCapacity(expected)
    states.reserveCapacity(expected)
    before.reserveCapacity(expected)
    mentioned.reserveCapacity(expected)
    versions.reserveCapacity(expected)
    fingerprints.reserveCapacity(expected)
    // One identity per staged object at most (a referenced key is usually staged too).
    identities.reserveCapacity(batch.stagedObjectCount)
    mapper = batch.mapper
    for step in batch.steps {
      switch step {
      case .collection(let entityName, let objects, let options, let path):
        try resolveCollection(entityName, objects, options, path: path)
      case .deletion(let entityName, let identity, _):
        guard let entity = model.resolved(entityName) else { continue }
        if let id = try lookup(root: entity.rootID, identity: identity), try exists(id) {
          try delete(id)
        }
      }
    }
    do { try problems.check() } catch { throw LedgerError.mapping(error) }
    return finish(ignoredKeys: batch.ignoredKeys.sorted())
  }

  /// The state after the batch of each change's object, in change order (after a resolve),
  /// handed over: the resolver keeps none, so the projector can move them out one by one.
  mutating func takeAfterStates() -> [ObjectState?] {
    defer { afterStates = [] }
    return afterStates
  }

  /// Gives the current state of objects the caller has already read, so that they are not
  /// read again. Must be called before any resolving.
  mutating func seed(_ currentStates: [(UInt64, ObjectState?)]) {
    for (id, state) in currentStates where slots[id] == nil { _ = addSlot(id, state: state, before: state) }
  }

  /// Changes that turn the current state of each given object into the given target state
  /// (nil: absent). Used by revert and rewind.
  mutating func resolveTargets(_ targets: [(UInt64, ObjectState?)]) throws -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics) {
    for (id, target) in targets {
      let slot = try slot(id)
      states[slot] = target
      versions[slot] &+= 1
    }
    return finish(ignoredKeys: [])
  }

  /// Builds the changes and `afterStates` (which lets the projector skip reading back what
  /// the resolver already knows). Consumes the working states: the last step of a resolve.
  private mutating func finish(ignoredKeys: [String]) -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics) {
    var statistics = ChangeRecord.Statistics()
    statistics.ignoredKeys = ignoredKeys
    // A skipped object touched later in the batch is counted with the others below.
    for (id, _) in skipped {
      if let slot = slots[id] { mentioned[slot] = true } else { statistics.unchanged += 1 }
    }
    var changes: [ObjectChange] = []
    changes.reserveCapacity(ids.count)
    afterStates = []
    afterStates.reserveCapacity(ids.count)
    for (slot, id) in ids.enumerated() {
      // Moved out, not copied: the working states are not read after this.
      let new = states[slot].take()
      guard var change = ObjectChange(objectID: id, before: before[slot].take(), after: new, model: model) else {
        if mentioned[slot], new != nil { statistics.unchanged += 1 }
        continue
      }
      if new != nil, fingerprints[slot].version == versions[slot] { change.payloadFingerprint = fingerprints[slot].fingerprint }
      afterStates.append(new)
      switch change.kind {
      case .created: statistics.created += 1
      case .updated: statistics.updated += 1
      case .deleted: statistics.deleted += 1
      }
      changes.append(change)
    }
    return (changes, statistics)
  }

  // MARK: - Working state

  /// The object's slot, loading its state from the store on first touch.
  private mutating func slot(_ id: UInt64) throws -> Int {
    if let slot = slots[id] { return slot }
    let state = try source.state(of: id)
    return addSlot(id, state: state, before: state)
  }

  private mutating func addSlot(_ id: UInt64, state: ObjectState?, before: ObjectState?) -> Int {
    let slot = ids.count
    slots.insert(id, slot: slot)
    mentioned.append(false)
    versions.append(0)
    // A skipped object's state is what its payload made it: the fingerprint still holds.
    if !skipped.isEmpty, let index = skippedIndex[id] {
      fingerprints.append(skipped[index].fingerprint)
    } else {
      fingerprints.append(SlotFingerprint())
    }
    ids.append(id)
    states.append(state)
    self.before.append(before)
    return slot
  }

  /// Marks an object as named by the payload.
  private mutating func mention(_ id: UInt64) throws {
    mentioned[try slot(id)] = true
  }

  private mutating func current(_ id: UInt64) throws -> ObjectState? { states[try slot(id)] }

  /// Reads part of a slot's state where it lies: an `inout` access borrows the element, where
  /// a plain read would first copy the whole state (four reference-counted fields).
  private mutating func inspect<Result>(_ slot: Int, _ body: (inout ObjectState?) -> Result) -> Result {
    body(&states[slot])
  }

  /// Whether the object exists in the working state.
  private mutating func exists(_ id: UInt64) throws -> Bool {
    // A pattern match reads the tag alone (here and in `update`); comparing with nil copied
    // the whole state, retaining each of its fields.
    inspect(try slot(id)) { if case .some = $0 { true } else { false } }
  }

  /// The concrete entity of an object in the working state (nil: absent).
  private mutating func concreteEntity(of id: UInt64) throws -> String? {
    inspect(try slot(id)) { $0?.entity }
  }

  /// One link list of an object in the working state (empty when it has none).
  private mutating func links(_ id: UInt64, _ relationshipID: UInt32) throws -> [UInt64] {
    inspect(try slot(id)) { $0?.links[relationshipID] ?? [] }
  }

  /// Changes an object's working state in place (no copy of its link lists).
  /// `relationshipID`: the change touches that link list alone.
  private mutating func update(_ id: UInt64, changingLinksOf relationshipID: UInt32? = nil, _ body: (inout ObjectState) -> Void) throws {
    let slot = try slot(id)
    guard case .some = states[slot] else { return }
    body(&states[slot]!)
    if let relationshipID, fingerprints[slot].mask & PayloadFingerprint.maskBit(relationshipID) == 0 { return }
    versions[slot] &+= 1
  }

  private mutating func lookup(root: UInt32, identity: [AttributeValue]) throws -> UInt64? {
    try lookupRegistration(root: root, identity: identity)?.id
  }

  /// The id of an identity and the payload fingerprint the store holds for it (the object
  /// may have changed in this batch since: then it has a slot).
  private mutating func lookupRegistration(root: UInt32, identity: [AttributeValue]) throws -> (id: UInt64, payloadFingerprint: UInt64)? {
    OrderedEncoding.encodeIdentity(root: root, identity, into: &identityKey)
    if let entry = identities.entry(forKey: identityKey) { return (entry.id, entry.payloadFingerprint) }
    guard let registration = try source.registration(encodedIdentity: identityKey) else { return nil }
    identities.set(registration.id, forKey: identityKey, isNew: false, payloadFingerprint: registration.payloadFingerprint)
    return registration
  }

  /// Creates an object (or brings back the deleted object `id`) with the given identity.
  /// `identityKey` must hold the identity's encoding, as `lookup` leaves it (a create always
  /// follows the lookup that found no live object).
  private mutating func create(_ entity: ResolvedEntity, identity: [AttributeValue], reuse id: UInt64?) throws -> UInt64 {
    let objectID: UInt64
    let slot: Int
    if let id {
      objectID = id
      slot = try self.slot(id)
    } else {
      objectID = nextID
      nextID += 1
      slot = addSlot(objectID, state: nil, before: nil)
    }
    var state = ObjectState(entity: entity.name, identity: identity)
    state.attributes = AttributeList(minimumCapacity: entity.attributes.count)
    for (name, value) in zip(entity.identity, identity) { state.attributes[name] = value }
    states[slot] = state
    versions[slot] &+= 1
    if !identity.isEmpty {
      assert(identityKey == { var key: [UInt8] = []; OrderedEncoding.encodeIdentity(root: entity.rootID, identity, into: &key); return key }())
      identities.set(objectID, forKey: identityKey, isNew: true)
    }
    return objectID
  }

  // MARK: - Upserts

  private mutating func resolveCollection(_ entityName: String, _ objects: [MappedObject], _ options: StagingOptions, path: String) throws {
    guard let entity = model.resolved(entityName) else { return }
    var parent: (id: UInt64, relationship: ResolvedRelationship)?
    if let scope = options.parent {
      guard let parentEntity = model.resolved(scope.entity) else {
        throw LedgerError.unknownEntity(scope.entity, known: model.entities.map(\.name))
      }
      guard let relationship = parentEntity.relationshipIndex[scope.relationship] else {
        throw LedgerError.invalidArgument("\(scope.entity) has no relationship \"\(scope.relationship)\"")
      }
      var report = Mapper.Report()
      let mapper = Mapper(model: model, transformers: ValueTransformers())
      let identity: [AttributeValue]?
      if case .object(let object) = scope.key, parentEntity.identity.count > 1 {
        identity = mapper.mapObject(object, entity: parentEntity, path: "", report: &report)?.identity
      } else {
        identity = mapper.identity(fromKey: scope.key, of: parentEntity, path: "parent", report: &report)
      }
      guard let identity, let id = try lookup(root: parentEntity.rootID, identity: identity), try exists(id) else {
        throw LedgerError.objectNotFound(entity: scope.entity, key: JSONWriter(options: []).string(from: scope.key))
      }
      parent = (id, relationship)
    }
    var payload: [UInt64] = []
    for object in objects {
      if let id = try upsert(object, operations: options.operations) {
        payload.append(id)
        if let parent { try link(parent.id, parent.relationship.id, id) }
      }
    }
    guard options.prunes else { return }
    let keep = Set(payload)
    let candidates: [UInt64]
    if let parent {
      candidates = try links(parent.id, parent.relationship.id)
    } else {
      let family = Set(entity.family)
      var ids = try source.objectIDs(root: entity.rootName)
      ids += identities.newIDs(root: entity.rootID)
      candidates = try ids.filter { id in
        guard let name = try concreteEntity(of: id) else { return false }
        return family.contains(name)
      }
    }
    for id in candidates where !keep.contains(id) {
      if try exists(id) { try delete(id) }
    }
  }

  /// Creates or merges one mapped object; returns its id (nil when the operations skip it).
  private mutating func upsert(_ object: borrowing MappedObject, operations: Operations) throws -> UInt64? {
    // Only a payload that updates can be known to have been applied already.
    guard let identity = object.identity, operations.contains(.update), let fingerprint = object.fingerprint.value else {
      return try mergeRemapped(object, operations: operations)
    }
    if let index = skippedByFingerprint[fingerprint], slots[skipped[index].id] == nil {
      try upsertNestedObjects(of: object)
      return skipped[index].id
    }
    // Untouched in this batch, and left as it is by this very payload: applying it again
    // would change nothing, here or on the other side of its links. Its nested objects are
    // payloads of their own.
    let registered = try lookupRegistration(root: object.entity.rootID, identity: identity)
    if let stored = registered, stored.payloadFingerprint == fingerprint, slots[stored.id] == nil {
      if skippedIndex[stored.id] == nil {
        skippedIndex.insert(stored.id, slot: skipped.count)
        skippedByFingerprint.insert(fingerprint, slot: skipped.count)
        skipped.append((stored.id, SlotFingerprint(fingerprint: fingerprint, mask: object.fingerprint.mask)))
      }
      try upsertNestedObjects(of: object)
      return stored.id
    }
    guard let id = try mergeRemapped(object, operations: operations, known: .some(registered?.id)), let slot = slots[id] else { return nil }
    fingerprints[slot] = SlotFingerprint(fingerprint: fingerprint, version: versions[slot], mask: object.fingerprint.mask)
    return id
  }

  /// `known`: the id `lookup` gave for the object's identity, when the caller has it (`.some(nil)`: none).
  private mutating func mergeRemapped(_ object: borrowing MappedObject, operations: Operations, known: UInt64?? = nil) throws -> UInt64? {
    // The object is passed on, not copied into a variable: a copy retains each of its
    // fields, and this runs for every object of a payload.
    if let remapped = try remappedToStoredSubentity(object) { return try merge(remapped, operations: operations) }
    return try merge(object, operations: operations, known: known)
  }

  /// Upserts the objects nested in a skipped object's relationships, as merging it would.
  private mutating func upsertNestedObjects(of object: borrowing MappedObject) throws {
    for (_, value) in object.relationships {
      switch value {
      case .clear, .toOne(.key): continue
      case .toOne(.object(let nested)): _ = try upsert(nested, operations: .upsert)
      case .toMany(let references):
        for case .object(let nested) in references { _ = try upsert(nested, operations: .upsert) }
      }
    }
  }

  /// A payload typed as an ancestor updates an existing object of a sub-entity with the
  /// sub-entity's own keys (Groot: no `type` needed to update a ConcreteA via Abstract): the
  /// object mapped again as that sub-entity, or nil when no such object is stored.
  private mutating func remappedToStoredSubentity(_ object: borrowing MappedObject) throws -> MappedObject? {
    let entity = object.entity
    guard let identity = object.identity, let source = object.source, let mapper,
      let known = try lookup(root: entity.rootID, identity: identity), let stored = try concreteEntity(of: known),
      stored != entity.name, entity.family.contains(stored), let concrete = model.resolved(stored)
    else { return nil }
    var report = Mapper.Report()
    var remapped = mapper.mapObject(source, entity: concrete, path: object.path, report: &report)
    remapped?.entity = concrete
    for problem in report.problems.problems { problems.add(problem.entity, problem.path, nil, problem.reason) }
    return remapped
  }

  private mutating func merge(_ object: borrowing MappedObject, operations: Operations, known knownByCaller: UInt64?? = nil) throws -> UInt64? {
    let entity = object.entity
    let id: UInt64
    var isNew = false
    if let identity = object.identity {
      // The caller's lookup left `identityKey` holding this identity, as `create` needs.
      let known = try knownByCaller ?? lookup(root: entity.rootID, identity: identity)
      if let known, try exists(known) {
        id = known
        try mention(id)
        guard operations.contains(.update) else { return id }
        // A sub-entity named in the JSON refines an object stored as its ancestor.
        if let stored = try concreteEntity(of: id), stored != entity.name, model.resolved(stored)?.family.contains(entity.name) == true {
          try update(id) { $0.entity = entity.name }
        }
      } else {
        guard operations.contains(.insert) else { return nil }
        if entity.declaration.isAbstract {
          problems.add(entity.name, object.path, nil, "\(entity.name) is abstract: a new object must name a sub-entity\(entity.subentityKey.map { " in \"\($0)\"" } ?? "")")
          return nil
        }
        id = try create(entity, identity: identity, reuse: known)
        isNew = true
        try mention(id)
      }
    } else {
      guard operations.contains(.insert) else { return nil }
      id = try create(entity, identity: [], reuse: nil)
      isNew = true
      try mention(id)
    }
    // The closure captures the attribute list alone: capturing `object` would copy all of it.
    let attributes = object.attributes
    try update(id) { state in
      for (name, value) in attributes {
        if entity.identity.contains(name) { continue }
        // Writing only what differs keeps an unchanged object's attributes shared with its
        // before-image, which makes comparing the two at the end one pointer check. A new
        // object has no before-image: one hash lookup per value instead of two.
        if isNew {
          state.attributes[name] = value
        } else if state.attributes[name] != value {
          state.attributes[name] = value
        }
      }
    }
    for (relationship, value) in object.relationships {
      switch value {
      case .clear:
        try setLinks(id, relationship, [])
      case .toOne(let reference):
        if let target = try resolve(reference, destination: relationship.declaration.destination) {
          try setLinks(id, relationship, [target])
        }
      case .toMany(let references):
        var targets: [UInt64] = []
        for reference in references {
          if let target = try resolve(reference, destination: relationship.declaration.destination) { targets.append(target) }
        }
        try setLinks(id, relationship, targets)
      }
    }
    return id
  }

  private mutating func resolve(_ reference: ObjectReference, destination: String) throws -> UInt64? {
    switch reference {
    case .object(let nested):
      return try upsert(nested, operations: .upsert)
    case .key(let entity, let identity, let path):
      let entityName = entity.name
      let known = try lookup(root: entity.rootID, identity: identity)
      if let known, try exists(known) { return known }
      if strict {
        let key = identity.map(\.keyText).joined(separator: ", ")
        problems.add(entityName, path, nil, "no \(entityName) with key \(key) exists in the batch or the store (strict references)")
        return nil
      }
      if entity.declaration.isAbstract {
        problems.add(entityName, path, nil, "cannot create a stub of the abstract entity \(entityName)")
        return nil
      }
      // A known id here belongs to a deleted object: its identity comes back.
      return try create(entity, identity: identity, reuse: known)
    }
  }

  // MARK: - Links, both sides

  private struct LinkSpec {
    var isToMany: Bool
    var isOrdered: Bool
    var counterpart: UInt32
    var deletesOrphans: Bool
  }

  private func spec(_ relationshipID: UInt32) -> LinkSpec {
    if relationshipID & ResolvedRelationship.hiddenReverseBit != 0 {
      return LinkSpec(isToMany: true, isOrdered: false, counterpart: relationshipID & ~ResolvedRelationship.hiddenReverseBit, deletesOrphans: false)
    }
    guard let relationship = model.relationshipsByID[relationshipID] else {
      return LinkSpec(isToMany: true, isOrdered: false, counterpart: relationshipID, deletesOrphans: false)
    }
    return LinkSpec(
      isToMany: relationship.isToMany, isOrdered: relationship.isOrdered, counterpart: relationship.reverseID,
      deletesOrphans: relationship.declaration.deletesOrphans)
  }

  /// Whether `target` is in an object's link list, and the list's first element.
  private mutating func linkInfo(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64, ordered: Bool) throws -> (Bool, UInt64?) {
    let slot = try slot(id)
    guard let list = inspect(slot, { $0?.links[relationshipID] }) else { return (false, nil) }
    return (listContains(id, relationshipID, target, list, ordered: ordered), list.first)
  }

  /// Whether `target` is in an object's link list.
  private mutating func listContains(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64, _ list: [UInt64], ordered: Bool) -> Bool {
    guard list.count > 32 else { return list.contains(target) }
    if !ordered {
      let position = Self.insertionPoint(of: target, in: list)
      return position < list.count && list[position] == target
    }
    let key = LinkList(object: id, relationship: relationshipID)
    if let set = membership[key] { return set.contains(target) }
    let set = Set(list)
    membership[key] = set
    return set.contains(target)
  }

  /// Adds `target` at the end, or at its place when the list is kept sorted (new ids are the
  /// largest, so that is usually the end too).
  private static func add(_ target: UInt64, to list: inout [UInt64], keepingSorted: Bool) {
    if !keepingSorted || (list.last ?? 0) < target {
      list.append(target)
    } else {
      list.insert(target, at: insertionPoint(of: target, in: list))
    }
  }

  /// The first position in a sorted list whose element is not less than `target`.
  private static func insertionPoint(of target: UInt64, in list: [UInt64]) -> Int {
    var low = 0, high = list.count
    while low < high {
      let middle = (low + high) / 2
      if list[middle] < target { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Adds `target` to one side only; a to-one that pointed elsewhere is unlinked first. An
  /// unordered list stays sorted (new ids are the largest, so this is usually an append).
  private mutating func attach(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    let spec = spec(relationshipID)
    // Only plain values leave this call: holding the list itself here would make the append
    // below copy it (copy-on-write), turning long lists quadratic.
    let (present, first) = try linkInfo(id, relationshipID, target, ordered: spec.isOrdered || !spec.isToMany)
    if present { return }
    if !spec.isToMany, let old = first { try unlink(id, relationshipID, old) }
    try update(id, changingLinksOf: relationshipID) { state in
      // The list is changed where it is stored: no copy.
      state.links.modify(relationshipID) { Self.add(target, to: &$0, keepingSorted: spec.isToMany && !spec.isOrdered) }
    }
    if !membership.isEmpty { membership[LinkList(object: id, relationship: relationshipID)]?.insert(target) }
  }

  private mutating func link(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    try attach(id, relationshipID, target)
    try attach(target, spec(relationshipID).counterpart, id)
  }

  private mutating func unlink(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    try detach(id, relationshipID, target)
    try detach(target, spec(relationshipID).counterpart, id)
  }

  /// Removes `target` from one side only.
  private mutating func detach(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    try update(id, changingLinksOf: relationshipID) { state in
      guard state.links[relationshipID] != nil else { return }
      let emptied = state.links.modify(relationshipID) { list in
        list.removeAll { $0 == target }
        return list.isEmpty
      }
      if emptied { state.links[relationshipID] = nil }
    }
    if !membership.isEmpty { membership[LinkList(object: id, relationship: relationshipID)]?.remove(target) }
  }

  /// Replaces a relationship's targets: unlinks (or deletes, for `deleteOrphans`) what is
  /// no longer listed, links what is new, and keeps the given order for an ordered one.
  private mutating func setLinks(_ id: UInt64, _ relationship: ResolvedRelationship, _ wanted: [UInt64]) throws {
    // Without duplicates, first occurrence kept. Most lists are short: a hash set only pays
    // for itself on long ones.
    var targets: [UInt64] = []
    var seen: Set<UInt64> = []
    if wanted.count <= 1 {
      targets = wanted
    } else if wanted.count <= 16 {
      for target in wanted where !targets.contains(target) { targets.append(target) }
    } else {
      for target in wanted where seen.insert(target).inserted { targets.append(target) }
    }
    let isWanted = { (target: UInt64) in wanted.count <= 16 ? targets.contains(target) : seen.contains(target) }
    if !relationship.isToMany, targets.count > 1 { targets = [targets[targets.count - 1]] }
    let existing = try links(id, relationship.id)
    // Already linked as wanted (both sides are always kept in step): nothing to do. The
    // common case of a re-import.
    if existing == (relationship.isOrdered || !relationship.isToMany ? targets : targets.sorted()) { return }
    guard relationship.isToMany else {
      for old in existing where !isWanted(old) {
        try unlink(id, relationship.id, old)
        if relationship.declaration.deletesOrphans, try exists(old) { try delete(old) }
      }
      for target in targets { try link(id, relationship.id, target) }
      return
    }
    // A to-many: the other sides one by one, this side's list in one step.
    let counterpart = relationship.reverseID
    let had = existing.count <= 16 ? [] : Set(existing)
    let isExisting = { (target: UInt64) in existing.count <= 16 ? existing.contains(target) : had.contains(target) }
    var orphans: [UInt64] = []
    for old in existing where !isWanted(old) {
      try detach(old, counterpart, id)
      if relationship.declaration.deletesOrphans { orphans.append(old) }
    }
    for target in targets where !isExisting(target) { try attach(target, counterpart, id) }
    try update(id) { state in
      state.links[relationship.id] = targets.isEmpty ? nil : relationship.isOrdered ? targets : targets.sorted()
    }
    if !membership.isEmpty { membership[LinkList(object: id, relationship: relationship.id)] = nil }
    for orphan in orphans where try exists(orphan) { try delete(orphan) }
  }

  /// Deletes an object after unlinking it from everything.
  private mutating func delete(_ id: UInt64) throws {
    guard let state = try current(id) else { return }
    for (relationshipID, targets) in state.links.sorted(by: { $0.key < $1.key }) {
      for target in targets { try unlink(id, relationshipID, target) }
    }
    let slot = try slot(id)
    states[slot] = nil
    versions[slot] &+= 1
  }
}
