/// Links kept two-sided: the one owner of the rule that every link an object holds has its
/// counterpart on the other object (the inverse relationship, or the hidden reverse list of
/// a relationship without one). The resolver, revert and rewind change links only here.
///
/// It works on the batch's `WorkingSet`, which it owns while links change.
struct LinkGraph {
  var objects: WorkingSet
  /// Membership sets of long ordered link lists (built on first need, kept in step with the
  /// lists), so that adding to a list of 100,000 links is not a linear search each time.
  /// Unordered lists are sorted and searched by bisection instead.
  private var membership: [LinkList: Set<UInt64>] = [:]

  private struct LinkList: Hashable {
    var object: UInt64
    var relationship: UInt32
  }

  /// How a relationship id's lists behave.
  private struct Shape {
    var isToMany: Bool
    var isOrdered: Bool
    var counterpart: UInt32
    var deletesOrphans: Bool
  }

  init(objects: WorkingSet) { self.objects = objects }

  private var model: Model { objects.model }

  private func shape(_ relationshipID: UInt32) -> Shape {
    let counterpart = model.counterpart(of: relationshipID)
    guard let relationship = model.relationshipsByID[relationshipID] else {
      // A hidden reverse list: to-many, sorted.
      return Shape(isToMany: true, isOrdered: false, counterpart: counterpart, deletesOrphans: false)
    }
    return Shape(
      isToMany: relationship.isToMany, isOrdered: relationship.isOrdered, counterpart: counterpart,
      deletesOrphans: relationship.declaration.deletesOrphans)
  }

  // MARK: - Both sides

  /// Links `id` to `target` through `relationshipID`, and `target` back to `id`.
  mutating func link(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    try attach(id, relationshipID, target)
    try attach(target, shape(relationshipID).counterpart, id)
  }

  /// Removes the link between `id` and `target`, on both sides.
  mutating func unlink(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    try detach(id, relationshipID, target)
    try detach(target, shape(relationshipID).counterpart, id)
  }

  /// Replaces a relationship's targets: unlinks (or deletes, for `deleteOrphans`) what is
  /// no longer listed, links what is new, and keeps the given order for an ordered one.
  mutating func setLinks(_ id: UInt64, _ relationship: ResolvedRelationship, _ wanted: [UInt64]) throws {
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
    guard relationship.isToMany else { return try setLink(id, relationship, to: targets.last) }
    let existing = try objects.links(id, relationship.id)
    // Already linked as wanted (both sides are always kept in step): nothing to do.
    if existing.elementsEqual(relationship.isOrdered ? targets : targets.sorted()) { return }
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
    let list = relationship.isOrdered ? targets : targets.sorted()
    try objects.update(id) { state in state.links[relationship.id] = list.isEmpty ? nil : LinkTargets(list) }
    if !membership.isEmpty { membership[LinkList(object: id, relationship: relationship.id)] = nil }
    for orphan in orphans where try objects.exists(orphan) { try delete(orphan) }
  }

  /// Sets a to-one relationship of `id` to `target` (nil: clears it), unlinking what it held.
  mutating func setLink(_ id: UInt64, _ relationship: ResolvedRelationship, to target: UInt64?) throws {
    let existing = try objects.links(id, relationship.id)
    // Already linked as wanted (both sides are always kept in step): nothing to do.
    if existing.count == (target == nil ? 0 : 1), existing.first == target { return }
    for old in existing where old != target {
      try unlink(id, relationship.id, old)
      if relationship.declaration.deletesOrphans, try objects.exists(old) { try delete(old) }
    }
    if let target { try link(id, relationship.id, target) }
  }

  /// Deletes an object after unlinking it from everything.
  mutating func delete(_ id: UInt64) throws {
    guard let state = try objects.state(of: id) else { return }
    for (relationshipID, targets) in state.links {
      for target in targets { try unlink(id, relationshipID, target) }
    }
    try objects.set(id, to: nil)
  }

  /// Sets objects to target states (nil: absent), as revert and rewind do. Targets read from
  /// one point of history are consistent with each other already; others (a forced revert,
  /// whose targets mix the reverted batch's before-values with later changes) have their
  /// links repaired. `kept`: the link lists (relationship ids by object) that come out as
  /// they are now, whatever the targets say (see `repair`).
  mutating func restore(
    _ targets: [(UInt64, ObjectState?)], repairingLinks: Bool, keeping kept: [UInt64: Set<UInt32>] = [:]
  ) throws {
    for (id, target) in targets { try objects.set(id, to: target) }
    if repairingLinks { try repair(targets.map(\.0), keeping: kept) }
    #if JSONLEDGER_INTERNAL_CHECKS
      try _checkInvariants()
    #endif
  }

  /// Makes target states that were set outright (`WorkingSet.set`) consistent with each
  /// other and with the objects left as they are, taking `ids` in ascending order: a link a
  /// target drops is dropped on the other side too, a link to an object that will not exist
  /// is dropped, and every link a target keeps gets its counterpart (a to-one counterpart
  /// that pointed elsewhere is moved, and that old partner unlinked). A link an earlier
  /// target adds to a later one stays.
  ///
  /// A list in `kept` (relationship ids by object: what a revert that keeps later work
  /// leaves as it is) is never changed: where a target disagrees with it, the target gives
  /// way (`yield`).
  mutating func repair(_ ids: [UInt64], keeping kept: [UInt64: Set<UInt32>] = [:]) throws {
    for id in ids.sorted() {
      let slot = try objects.slot(id)
      var target = objects.inspect(slot) { $0 }
      if !kept.isEmpty, var state = target {
        try yield(id, &state, before: objects.before(slot)?.links ?? [:], to: kept)
        let links = state.links
        try objects.update(id) { $0.links = links }
        target = state
      }
      for (relationshipID, list) in objects.before(slot)?.links ?? [:] {
        let staying = Set(target?.links[relationshipID] ?? [])
        let counterpart = shape(relationshipID).counterpart
        for partner in list where !staying.contains(partner) { try detach(partner, counterpart, id) }
      }
      guard let target else { continue }
      for (relationshipID, list) in target.links {
        var kept: LinkTargets = []
        let counterpart = shape(relationshipID).counterpart
        for partner in list where try objects.exists(partner) {
          kept.append(partner)
          try attach(partner, counterpart, id)
        }
        try objects.update(id) { $0.links[relationshipID] = kept.isEmpty ? nil : kept }
      }
    }
    membership = [:]
  }

  /// Makes the target state of `id` agree with the kept lists of its partners, before its
  /// links are repaired, so that the repair leaves those lists as they are. A partner whose
  /// kept list holds `id` stays linked (it comes back to a list the target dropped it from,
  /// or replaces a to-one's target); a partner whose kept list does not hold `id` is dropped;
  /// and so is a partner whose to-one points to an object whose list is kept, since linking
  /// it here would take it from that list.
  private mutating func yield(
    _ id: UInt64, _ state: inout ObjectState, before: LinkLists, to kept: [UInt64: Set<UInt32>]
  ) throws {
    func isKept(_ object: UInt64, _ relationshipID: UInt32) -> Bool { kept[object]?.contains(relationshipID) ?? false }
    var relationshipIDs = Set(before.keys)
    relationshipIDs.formUnion(state.links.keys)
    for relationshipID in relationshipIDs.sorted() {
      let shape = shape(relationshipID)
      let counterpartIsToMany = self.shape(shape.counterpart).isToMany
      var list = state.links[relationshipID] ?? []
      let original = list
      for partner in before[relationshipID] ?? [] where isKept(partner, shape.counterpart) && !list.contains(partner) {
        if !shape.isToMany {
          list = [partner]
        } else if shape.isOrdered {
          list.append(partner)
        } else {
          list.insert(partner, at: Self.insertionPoint(of: partner, in: list))
        }
      }
      // A partner's list is read only when it decides: kept, or a to-one.
      list = try list.filter { partner in
        if isKept(partner, shape.counterpart) { return try objects.links(partner, shape.counterpart).contains(id) }
        guard !counterpartIsToMany, let other = try objects.links(partner, shape.counterpart).first else { return true }
        return other == id || !isKept(other, relationshipID)
      }
      if list != original { state.links[relationshipID] = list.isEmpty ? nil : list }
    }
  }

  // MARK: - One side

  /// Whether `target` is in an object's link list, and the list's first element.
  private mutating func linkInfo(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64, ordered: Bool) throws -> (
    Bool, UInt64?
  ) {
    let slot = try objects.slot(id)
    guard let list = objects.inspect(slot, { $0?.links[relationshipID] }) else { return (false, nil) }
    return (listContains(id, relationshipID, target, list, ordered: ordered), list.first)
  }

  /// Whether `target` is in an object's link list.
  private mutating func listContains(
    _ id: UInt64, _ relationshipID: UInt32, _ target: UInt64, _ list: LinkTargets, ordered: Bool
  ) -> Bool {
    // A list that is not ordered is sorted by id, and a new object's id is the largest yet:
    // a hub gaining new objects is not searched.
    if !ordered, let last = list.last, target > last { return false }
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
  private static func add(_ target: UInt64, to list: inout LinkTargets, keepingSorted: Bool) {
    if !keepingSorted || (list.last ?? 0) < target {
      list.append(target)
    } else {
      list.insert(target, at: insertionPoint(of: target, in: list))
    }
  }

  /// The first position in a sorted list whose element is not less than `target`.
  private static func insertionPoint(of target: UInt64, in list: LinkTargets) -> Int {
    var low = 0
    var high = list.count
    while low < high {
      let middle = (low + high) / 2
      if list[middle] < target { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Adds `target` to one side only; a to-one that pointed elsewhere is unlinked first. An
  /// unordered list stays sorted.
  private mutating func attach(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    let shape = shape(relationshipID)
    // Only plain values leave this call: holding the list here would make the append below
    // copy it (copy-on-write).
    let (present, first) = try linkInfo(id, relationshipID, target, ordered: shape.isOrdered || !shape.isToMany)
    if present { return }
    if !shape.isToMany, let old = first { try unlink(id, relationshipID, old) }
    try objects.update(id, changingLinksOf: relationshipID) { state in
      state.links.modify(relationshipID) {
        Self.add(target, to: &$0, keepingSorted: shape.isToMany && !shape.isOrdered)
      }
    }
    if !membership.isEmpty { membership[LinkList(object: id, relationship: relationshipID)]?.insert(target) }
  }

  /// Removes `target` from one side only.
  private mutating func detach(_ id: UInt64, _ relationshipID: UInt32, _ target: UInt64) throws {
    try objects.update(id, changingLinksOf: relationshipID) { state in
      guard state.links[relationshipID] != nil else { return }
      let emptied = state.links.modify(relationshipID) { list in
        list.removeAll { $0 == target }
        return list.isEmpty
      }
      if emptied { state.links[relationshipID] = nil }
    }
    if !membership.isEmpty { membership[LinkList(object: id, relationship: relationshipID)]?.remove(target) }
  }

  // MARK: - Invariants

  /// Checks that every link a touched object holds now or held before the batch is held on
  /// both sides or on neither; that an unordered list is sorted without duplicates; and that
  /// a to-one holds one target at most. A partner outside the working set is read from the
  /// store when the link to it changed (an unchanged link to an unchanged object was checked
  /// when it was made).
  func _checkInvariants() throws {
    // Long lists are searched through a set, built once per list.
    var longLists: [LinkList: Set<UInt64>] = [:]
    func holds(_ state: ObjectState?, _ owner: UInt64, _ relationshipID: UInt32, _ target: UInt64) -> Bool {
      guard let list = state?.links[relationshipID] else { return false }
      guard list.count > 32 else { return list.contains(target) }
      let key = LinkList(object: owner, relationship: relationshipID)
      if let set = longLists[key] { return set.contains(target) }
      let set = Set(list)
      longLists[key] = set
      return set.contains(target)
    }
    for (slot, id) in objects.ids.enumerated() {
      let now = objects.peek(slot) { $0 }
      let before = objects.before(slot)
      var relationshipIDs = Set(now?.links.keys ?? [])
      relationshipIDs.formUnion(before?.links.keys ?? [])
      for relationshipID in relationshipIDs {
        let shape = shape(relationshipID)
        let list = now?.links[relationshipID] ?? []
        precondition(shape.isToMany || list.count <= 1, "a to-one of object \(id) holds \(list.count) targets")
        if shape.isToMany && !shape.isOrdered {
          precondition(zip(list, list.dropFirst()).allSatisfy { $0 < $1 }, "an unordered list of \(id) is not sorted")
        }
        let held = Set(list)
        let heldBefore = Set(before?.links[relationshipID] ?? [])
        for partner in held.union(heldBefore) {
          let other: ObjectState?
          if let partnerSlot = objects.existingSlot(partner) {
            other = objects.peek(partnerSlot) { $0 }
          } else if held.contains(partner) != heldBefore.contains(partner) {
            other = try objects.source.state(of: partner)
          } else {
            continue
          }
          let heldBack = holds(other, partner, shape.counterpart, id)
          precondition(
            held.contains(partner) == heldBack,
            "link \(id) → \(partner) (relationship \(relationshipID)) is held on one side only")
        }
      }
    }
  }
}
