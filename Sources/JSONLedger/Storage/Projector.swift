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
  func apply(_ record: ChangeRecord, knownStates: consuming [ObjectState?]? = nil) throws {
    precondition(
      knownStates == nil || knownStates?.count == record.changes.count, "known states must match the changes")
    // Each known state is moved out of the array as its change is folded: taken, not copied
    // (a copy retains every field of the state, and releases it again after the write).
    let hasKnownStates = knownStates != nil
    var known = knownStates ?? []
    let store = ProjectionStore(transaction: transaction, layout: layout, model: model)
    var nextObjectID = try store.nextObjectID()
    // Created objects take ascending ids, so most of their entries land next to the previous
    // put: write cursors spare those puts the descent from the root.
    let written = [layout.objects, layout.keys, layout.views, layout.history, layout.rels]
    var buffers = KeyBuffers()
    try transaction.withWriteCursors(on: written) { cursors in
      for (index, change) in record.changes.enumerated() {
        nextObjectID = max(nextObjectID, change.objectID + 1)
        try fold(
          change, known: hasKnownStates ? .some(known[index].take()) : nil, batchID: record.batchID, store: store,
          cursors: cursors, buffers: &buffers)
      }
    }
    try transaction.put([UInt8](bigEndian: record.batchID), forKey: MetaKey.head, in: layout.meta)
    try transaction.put([UInt8](bigEndian: nextObjectID), forKey: MetaKey.nextObjectID, in: layout.meta)
    if let key = record.metadata.idempotencyKey {
      let (stored, full) = StoreKeys.idempotency(key)
      try transaction.put([UInt8](bigEndian: record.batchID) + (full ?? []), forKey: stored, in: layout.idempotency)
    }
  }

  /// Folds one change: works out the object's state after it and writes its entries. `known`
  /// is that state when the caller has it (`.some(nil)`: the change deletes the object); nil
  /// on replay, where it is read back and folded.
  private func fold(
    _ change: ObjectChange, known: ObjectState??, batchID: UInt64, store: ProjectionStore,
    cursors: borrowing WriteCursors, buffers: inout KeyBuffers
  ) throws {
    let id = change.objectID
    let after: ObjectState?
    let needsHeader: Bool
    if let known {
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
        state.apply(change)
        after = state
      }
      needsHeader = before == nil || before?.entity != after?.entity
    }
    try write(
      change, after: after, needsHeader: needsHeader, batchID: batchID, store: store, cursors: cursors,
      buffers: &buffers)
  }

  /// Writes one object's entries: header and identity (when new, or its entity changed),
  /// attributes, the links the change rewrote, and its history entry.
  private func write(
    _ change: ObjectChange, after: ObjectState?, needsHeader: Bool, batchID: UInt64, store: ProjectionStore,
    cursors: borrowing WriteCursors,
    buffers: inout KeyBuffers
  ) throws {
    let id = change.objectID
    // A created object usually has a new id, above every id in the store, and new ids are
    // handed out in the order changes come: its entries then sort last in `objects`,
    // `views`, `history` and `rels`, and are appended. The entries of a deleted object whose
    // id comes back do not sort last, and fall back to a plain put.
    let isCreated = change.kind == .created
    buffers.setObjectID(id)
    buffers.entry.removeAll()
    if let after {
      buffers.header.removeAll()
      ObjectStateCoding.writeHeader(entity: after.entity, identity: after.identity, into: &buffers.header)
      if needsHeader {
        try put(
          buffers.header.bytes, forKey: buffers.objectID, in: layout.objects, appending: isCreated, cursors: cursors)
      }
      buffers.attributes.removeAll()
      if isCreated {
        ObjectStateCoding.writeAttributes(ofCreated: change, into: &buffers.attributes)
      } else {
        ObjectStateCoding.writeAttributes(after.attributes, into: &buffers.attributes)
      }
      try put(
        buffers.attributes.bytes, forKey: buffers.objectID, in: layout.views, appending: isCreated, cursors: cursors)
      let deltas = change.kind == .updated ? try linkDeltas(change, after: after, store: store) : [:]
      ObjectStateCoding.writeEntry(
        header: buffers.header.bytes, links: after.links, encodedAttributes: buffers.attributes.bytes, deltas: deltas,
        into: &buffers.entry)
    } else {
      try cursors.delete(buffers.objectID, in: layout.views)
    }
    // Every change sets the fingerprint in the object's `keys` value to its own (0 unless one
    // payload alone made it), so a fingerprint never outlives the state it stands for.
    try register(
      change, entity: after?.entity ?? change.entity, isNew: after != nil && needsHeader, cursors: cursors,
      buffers: &buffers)
    for link in change.links { try rewriteLinks(id, link, appending: isCreated, cursors: cursors, buffers: &buffers) }
    try updateIndexes(change)
    buffers.setHistory(id, batchID: batchID)
    // An empty entry: absent after this batch.
    try put(buffers.entry.bytes, forKey: buffers.history, in: layout.history, appending: isCreated, cursors: cursors)
  }

  /// A put through `cursors`, tried as an append first when the key is expected to sort last.
  private func put(
    _ value: [UInt8], forKey key: [UInt8], in database: Database, appending: Bool, cursors: borrowing WriteCursors
  ) throws {
    if appending {
      try cursors.append(value, forKey: key, in: database)
    } else {
      try cursors.put(value, forKey: key, in: database)
    }
  }

  /// Keeps the `indexes` entries of attributes the model marks `indexed` in step with the
  /// change's old → new values.
  private func updateIndexes(_ change: ObjectChange) throws {
    guard let entity = model.resolved(change.entity), entity.hasIndexedAttributes,
      let root = model.resolved(entity.rootName)
    else { return }
    for attribute in change.attributes where entity.attributeIndex[attribute.name]?.isIndexed == true {
      let id = StoreKeys.object(change.objectID)
      if let old = attribute.old {
        try transaction.delete(StoreKeys.index(root: root.id, attribute: attribute.name, old) + id, in: layout.indexes)
      }
      if let new = attribute.new {
        try transaction.put(
          [], forKey: StoreKeys.index(root: root.id, attribute: attribute.name, new) + id, in: layout.indexes)
      }
    }
  }

  /// `keys` entry of an object: its identity under its root entity, holding its id and the
  /// change's payload fingerprint. An insert-only object is listed once, when it is new, under
  /// its root with a 0xFE marker and its id, so listings find it too.
  private func register(
    _ change: ObjectChange, entity name: String, isNew: Bool, cursors: borrowing WriteCursors, buffers: inout KeyBuffers
  ) throws {
    guard let entity = model.resolved(name) else { return }
    if change.identity.isEmpty {
      guard isNew else { return }
      try cursors.put(
        buffers.objectID, forKey: [UInt8](bigEndian: entity.rootID) + [0xFE] + buffers.objectID, in: layout.keys)
      return
    }
    OrderedEncoding.encodeIdentity(root: entity.rootID, change.identity, into: &buffers.identity)
    let key = StoreKeys.identityKey(forEncoded: buffers.identity)
    // An object already registered keeps its entry when the fingerprint stays (mostly 0 to 0:
    // a band gaining albums), which spares a put at a random place in `keys`. The bytes are
    // the same either way, so replay, which always puts, gives the same projection.
    if !isNew {
      let stored = try transaction.withValue(forKey: key, in: layout.keys) { value in
        value.count >= StoreKeys.registrationLength ? UInt64(bigEndianBytes: value.extracting(8...)) : nil
      }
      if let stored, stored == change.payloadFingerprint { return }
    }
    buffers.identityValue.removeAll(keepingCapacity: true)
    buffers.identityValue += buffers.objectID
    buffers.identityValue.appendBigEndian(change.payloadFingerprint)
    // A hashed long key keeps the whole encoding for the collision check.
    if key.count != buffers.identity.count { buffers.identityValue += buffers.identity }
    try cursors.put(buffers.identityValue, forKey: key, in: layout.keys)
  }

  /// The long unordered link lists of an updated object that its history entry keeps as
  /// deltas: those whose previous entry holds them and whose chain stays within the list's
  /// length (`StoredLinkList`). Decided from the stored entries alone, so that replay
  /// decides the same.
  private func linkDeltas(_ change: ObjectChange, after: ObjectState, store: ProjectionStore) throws -> [UInt32: (
    chain: Int, change: LinkChange
  )] {
    let minimum = StoredLinkList.minimumDeltaLength
    guard after.links.contains(where: { $0.value.count >= minimum && !model.isOrdered($0.key) }) else { return [:] }
    let previous = try store.storedLinks(of: change.objectID)
    var deltas: [UInt32: (chain: Int, change: LinkChange)] = [:]
    for (id, list) in after.links where list.count >= minimum && !model.isOrdered(id) {
      guard let stored = previous[id] else { continue }
      let link =
        change.links.first { $0.relationshipID == id } ?? LinkChange(relationshipID: id, added: [], removed: [])
      let chain =
        stored.chain + StoredLinkList.entryWeight(forLength: list.count) + link.added.count + link.removed.count
      if chain <= list.count { deltas[id] = (chain, link) }
    }
    return deltas
  }

  /// Updates the `rels` entries of one relationship of one object. An ordered list is keyed
  /// by position, any other by target id.
  private func rewriteLinks(
    _ id: UInt64, _ link: LinkChange, appending: Bool, cursors: borrowing WriteCursors, buffers: inout KeyBuffers
  ) throws {
    // Keys: object id (8) + relationship id (4) + position (4) or target id (8).
    buffers.setLinkOwner(id, relationshipID: link.relationshipID)
    if let order = link.order {
      for position in order.old.indices {
        buffers.orderedLink.setBigEndian(UInt32(position), at: 12)
        try cursors.delete(buffers.orderedLink, in: layout.rels)
      }
      for (position, target) in order.new.enumerated() {
        buffers.orderedLink.setBigEndian(UInt32(position), at: 12)
        buffers.target.setBigEndian(target, at: 0)
        try put(buffers.target, forKey: buffers.orderedLink, in: layout.rels, appending: appending, cursors: cursors)
      }
      return
    }
    for target in link.removed {
      buffers.unorderedLink.setBigEndian(target, at: 12)
      try cursors.delete(buffers.unorderedLink, in: layout.rels)
    }
    for target in link.added {
      buffers.unorderedLink.setBigEndian(target, at: 12)
      buffers.target.setBigEndian(target, at: 0)
      try put(buffers.target, forKey: buffers.unorderedLink, in: layout.rels, appending: appending, cursors: cursors)
    }
  }

}
