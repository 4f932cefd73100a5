import LMDB

/// Folds one change record into the projections. A pure function of the record and the
/// projections before it, so replaying the log into empty projections rebuilds them byte
/// for byte.
struct Projector {
  let transaction: Transaction
  let layout: StoreLayout
  let model: Model

  /// Folds `record` in. `knownStates` may give the state of each changed object after the
  /// record, in the order of `record.changes` (the resolver's, on a live apply); it must equal
  /// what folding computes, and lets the projector skip reading the object back. Replay
  /// passes none.
  func apply(_ record: ChangeRecord, knownStates: [ObjectState?]? = nil) throws {
    precondition(knownStates == nil || knownStates?.count == record.changes.count, "known states must match the changes")
    let store = ProjectionStore(transaction: transaction, layout: layout, model: model)
    var nextObjectID = try store.nextObjectID()
    for (index, change) in record.changes.enumerated() {
      let id = change.objectID
      let after: ObjectState?
      let needsHeader: Bool
      if let knownStates {
        let known = knownStates[index]
        after = known
        if change.kind == .created || known == nil {
          needsHeader = change.kind == .created
        } else {
          needsHeader = try store.header(of: id)?.entity != known?.entity
        }
      } else {
        let before = try store.state(of: id)
        if change.kind == .deleted {
          after = nil
        } else {
          var state = before ?? ObjectState(entity: change.entity, identity: change.identity)
          state.entity = change.entity
          state.identity = change.identity
          for attribute in change.attributes { state.attributes[attribute.name] = attribute.new }
          for link in change.links { state.links[link.relationshipID] = link.new.isEmpty ? nil : link.new }
          after = state
        }
        needsHeader = before == nil || before?.entity != after?.entity
      }
      try write(change, after: after, needsHeader: needsHeader, batchID: record.batchID)
      nextObjectID = max(nextObjectID, id + 1)
    }
    try transaction.put(StoreKeys.bigEndian(record.batchID), forKey: MetaKey.head, in: layout.meta)
    try transaction.put(StoreKeys.bigEndian(nextObjectID), forKey: MetaKey.nextObjectID, in: layout.meta)
    if let key = record.metadata.idempotencyKey {
      try transaction.put(StoreKeys.bigEndian(record.batchID), forKey: Array(key.utf8.prefix(400)), in: layout.idempotency)
    }
  }

  /// Writes one object's entries: header and identity (when new, or its entity changed),
  /// attributes, the links the change rewrote, and its history entry.
  private func write(_ change: ObjectChange, after: ObjectState?, needsHeader: Bool, batchID: UInt64) throws {
    let id = change.objectID
    let idKey = StoreKeys.object(id)
    let historyEntry: [UInt8]
    if let after {
      if needsHeader {
        try transaction.put(ObjectStateCoding.encodeHeader(entity: after.entity, identity: after.identity), forKey: idKey, in: layout.objects)
        try registerIdentity(of: after, id: id)
      }
      let attributes = ObjectStateCoding.encodeAttributes(after.attributes)
      try transaction.put(attributes, forKey: idKey, in: layout.views)
      historyEntry = ObjectStateCoding.encodeState(after, encodedAttributes: attributes)
    } else {
      try transaction.delete(idKey, in: layout.views)
      historyEntry = []
    }
    for link in change.links { try rewriteLinks(id, link) }
    try updateIndexes(change)
    try transaction.put(historyEntry, forKey: StoreKeys.history(id, batchID), in: layout.history)
  }

  /// Keeps the `indexes` entries of attributes the model marks `indexed` in step with the
  /// change's old → new values.
  private func updateIndexes(_ change: ObjectChange) throws {
    guard let entity = model.resolved(change.entity), entity.hasIndexedAttributes, let root = model.resolved(entity.rootName) else { return }
    for attribute in change.attributes where entity.attributeIndex[attribute.name]?.isIndexed == true {
      let id = StoreKeys.object(change.objectID)
      if let old = attribute.old {
        try transaction.delete(StoreKeys.index(root: root.id, attribute: attribute.name, old) + id, in: layout.indexes)
      }
      if let new = attribute.new {
        try transaction.put([], forKey: StoreKeys.index(root: root.id, attribute: attribute.name, new) + id, in: layout.indexes)
      }
    }
  }

  /// `keys` entry of an object: its identity under its root entity; an insert-only object is
  /// listed under its root with a 0xFE marker and its id, so listings find it too.
  private func registerIdentity(of state: ObjectState, id: UInt64) throws {
    guard let entity = model.resolved(state.entity) else { return }
    if state.identity.isEmpty {
      try transaction.put(StoreKeys.bigEndian(id), forKey: StoreKeys.bigEndian(entity.rootID) + [0xFE] + StoreKeys.bigEndian(id), in: layout.keys)
      return
    }
    let (key, full) = StoreKeys.identity(root: entity.rootID, state.identity)
    try transaction.put(StoreKeys.bigEndian(id) + (key == full ? [] : full), forKey: key, in: layout.keys)
  }

  /// Replaces the `rels` entries of one relationship of one object. An ordered list is keyed
  /// by position, any other by target id.
  private func rewriteLinks(_ id: UInt64, _ link: LinkChange) throws {
    let ordered = model.relationshipsByID[link.relationshipID]?.isOrdered ?? false
    // One key buffer and one value buffer for every put: object id (8) + relationship id (4)
    // + position (4) or target id (8).
    var key = StoreKeys.links(id, link.relationshipID) + Array(repeating: 0, count: ordered ? 4 : 8)
    var value = [UInt8](repeating: 0, count: 8)
    if ordered {
      for position in link.old.indices {
        key.replaceSubrange(12..<16, with: StoreKeys.bigEndian(UInt32(position)))
        try transaction.delete(key, in: layout.rels)
      }
      for (position, target) in link.new.enumerated() {
        key.replaceSubrange(12..<16, with: StoreKeys.bigEndian(UInt32(position)))
        StoreKeys.setBigEndian(target, in: &value, at: 0)
        try transaction.put(value, forKey: key, in: layout.rels)
      }
      return
    }
    let (removed, added) = Self.difference(from: link.old, to: link.new)
    for target in removed {
      StoreKeys.setBigEndian(target, in: &key, at: 12)
      try transaction.delete(key, in: layout.rels)
    }
    for target in added {
      StoreKeys.setBigEndian(target, in: &key, at: 12)
      StoreKeys.setBigEndian(target, in: &value, at: 0)
      try transaction.put(value, forKey: key, in: layout.rels)
    }
  }

  /// Targets only in `old` and targets only in `new`. Unordered lists are kept sorted, so a
  /// merge walk does it without hashing; unsorted input (never written by this library)
  /// falls back to sets.
  static func difference(from old: [UInt64], to new: [UInt64]) -> (removed: [UInt64], added: [UInt64]) {
    if old.isEmpty { return ([], new) }
    if new.isEmpty { return (old, []) }
    guard isStrictlyIncreasing(old), isStrictlyIncreasing(new) else {
      let kept = Set(new), had = Set(old)
      return (old.filter { !kept.contains($0) }, new.filter { !had.contains($0) })
    }
    var removed: [UInt64] = [], added: [UInt64] = []
    var oldIndex = 0, newIndex = 0
    while oldIndex < old.count, newIndex < new.count {
      if old[oldIndex] == new[newIndex] {
        oldIndex += 1
        newIndex += 1
      } else if old[oldIndex] < new[newIndex] {
        removed.append(old[oldIndex])
        oldIndex += 1
      } else {
        added.append(new[newIndex])
        newIndex += 1
      }
    }
    removed += old[oldIndex...]
    added += new[newIndex...]
    return (removed, added)
  }

  private static func isStrictlyIncreasing(_ list: [UInt64]) -> Bool {
    for index in list.indices.dropFirst() where list[index - 1] >= list[index] { return false }
    return true
  }
}
