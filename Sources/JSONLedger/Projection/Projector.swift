import LMDB

/// Folds one change record into the projections. A pure function of the record and the
/// projections before it, so replaying the log into empty projections rebuilds them byte
/// for byte.
struct Projector {
  let transaction: Transaction
  let layout: StoreLayout
  let model: Model

  /// Folds `record` in. `knownStates` may give the state of each changed object after the
  /// record (the resolver's, on a live apply); it must equal what folding computes, and lets
  /// the projector skip reading the object back. Replay passes none.
  func apply(_ record: ChangeRecord, knownStates: [UInt64: ObjectState?] = [:]) throws {
    let store = ProjectionStore(transaction: transaction, layout: layout, model: model)
    var nextObjectID = try store.nextObjectID()
    for change in record.changes {
      let id = change.objectID
      let after: ObjectState?
      let needsHeader: Bool
      if let known = knownStates[id] {
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
    if let after {
      if needsHeader {
        try transaction.put(ObjectStateCoding.encodeHeader(entity: after.entity, identity: after.identity), forKey: idKey, in: layout.objects)
        try registerIdentity(of: after, id: id)
      }
      try transaction.put(ObjectStateCoding.encodeAttributes(after.attributes), forKey: idKey, in: layout.views)
    } else {
      try transaction.delete(idKey, in: layout.views)
    }
    for link in change.links { try rewriteLinks(id, link) }
    try updateIndexes(change)
    try transaction.put(ObjectStateCoding.encodeState(after), forKey: StoreKeys.history(id, batchID), in: layout.history)
  }

  /// Keeps the `indexes` entries of attributes the model marks `indexed` in step with the
  /// change's old → new values.
  private func updateIndexes(_ change: ObjectChange) throws {
    guard let entity = model.resolved(change.entity), let root = model.resolved(entity.rootName) else { return }
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
    guard let entity = model.resolved(state.entity), let root = model.resolved(entity.rootName) else { return }
    if state.identity.isEmpty {
      try transaction.put(StoreKeys.bigEndian(id), forKey: StoreKeys.bigEndian(root.id) + [0xFE] + StoreKeys.bigEndian(id), in: layout.keys)
      return
    }
    let (key, full) = StoreKeys.identity(root: root.id, state.identity)
    try transaction.put(StoreKeys.bigEndian(id) + (key == full ? [] : full), forKey: key, in: layout.keys)
  }

  /// Replaces the `rels` entries of one relationship of one object. An ordered list is keyed
  /// by position, any other by target id.
  private func rewriteLinks(_ id: UInt64, _ link: LinkChange) throws {
    let prefix = StoreKeys.links(id, link.relationshipID)
    let ordered = model.relationshipsByID[link.relationshipID]?.isOrdered ?? false
    if ordered {
      for position in link.old.indices { try transaction.delete(prefix + StoreKeys.bigEndian(UInt32(position)), in: layout.rels) }
      for (position, target) in link.new.enumerated() {
        try transaction.put(StoreKeys.bigEndian(target), forKey: prefix + StoreKeys.bigEndian(UInt32(position)), in: layout.rels)
      }
    } else {
      let kept = Set(link.new)
      for target in link.old where !kept.contains(target) { try transaction.delete(prefix + StoreKeys.bigEndian(target), in: layout.rels) }
      let old = Set(link.old)
      for target in link.new where !old.contains(target) {
        try transaction.put(StoreKeys.bigEndian(target), forKey: prefix + StoreKeys.bigEndian(target), in: layout.rels)
      }
    }
  }
}
