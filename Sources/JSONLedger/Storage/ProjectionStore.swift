import LMDB

/// Reads the projections inside one transaction: identities, object states (current, or as
/// of a batch through the history index) and entity listings.
struct ProjectionStore: StateSource {
  let transaction: Transaction
  let layout: StoreLayout
  let model: Model
  /// Read the state as it was right after this batch; nil for the current state.
  var asOf: UInt64?

  func objectID(root: String, identity: [AttributeValue]) throws -> UInt64? {
    guard let entity = model.resolved(root) else { return nil }
    return try objectID(rootID: entity.id, identity: identity)
  }

  func objectID(rootID: UInt32, identity: [AttributeValue]) throws -> UInt64? {
    var encoded: [UInt8] = []
    OrderedEncoding.encodeIdentity(root: rootID, identity, into: &encoded)
    return try registration(encodedIdentity: encoded)?.id
  }

  /// The `keys` value of an identity: object id (8 bytes), payload fingerprint (8), and the
  /// whole encoding when the key is a hashed long one.
  func registration(encodedIdentity full: [UInt8]) throws -> (id: UInt64, payloadFingerprint: UInt64)? {
    let key = StoreKeys.identityKey(forEncoded: full)
    let isHashed = key.count != full.count
    // Read in place: this runs for every object of an import.
    let found = try transaction.withValue(forKey: key, in: layout.keys) {
      value -> (id: UInt64, payloadFingerprint: UInt64, matches: Bool)? in
      guard value.count >= StoreKeys.registrationLength else { return nil }
      let matches = !isHashed || Self.bytes(of: value, from: StoreKeys.registrationLength, equal: full)
      return (UInt64(bigEndianBytes: value), UInt64(bigEndianBytes: value.extracting(8...)), matches)
    }
    guard let entry = found else { return nil }  // no such identity
    guard let found = entry else { throw LedgerError.storage("a keys entry is truncated") }
    guard found.matches else {
      let rootID = Int(UInt32(bigEndianBytes: full))
      let root = model.entities.indices.contains(rootID - 1) ? model.entities[rootID - 1].name : "an entity"
      throw LedgerError.storage("two long keys of \(root) share a hash; this key cannot be stored")
    }
    return (found.id, found.payloadFingerprint)
  }

  /// Whether `span` from `start` on holds exactly `bytes`.
  private static func bytes(of span: Span<UInt8>, from start: Int, equal bytes: [UInt8]) -> Bool {
    guard span.count - start == bytes.count else { return false }
    for index in bytes.indices where span[start + index] != bytes[index] { return false }
    return true
  }

  /// The object's state after the last batch at or before `asOf`: its newest history entry
  /// there, with any link list kept as deltas folded onto the whole list further back.
  func state(of objectID: UInt64) throws -> ObjectState? {
    let newestKey = StoreKeys.history(objectID, asOf ?? .max)
    // Mostly the newest entry holds every list whole, and is all there is to read.
    guard
      let newest = try transaction.lastEntry(
        in: layout.history, prefix: StoreKeys.object(objectID), atOrBefore: newestKey)
    else {
      return nil
    }
    let batch = UInt64(bigEndianBytes: newest.key.dropFirst(8))
    guard
      let decoded = try decodingHistory(
        of: objectID, at: batch,
        { () throws(DecodingFailure) in try ObjectStateCoding.decodeState(newest.value, model: model) })
    else {
      return nil
    }
    if decoded.deltas.isEmpty { return decoded.state }
    return try folding(decoded.deltas, onto: decoded.state, of: objectID, before: batch)
  }

  /// `state` with the lists its newest entry (at `newestBatch`) keeps as deltas resolved:
  /// each followed back through older entries to a whole list, and the deltas folded onto it.
  private func folding(
    _ deltas: [UInt32: LinkChange], onto state: ObjectState, of objectID: UInt64, before newestBatch: UInt64
  ) throws -> ObjectState {
    var state = state
    // Lists still to resolve, and their deltas newest first.
    var pending = deltas.mapValues { [$0] }
    guard newestBatch > 0 else { throw brokenHistory(objectID, relationship: pending.keys.first ?? 0) }
    try transaction.forEachBackward(
      in: layout.history, prefix: StoreKeys.object(objectID), atOrBefore: StoreKeys.history(objectID, newestBatch - 1)
    ) { entry in
      let batch = UInt64(bigEndianBytes: entry.key.dropFirst(8))
      let older = try decodingHistory(of: objectID, at: batch) { () throws(DecodingFailure) in
        try ObjectStateCoding.decodeEntry(entry.value, attributes: false)
      }
      for id in Array(pending.keys) {
        switch older?.links[id] {
        case .whole(let targets)?:
          var list = targets
          for change in pending[id, default: []].reversed() { change.apply(to: &list) }
          state.links[id] = list
          pending[id] = nil
        case .delta(_, let change)?:
          pending[id]?.append(change)
        case nil:
          throw LedgerError.storage(
            "the history of object \(objectID) is broken: batch \(batch) has no list for relationship \(id) that a later entry changes"
          )
        }
      }
      return !pending.isEmpty
    }
    if let id = pending.keys.first { throw brokenHistory(objectID, relationship: id) }
    return state
  }

  private func brokenHistory(_ objectID: UInt64, relationship id: UInt32) -> LedgerError {
    LedgerError.storage(
      "the history of object \(objectID) is broken: relationship \(id) has changes but no whole list before them")
  }

  /// How the newest history entry of an object keeps each link list (empty when the object
  /// has no entry or is absent).
  func storedLinks(of objectID: UInt64) throws -> [UInt32: StoredLinkList] {
    guard
      let entry = try transaction.lastEntry(
        in: layout.history, prefix: StoreKeys.object(objectID), atOrBefore: StoreKeys.history(objectID, .max))
    else { return [:] }
    let batch = UInt64(bigEndianBytes: entry.key.dropFirst(8))
    return try decodingHistory(of: objectID, at: batch) { () throws(DecodingFailure) in
      try ObjectStateCoding.decodeEntry(entry.value, attributes: false)
    }?.links ?? [:]
  }

  /// Runs `decode` on the history entry of `objectID` at `batch`; a failure names both.
  private func decodingHistory<Decoded>(
    of objectID: UInt64, at batch: UInt64, _ decode: () throws(DecodingFailure) -> Decoded
  ) throws -> Decoded {
    do { return try decode() } catch {
      throw LedgerError.storage("the history of object \(objectID) at batch \(batch) does not decode: \(error)")
    }
  }

  func objectIDs(root: String) throws -> [UInt64] {
    guard let entity = model.resolved(root) else { return [] }
    var ids: [UInt64] = []
    try transaction.forEachInPlace(in: layout.keys, prefix: [UInt8](bigEndian: entity.id)) { _, value in
      ids.append(UInt64(bigEndianBytes: value))
      return true
    }
    return ids
  }

  func nextObjectID() throws -> UInt64 {
    try transaction.value(forKey: MetaKey.nextObjectID, in: layout.meta).map { UInt64(bigEndianBytes: $0) } ?? 1
  }

  /// The last applied batch id (0 for an empty log).
  func head() throws -> UInt64 {
    try transaction.value(forKey: MetaKey.head, in: layout.meta).map { UInt64(bigEndianBytes: $0) } ?? 0
  }

  /// The batch ids (at or before `asOf`) that touched an object, oldest first.
  func batches(touching objectID: UInt64) throws -> [UInt64] {
    var batches: [UInt64] = []
    try transaction.forEach(in: layout.history, prefix: StoreKeys.object(objectID)) { entry in
      let batch = UInt64(bigEndianBytes: entry.key.dropFirst(8))
      guard batch <= asOf ?? UInt64.max else { return false }
      batches.append(batch)
      return true
    }
    return batches
  }

  /// Entity and identity of any object ever stored (deleted ones included).
  func header(of objectID: UInt64) throws -> (entity: String, identity: [AttributeValue])? {
    guard let bytes = try transaction.value(forKey: StoreKeys.object(objectID), in: layout.objects) else { return nil }
    do { return try ObjectStateCoding.decodeHeader(bytes, entityNames: model.entityNames) } catch {
      throw LedgerError.storage("object \(objectID) does not decode: \(error)")
    }
  }
}

extension ProjectionStore {
  /// The batch applied with an idempotency key, if any.
  func batch(forIdempotencyKey key: String) throws -> UInt64? {
    let (stored, full) = StoreKeys.idempotency(key)
    guard let value = try transaction.value(forKey: stored, in: layout.idempotency), value.count >= 8 else {
      return nil
    }
    if let full, Array(value.dropFirst(8)) != full {
      throw LedgerError.storage("two idempotency keys longer than \(StoreKeys.identityLimit) bytes share a hash")
    }
    return UInt64(bigEndianBytes: value)
  }

  /// The same store read as of `batchID` (nil: the current state).
  func with(asOf batchID: UInt64?) -> ProjectionStore {
    var copy = self
    copy.asOf = batchID
    return copy
  }
}
