import Foundation
import JSONLedgerSupport
import LMDB

/// Folds one change record into the projections. A pure function of the record and the
/// projections before it, so replaying the log into empty projections rebuilds them byte
/// for byte.
///
/// Per changed object it writes the state after the record to `state` (or deletes it), an
/// undo image of the state before to `history` (none for an object created for the first
/// time), and keeps `keys` and `indexes` in step. A revert is entered in `reverts`.
struct Projector {
  let transaction: Transaction
  let layout: StoreLayout
  let model: Model

  /// Folds `record` in. `knownStates` may give the state of each changed object after the
  /// record, in the order of `record.changes` (the resolver's, on a live apply); it must equal
  /// what folding computes, and lets the projector skip decoding the object. A created
  /// object's may be nil: its state is its change applied to nothing, and the resolver need
  /// not hold it twice. Replay passes none.
  ///
  /// The record is consumed: each change is moved out and let go once folded, so that a
  /// large record's changes are released while the transaction's pages grow. Each change is
  /// handed to `visit` just before it is folded, in ascending object id order, the order
  /// folding takes (`Ledger.append` encodes the record there, while the change is warm).
  func apply(
    _ record: consuming ChangeRecord, knownStates: consuming [ObjectState?]? = nil,
    visiting visit: (ObjectChange) -> Void = { _ in }
  ) throws {
    var changes = record.changes
    record.changes = []
    precondition(knownStates == nil || knownStates?.count == changes.count, "known states must match the changes")
    // Each known state is moved out of the array as its change is folded: taken, not copied.
    let hasKnownStates = knownStates != nil
    var known = knownStates ?? []
    let store = ProjectionStore(transaction: transaction, layout: layout, model: model)
    let extent = try store.extent()
    // Every entry written below is counted in (and every one replaced, counted out of) the
    // projections' digest, when the store keeps one to carry on from.
    var digest = try ProjectionDigest.continuing(transaction, layout, at: extent)
    let firstFreshSequence = try store.nextObjectSequence()
    var nextSequence = firstFreshSequence
    // In id order, the states of created objects are appended to their entity's range, and
    // every other put lands near the previous one. A record changes each object once, so
    // the order changes are folded in does not change the result. The changes (and their
    // known states) are put in descending id order where they lie, and each is popped off the
    // end as it is folded, the room it leaves handed back with the memory the folded changes
    // held: a large record's array of changes shrinks too while the transaction's pages grow.
    do {
      let order = changes.indices.sorted { changes[$0].objectID > changes[$1].objectID }
      changes.rearrange(by: order)
      if hasKnownStates { known.rearrange(by: order) }
    }
    var buffers = Buffers()
    var newKeys = NewKeys()
    let isLarge = changes.count >= Ledger.largeBatch
    try transaction.withWriteCursors(on: [layout.state, layout.history, layout.keys]) { cursors in
      var step = 0
      while let change = changes.popLast() {
        // What the changes folded so far held goes back as the transaction's pages grow.
        if isLarge, step % Self.foldsBetweenTrims == Self.foldsBetweenTrims - 1 {
          FreedMemory.returnToSystem()
          FreedMemory.returnUnusedRoom(of: &changes)
          FreedMemory.returnUnusedRoom(of: &known)
        }
        step += 1
        visit(change)
        let knownState: ObjectState?? = hasKnownStates ? known.popLast() : nil
        let sequence = ObjectIDs.sequence(of: change.objectID)
        nextSequence = max(nextSequence, sequence + 1)
        try fold(
          change, known: knownState, isFirstCreation: change.kind == .created && sequence >= firstFreshSequence,
          batchID: record.batchID, store: store, cursors: cursors, buffers: &buffers, newKeys: &newKeys,
          digest: &digest)
      }
      // What the last changes held goes back before the new identities are put.
      if isLarge { FreedMemory.returnToSystem() }
      // The identities of new objects, in key order: appended when they sort last.
      try newKeys.forEachInKeyOrder { key, value in
        try cursors.append(value, forKey: key, in: layout.keys)
        digest?.add(.keys, key: key.span, value: value.span)
      }
    }
    try transaction.put([UInt8](bigEndian: record.batchID), forKey: MetaKey.head, in: layout.meta)
    try transaction.put([UInt8](bigEndian: nextSequence), forKey: MetaKey.nextObjectSequence, in: layout.meta)
    if let key = record.metadata.idempotencyKey {
      let (stored, full) = StoreKeys.idempotency(key)
      try put(
        [UInt8](bigEndian: record.batchID) + (full ?? []), forKey: stored, in: .idempotency, digest: &digest)
    }
    // A checkpoint keeps the keys of the batches it stands for: their retries stay no-ops.
    for (key, batch) in record.metadata.archivedIdempotencyKeys {
      let (stored, full) = StoreKeys.idempotency(key)
      try put([UInt8](bigEndian: batch) + (full ?? []), forKey: stored, in: .idempotency, digest: &digest)
    }
    if record.kind == .revert, let reverted = record.metadata.revertedBatchID {
      try put([], forKey: StoreKeys.revert(of: reverted, by: record.batchID), in: .reverts, digest: &digest)
    }
    try ProjectionDigest.keep(
      digest, transaction, layout, at: LogExtent(firstBatch: extent.firstBatch, head: record.batchID))
  }

  /// Puts an entry where one may already be, counting the one replaced out of the digest.
  private func put(
    _ value: [UInt8], forKey key: [UInt8], in part: ProjectionDigest.Part, digest: inout ProjectionDigest?
  ) throws {
    let database = layout.database(of: part)
    if digest != nil,
      let replaced = try transaction.withValue(
        forKey: key, in: database, { ProjectionDigest.hash(part, key: key.span, value: $0) })
    {
      digest?.remove(hash: replaced)
    }
    try transaction.put(value, forKey: key, in: database)
    digest?.add(part, key: key.span, value: value.span)
  }

  /// How many changes of a large batch are folded between two hand-backs of the memory they
  /// held and of their array's emptied room (`FreedMemory`): between two, what was freed
  /// stays resident beside the pages the folds wrote. A hand-back costs fewer instructions
  /// than one fold; at 100,000 albums, handing back every 65,536 changes left the batch's
  /// peak 6 MB higher than every 8,192 (RESULTS.md).
  static let foldsBetweenTrims = 1 << 11

  /// Folds one change. `known` is the state after it when the caller has it (`.some(nil)`:
  /// the change deletes the object); nil on replay, where the state before is decoded and
  /// the change applied to it.
  private func fold(
    _ change: ObjectChange, known: ObjectState??, isFirstCreation: Bool, batchID: UInt64, store: ProjectionStore,
    cursors: borrowing WriteCursors, buffers: inout Buffers, newKeys: inout NewKeys, digest: inout ProjectionDigest?
  ) throws {
    let id = change.objectID
    buffers.setObjectID(id)
    buffers.setHistory(id, batchID: batchID)
    // An object created for the first time has no state yet; any other has one, unless it
    // was deleted and is now brought back.
    let beforeBytes = isFirstCreation ? nil : try store.currentStateBytes(of: id)
    // A creation the resolver packed is its state's bytes already, since to be set (numbered
    // by this very model: a state packed under another is decoded and written again below).
    if beforeBytes == nil, change.changedAttributes.isPacked, case .packed(let packed) = change.changedAttributes,
      packed.entity === buffers.entity(named: change.entity, in: model)
    {
      if !isFirstCreation {
        try cursors.put([], forKey: buffers.history, in: layout.history)
        digest?.add(.history, key: buffers.history.span, value: Span())
      }
      buffers.state.removeAll()
      packed.write(since: batchID, into: &buffers.state)
      if isFirstCreation {
        try cursors.append(buffers.state.bytes, forKey: buffers.objectID, in: layout.state)
      } else {
        try cursors.put(buffers.state.bytes, forKey: buffers.objectID, in: layout.state)
      }
      digest?.add(.state, key: buffers.objectID.span, value: buffers.state.bytes.span)
      try register(
        change, of: packed.entity, isFirstCreation: isFirstCreation, cursors: cursors, buffers: &buffers,
        newKeys: &newKeys, digest: &digest)
      try updateIndexes(change, of: packed.entity, digest: &digest)
      return
    }
    // An object created for the first time, its state not known: its state is its change
    // applied to nothing, a creation's change holds that state's lists whole
    // (`ObjectState.apply`), and they are written as they are, with no state made of them.
    if isFirstCreation, known ?? nil == nil, case .whole(let attributes, isNew: true) = change.changedAttributes,
      case .whole(let links, isNew: true, _) = change.changedLinks
    {
      let entity = buffers.entity(named: change.entity, in: model)
      buffers.state.removeAll()
      StateCoding.write(
        entity: change.entity, entity, identity: change.identity, attributes: attributes, links: links, since: batchID,
        into: &buffers.state)
      try cursors.append(buffers.state.bytes, forKey: buffers.objectID, in: layout.state)
      digest?.add(.state, key: buffers.objectID.span, value: buffers.state.bytes.span)
      try register(
        change, of: entity, isFirstCreation: true, cursors: cursors, buffers: &buffers, newKeys: &newKeys,
        digest: &digest)
      try updateIndexes(change, of: entity, digest: &digest)
      return
    }
    let after: ObjectState?
    // Where replay decoded the state before: its since, and, when it holds a long unordered
    // list, the state itself for the undo image, which would otherwise decode it again (a
    // third of a follower's fold when a list grows with every batch). Kept only then: a
    // state kept is copied when the change is applied, not changed in place.
    var decodedBefore: StoredState?
    var sinceBefore: UInt64?
    if let known, known != nil || change.kind != .created {
      after = known
    } else if change.kind == .deleted {
      after = nil
    } else {
      var decoded = try beforeBytes.flatMap { bytes in
        try decoding(id) { () throws(DecodingFailure) in try StateCoding.decode(bytes, model: model) }
      }
      sinceBefore = decoded?.since
      if let stored = decoded, hasLongUnorderedList(stored.state) { decodedBefore = stored }
      var state = decoded.take()?.state ?? ObjectState(entity: change.entity, identity: change.identity)
      state.apply(change)
      after = state
    }
    // The undo image: nothing before a first creation, an empty one before any other, the
    // state before otherwise.
    if let beforeBytes {
      let image = try undoImage(
        change, before: beforeBytes, decoded: decodedBefore, after: after, store: store, buffers: &buffers)
      let undo = image ?? beforeBytes
      try cursors.put(undo, forKey: buffers.history, in: layout.history)
      digest?.add(.history, key: buffers.history.span, value: undo.span)
      // The state before is replaced or deleted below.
      digest?.remove(.state, key: buffers.objectID.span, value: beforeBytes.span)
    } else if !isFirstCreation {
      try cursors.put([], forKey: buffers.history, in: layout.history)
      digest?.add(.history, key: buffers.history.span, value: Span())
    }
    if let after {
      let since =
        try sinceBefore
        ?? beforeBytes.map { bytes in
          try decoding(id) { () throws(DecodingFailure) in try StateCoding.since(of: bytes, model: model) }
        } ?? batchID
      buffers.state.removeAll()
      StateCoding.write(after, since: since, model: model, into: &buffers.state)
      if isFirstCreation {
        try cursors.append(buffers.state.bytes, forKey: buffers.objectID, in: layout.state)
      } else {
        try cursors.put(buffers.state.bytes, forKey: buffers.objectID, in: layout.state)
      }
      digest?.add(.state, key: buffers.objectID.span, value: buffers.state.bytes.span)
    } else if beforeBytes != nil {
      try cursors.delete(buffers.objectID, in: layout.state)
    }
    // Looked up once for both: by name, the one lookup left in a change's fold.
    let entity = buffers.entity(named: change.entity, in: model)
    try register(
      change, of: entity, isFirstCreation: isFirstCreation, cursors: cursors, buffers: &buffers, newKeys: &newKeys,
      digest: &digest)
    try updateIndexes(change, of: entity, digest: &digest)
  }

  /// Whether `state` holds a list its undo image may keep as a change.
  private func hasLongUnorderedList(_ state: ObjectState) -> Bool {
    state.links.contains { $0.value.count >= StoredLinkList.minimumDeltaLength && !model.isOrdered($0.key) }
  }

  /// The undo image of an updated object whose long unordered lists are kept as changes, or
  /// nil when the state before serves as it is (no list qualifies). Decided from the stored
  /// entries alone, so that replay decides the same. `decoded` is the state before when the
  /// caller decoded it already.
  private func undoImage(
    _ change: ObjectChange, before beforeBytes: [UInt8], decoded: StoredState?, after: ObjectState?,
    store: ProjectionStore, buffers: inout Buffers
  ) throws -> [UInt8]? {
    let minimum = StoredLinkList.minimumDeltaLength
    guard change.kind == .updated, let after, hasLongUnorderedList(after) else { return nil }
    let id = change.objectID
    guard
      let before = try decoded
        ?? decoding(id, { () throws(DecodingFailure) in try StateCoding.decode(beforeBytes, model: model) })
    else { return nil }
    var previousChains: [UInt32: Int]?
    var deltas: [UInt32: (chain: Int, change: LinkChange)] = [:]
    for (relationship, list) in before.state.links where list.count >= minimum && !model.isOrdered(relationship) {
      guard let afterList = after.links[relationship], afterList.count >= minimum else { continue }
      if previousChains == nil { previousChains = try store.newestImageChains(of: id) }
      let forward = change.links.first { $0.relationshipID == relationship }
      // The change that turns the list after the batch back into the list before.
      let undo = LinkChange(
        relationshipID: relationship, added: forward?.removed ?? [], removed: forward?.added ?? [])
      let chain =
        (previousChains?[relationship] ?? 0) + StoredLinkList.entryWeight(forLength: list.count) + undo.added.count
        + undo.removed.count
      if chain <= list.count { deltas[relationship] = (chain, undo) }
    }
    guard !deltas.isEmpty else { return nil }
    buffers.image.removeAll()
    StateCoding.write(before.state, since: before.since, model: model, deltas: deltas, into: &buffers.image)
    return buffers.image.bytes
  }

  /// Keeps the `indexes` entries of attributes the model marks `indexed` in step with the
  /// change's old → new values.
  private func updateIndexes(_ change: ObjectChange, of entity: ResolvedEntity?, digest: inout ProjectionDigest?)
    throws
  {
    guard let entity, entity.hasIndexedAttributes else { return }
    try change.changedAttributes.forEachAttribute { name, old, new in
      guard entity.attributeIndex[name]?.isIndexed == true else { return }
      if let old {
        let key = indexKey(change.objectID, entity, name, old)
        if try transaction.delete(key, in: layout.indexes) { digest?.remove(.indexes, key: key.span, value: Span()) }
      }
      if let new { try putIndexEntry(indexKey(change.objectID, entity, name, new), digest: &digest) }
    }
  }

  /// Puts the `indexes` entries of a live object's indexed attributes (a migration that
  /// changes index flags rebuilds `indexes` so).
  func index(_ objectID: UInt64, _ state: ObjectState, digest: inout ProjectionDigest?) throws {
    guard let entity = model.resolved(state.entity), entity.hasIndexedAttributes else { return }
    for (name, value) in state.attributes where entity.attributeIndex[name]?.isIndexed == true {
      try putIndexEntry(indexKey(objectID, entity, name, value), digest: &digest)
    }
  }

  /// Puts an `indexes` entry (empty), counted into the digest unless it was there already.
  private func putIndexEntry(_ key: [UInt8], digest: inout ProjectionDigest?) throws {
    do {
      try transaction.put([], forKey: key, in: layout.indexes, flags: .noOverwrite)
      digest?.add(.indexes, key: key.span, value: Span())
    } catch let error where error.isKeyExists {
      return
    }
  }

  /// An `indexes` entry: under the object's root entity, the attribute and value, then the id.
  private func indexKey(_ objectID: UInt64, _ entity: ResolvedEntity, _ attribute: String, _ value: AttributeValue)
    -> [UInt8]
  {
    StoreKeys.index(root: entity.rootID, attribute: attribute, value) + StoreKeys.object(objectID)
  }

  /// The `keys` entry of an object with an identity: its id and the change's payload
  /// fingerprint (every change sets it to its own, 0 unless one payload alone made the
  /// object, so a fingerprint never outlives the state it stands for). The entries of objects
  /// created for the first time are gathered in `newKeys`, to be put in key order.
  private func register(
    _ change: ObjectChange, of entity: ResolvedEntity?, isFirstCreation: Bool, cursors: borrowing WriteCursors,
    buffers: inout Buffers, newKeys: inout NewKeys, digest: inout ProjectionDigest?
  ) throws {
    // Read once: a packed state's identity is decoded from its bytes at each read.
    let identity = change.identity
    guard !identity.isEmpty, let entity else { return }
    OrderedEncoding.encodeIdentity(root: entity.rootID, identity, into: &buffers.identity)
    let key = StoreKeys.identityKey(forEncoded: buffers.identity)
    // An object already registered keeps its entry when the fingerprint stays (mostly 0 to 0:
    // a band gaining albums), which spares a put at a random place in `keys`. The bytes are
    // the same either way, so replay, which always puts, gives the same projection. The entry
    // replaced is hashed as it is read, to be counted out of the digest.
    if !isFirstCreation, change.kind != .created || digest != nil {
      let keepsDigest = digest != nil
      // nil: the entry stays as it is; otherwise the hash of the one replaced (0 without a digest).
      let replaced = try transaction.withValue(forKey: key, in: layout.keys) { value -> UInt64? in
        if change.kind != .created, value.count >= StoreKeys.registrationLength,
          UInt64(bigEndianBytes: value.extracting(8...)) == change.payloadFingerprint
        {
          return nil
        }
        return keepsDigest ? ProjectionDigest.hash(.keys, key: key.span, value: value) : 0
      }
      switch replaced {
      case .some(nil): return
      case .some(.some(let hash)): digest?.remove(hash: hash)
      case nil: break
      }
    }
    // A hashed long key keeps the whole encoding for the collision check.
    let full = key.count != buffers.identity.count ? buffers.identity : nil
    if isFirstCreation {
      newKeys.add(key) { Self.appendRegistration(buffers.objectID, change.payloadFingerprint, full, to: &$0) }
    } else {
      // Built in a buffer of its own, reused: a copy of `objectID` grown by the fingerprint is
      // an allocation per object.
      buffers.registration.removeAll(keepingCapacity: true)
      Self.appendRegistration(buffers.objectID, change.payloadFingerprint, full, to: &buffers.registration)
      try cursors.put(buffers.registration, forKey: key, in: layout.keys)
      digest?.add(.keys, key: key.span, value: buffers.registration.span)
    }
  }

  /// Appends a `keys` value: the object id's bytes, the payload fingerprint, and for a hashed
  /// key the identity's whole encoding.
  private static func appendRegistration(
    _ objectID: [UInt8], _ fingerprint: UInt64, _ fullIdentity: [UInt8]?, to bytes: inout [UInt8]
  ) {
    bytes += objectID
    bytes.appendBigEndian(fingerprint)
    if let fullIdentity { bytes += fullIdentity }
  }

  private func decoding<Decoded>(_ objectID: UInt64, _ decode: () throws(DecodingFailure) -> Decoded) throws
    -> Decoded
  {
    do { return try decode() } catch {
      throw LedgerError.corruptState("the state of object \(objectID) does not decode: \(error)")
    }
  }
}

extension Projector {
  /// Key and value buffers reused for every object of a record. LMDB copies what is put, so
  /// one buffer of each shape serves every put.
  struct Buffers {
    /// An object id: a `state` key, or the start of a `keys` value.
    var objectID = Array(repeatElement(UInt8(0), count: 8))  // not `repeating:` (CONTRIBUTING.md, "Hot paths")
    /// Object id, batch id: a `history` key.
    var history = Array(repeatElement(UInt8(0), count: 16))
    var state = BinaryWriter(capacity: 1024)
    var image = BinaryWriter(capacity: 1024)
    /// An identity in `OrderedEncoding` (the start of a `keys` key).
    var identity: [UInt8] = []
    /// A `keys` value: object id, payload fingerprint, and for a hashed key the identity.
    var registration: [UInt8] = []
    /// The entity the last change's name resolved to: a record's changes come in runs of one
    /// entity, and comparing a name costs less than hashing it.
    private var lastEntity: (name: String, entity: ResolvedEntity?)?

    /// What `model` resolves `name` to: the projector's model, the same in every call.
    mutating func entity(named name: String, in model: Model) -> ResolvedEntity? {
      if let lastEntity, lastEntity.name == name { return lastEntity.entity }
      let entity = model.resolved(name)
      lastEntity = (name, entity)
      return entity
    }

    mutating func setObjectID(_ id: UInt64) { objectID.setBigEndian(id, at: 0) }

    mutating func setHistory(_ id: UInt64, batchID: UInt64) {
      history.setBigEndian(id, at: 0)
      history.setBigEndian(batchID, at: 8)
    }
  }

  /// The `keys` entries of a record's new objects, kept in one buffer until they are put in
  /// key order: on a fresh store (or for identities past every stored one) each is then an
  /// append, and `keys` pages are left full instead of half full.
  struct NewKeys {
    private var bytes: [UInt8] = []
    private var entries: [(keyStart: Int, keyEnd: Int, valueEnd: Int)] = []

    /// Adds an entry whose value `appendValue` appends, into the buffer where it stays.
    mutating func add(_ key: [UInt8], value appendValue: (inout [UInt8]) -> Void) {
      let start = bytes.count
      bytes += key
      let keyEnd = bytes.count
      appendValue(&bytes)
      entries.append((start, keyEnd, bytes.count))
    }

    /// Calls `body` with each entry in key order, where it lies in the buffer. The entries
    /// are sorted where they lie, not into a copy: a large batch holds them beside every
    /// page it has written.
    mutating func forEachInKeyOrder(_ body: (ArraySlice<UInt8>, ArraySlice<UInt8>) throws -> Void) rethrows {
      // Keys compare as LMDB compares them: bytes, then the shorter first.
      bytes.withUnsafeBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        entries.sort { left, right in
          let (leftCount, rightCount) = (left.keyEnd - left.keyStart, right.keyEnd - right.keyStart)
          let order = memcmp(base + left.keyStart, base + right.keyStart, min(leftCount, rightCount))
          return order != 0 ? order < 0 : leftCount < rightCount
        }
      }
      for entry in entries {
        try body(bytes[entry.keyStart..<entry.keyEnd], bytes[entry.keyEnd..<entry.valueEnd])
      }
    }
  }
}
