import LMDB

/// Reads the projections inside one transaction: identities, object states (current, or as
/// of a batch through the undo images in `history`) and entity listings.
struct ProjectionStore: StateSource {
  let transaction: Transaction
  let layout: StoreLayout
  let model: Model
  /// Read the state as it was right after this batch; nil for the current state.
  var asOf: UInt64?

  /// The id registered for an identity of the root entity `rootID`, or nil, the key encoded
  /// into `encoded` (its contents replaced): a reader that looks up many keys reuses one
  /// buffer, not an allocation each.
  func objectID(rootID: UInt32, identity: some Collection<AttributeValue>, encodingInto encoded: inout [UInt8])
    throws -> UInt64?
  {
    OrderedEncoding.encodeIdentity(root: rootID, identity, into: &encoded)
    return try registration(encodedIdentity: encoded)?.id
  }

  /// `objectID(rootID:identity:encodingInto:)` of the identity that is `text` alone, the usual
  /// key: when it is short enough to be its own key, it is written on the stack instead.
  func objectID(rootID: UInt32, text: String, encodingInto encoded: inout [UInt8]) throws -> UInt64? {
    guard let length = OrderedEncoding.soleTextLength(text), length <= StoreKeys.identityLimit else {
      return try objectID(rootID: rootID, identity: CollectionOfOne(.string(text)), encodingInto: &encoded)
    }
    return try transaction.withBorrowedValue(
      forKeyOfAtMost: length, writtenBy: { OrderedEncoding.writeSoleText(text, root: rootID, to: &$0) },
      in: layout.keys, Self.registeredID)
  }

  /// The object id of a `keys` value (`registration(encodedIdentity:)`).
  private static func registeredID(_ value: BorrowedBytes) throws -> UInt64 {
    guard value.count >= StoreKeys.registrationLength else {
      throw LedgerError.corruptState("a keys entry is truncated")
    }
    return value.bigEndianUInt64(at: 0)
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
    guard let found = entry else { throw LedgerError.corruptState("a keys entry is truncated") }
    guard found.matches else {
      let rootID = Int(UInt32(bigEndianBytes: full))
      let root = model.entities.indices.contains(rootID - 1) ? model.entities[rootID - 1].name : "an entity"
      throw LedgerError(.keyCollision, "two long keys of \(root) share a hash; this key cannot be stored")
    }
    return (found.id, found.payloadFingerprint)
  }

  /// Whether `span` from `start` on holds exactly `bytes`.
  func holdsIdentities(root: UInt32) throws -> Bool {
    // Every identity's key starts with its root's id, big-endian (`OrderedEncoding`).
    var prefix: [UInt8] = []
    prefix.appendBigEndian(root)
    return try transaction.withFirstBorrowed(in: layout.keys, prefix: prefix, atOrAfter: prefix) { _, _ in true }
      ?? false
  }

  private static func bytes(of span: Span<UInt8>, from start: Int, equal bytes: [UInt8]) -> Bool {
    guard span.count - start == bytes.count else { return false }
    for index in bytes.indices where span[start + index] != bytes[index] { return false }
    return true
  }

  /// Which state of an object this store reads, for errors: "its current state", or "its
  /// state as of batch N".
  var statePlace: String { asOf.map { "its state as of batch \($0)" } ?? "its current state" }

  /// The object's state now, or as of `asOf`.
  func state(of objectID: UInt64) throws -> ObjectState? {
    try storedState(of: objectID)?.state
  }

  /// The object's state now, or as of `asOf`, with the batch its life began.
  func storedState(of objectID: UInt64) throws -> StoredState? {
    let found = try withStateBytes(of: objectID) { bytes, batch in
      try decoding(objectID, at: batch) { () throws(DecodingFailure) in try StateCoding.decode(bytes, model: model) }
        .map { ($0, batch) }
    }
    guard let (stored, batch) = found ?? nil else { return nil }
    if let asOf, stored.since > asOf { return nil }
    if let batch, !stored.deltas.isEmpty { return try resolvingDeltas(stored, of: objectID, after: batch) }
    return stored
  }

  /// Lends the bytes that hold the object's state now, or as of `asOf`, in place, with the
  /// batch of the undo image they are (nil: the current state); nil when there are none.
  ///
  /// As of batch N, the first undo image after N holds the state (one seek); without one the
  /// object has not changed since, and its current state is the answer. Either way an object
  /// whose life began after N (its `since`) did not exist then, and an empty image says it
  /// did not exist before the batch of the image.
  func withStateBytes<Result>(of objectID: UInt64, _ body: (BorrowedBytes, UInt64?) throws -> Result) throws
    -> Result?
  {
    if let asOf, asOf < .max {
      let image = try transaction.withFirstBorrowed(
        in: layout.history, prefix: StoreKeys.object(objectID), atOrAfter: StoreKeys.history(objectID, asOf + 1)
      ) { key, value in
        try body(value, UInt64(bigEndianBytes: key, from: 8))
      }
      if let image { return image }
    }
    return try transaction.withBorrowedValue(forBigEndianKey: objectID, in: layout.state) { try body($0, nil) }
  }

  /// The current state of a live object.
  func currentState(of objectID: UInt64) throws -> StoredState? {
    guard let bytes = try transaction.value(forKey: StoreKeys.object(objectID), in: layout.state) else { return nil }
    return try decoding(objectID, at: nil) { () throws(DecodingFailure) in try StateCoding.decode(bytes, model: model) }
  }

  /// The current state's bytes of a live object.
  func currentStateBytes(of objectID: UInt64) throws -> [UInt8]? {
    try transaction.value(forKey: StoreKeys.object(objectID), in: layout.state)
  }

  /// `image` (the undo image of `objectID` at `batch`) with the lists it keeps as changes
  /// made whole: each followed forward through newer images to a whole list (or to the
  /// current state), and the changes applied to it newest first.
  private func resolvingDeltas(_ image: StoredState, of objectID: UInt64, after batch: UInt64) throws -> StoredState {
    var stored = image
    // Lists still to resolve, and their changes oldest first.
    var pending = image.deltas.mapValues { [$0.change] }
    func resolve(_ id: UInt32, onto whole: LinkTargets) {
      var list = whole
      for change in pending[id, default: []].reversed() { change.apply(to: &list) }
      stored.state.links[id] = list
      pending[id] = nil
    }
    try transaction.forEach(
      in: layout.history, prefix: StoreKeys.object(objectID), from: StoreKeys.history(objectID, batch + 1)
    ) { entry in
      let newer = UInt64(bigEndianBytes: entry.key.dropFirst(8))
      guard
        let next = try decoding(
          objectID, at: newer,
          { () throws(DecodingFailure) in try StateCoding.decode(entry.value, model: model, attributes: false) })
      else { throw brokenHistory(objectID, at: newer) }
      for id in Array(pending.keys) {
        if let whole = next.state.links[id] {
          resolve(id, onto: whole)
        } else if let delta = next.deltas[id] {
          pending[id]?.append(delta.change)
        } else {
          throw brokenHistory(objectID, at: newer)
        }
      }
      return !pending.isEmpty
    }
    if !pending.isEmpty {
      guard let current = try currentState(of: objectID) else { throw brokenHistory(objectID, at: nil) }
      for id in Array(pending.keys) {
        guard let whole = current.state.links[id] else { throw brokenHistory(objectID, at: nil) }
        resolve(id, onto: whole)
      }
    }
    stored.deltas = [:]
    return stored
  }

  private func brokenHistory(_ objectID: UInt64, at batch: UInt64?) -> LedgerError {
    LedgerError.corruptState(
      "the history of object \(objectID) is broken: a link list kept as changes has no whole list after it"
        + (batch.map { " (at batch \($0))" } ?? " (in its current state)"))
  }

  /// The chain length each list has in the newest undo image of an object (0 for a whole
  /// list; none when the object has no image, or the image lacks the list).
  func newestImageChains(of objectID: UInt64) throws -> [UInt32: Int] {
    guard
      let entry = try transaction.lastEntry(
        in: layout.history, prefix: StoreKeys.object(objectID), atOrBefore: StoreKeys.history(objectID, .max))
    else { return [:] }
    let batch = UInt64(bigEndianBytes: entry.key.dropFirst(8))
    // The lists' ids are skipped, not read: a long list's image is read at every change of it.
    return try decoding(
      objectID, at: batch, { () throws(DecodingFailure) in try StateCoding.listChains(of: entry.value, model: model) })
      ?? [:]
  }

  /// Runs `decode`; a failure names the object and where its bytes came from.
  func decoding<Decoded>(
    _ objectID: UInt64, at batch: UInt64?, _ decode: () throws(DecodingFailure) -> Decoded
  ) throws -> Decoded {
    do { return try decode() } catch {
      let place = batch.map { "its undo image at batch \($0)" } ?? "its current state"
      throw LedgerError.corruptState("object \(objectID) does not decode (\(place)): \(error)")
    }
  }

  /// Ids of the live objects whose entity is `root` or inherits from it (as of `asOf`,
  /// those that may have lived then: current ones and any with undo images).
  func objectIDs(root: String) throws -> [UInt64] {
    guard let entity = model.resolved(root) else { return [] }
    let prefix = StoreKeys.rootPrefix(entity.id)
    var ids: [UInt64] = []
    try transaction.forEachInPlace(in: layout.state, prefix: prefix) { key, _ in
      ids.append(UInt64(bigEndianBytes: key))
      return true
    }
    guard asOf != nil else { return ids }
    var past: [UInt64] = []
    try transaction.forEachInPlace(in: layout.history, prefix: prefix) { key, _ in
      let id = UInt64(bigEndianBytes: key)
      if past.last != id { past.append(id) }
      return true
    }
    return Array(Set(ids).union(past)).sorted()
  }

  /// Calls `body` with the id and current state bytes of each live object under `root`, in
  /// id order: one cursor walk. `body` returns false to stop; the bytes are a buffer reused
  /// for the next object, valid during the call.
  func forEachCurrentState(root: UInt32, _ body: (UInt64, [UInt8]) throws -> Bool) throws {
    var buffer: [UInt8] = []
    try transaction.forEachInPlace(in: layout.state, prefix: StoreKeys.rootPrefix(root)) { key, value in
      buffer.removeAll(keepingCapacity: true)
      value.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
      return try body(UInt64(bigEndianBytes: key), buffer)
    }
  }

  func nextObjectSequence() throws -> UInt64 {
    try transaction.bigEndianNumber(forKey: MetaKey.nextObjectSequence, in: layout.meta, as: UInt64.self) ?? 1
  }

  /// The first batch the log holds: 1, or the checkpoint `compact` left.
  func firstBatch() throws -> UInt64 {
    try transaction.bigEndianNumber(forKey: MetaKey.firstBatch, in: layout.meta, as: UInt64.self) ?? 1
  }

  /// The batches the log holds, and so which states and records can be read.
  func extent() throws -> LogExtent { LogExtent(firstBatch: try firstBatch(), head: try head()) }

  /// The last applied batch id (0 for an empty log).
  func head() throws -> UInt64 {
    try transaction.bigEndianNumber(forKey: MetaKey.head, in: layout.meta, as: UInt64.self) ?? 0
  }

  /// The revert that undoes `batchID` now, if any: the oldest revert of it that no later
  /// batch reverted in turn (a revert undone by another no longer counts). One seek per
  /// revert of the batch, whatever the length of the log.
  func revert(of batchID: UInt64) throws -> UInt64? {
    for reverting in try reverts(of: batchID) where try reverts(of: reverting).isEmpty { return reverting }
    return nil
  }

  /// The reverts of `batchID`, oldest first.
  private func reverts(of batchID: UInt64) throws -> [UInt64] {
    var found: [UInt64] = []
    try transaction.forEach(in: layout.reverts, prefix: StoreKeys.batch(batchID)) { entry in
      found.append(UInt64(bigEndianBytes: entry.key.dropFirst(8)))
      return true
    }
    return found
  }

  /// The batch ids (at or before `asOf`) that touched an object, oldest first: the batch
  /// that first created it (which leaves no undo image), then one per undo image.
  func batches(touching objectID: UInt64) throws -> [UInt64] {
    var batches: [UInt64] = []
    var first: UInt64?
    try transaction.forEach(in: layout.history, prefix: StoreKeys.object(objectID)) { entry in
      let batch = UInt64(bigEndianBytes: entry.key.dropFirst(8))
      if batches.isEmpty {
        first = try decoding(objectID, at: batch) { () throws(DecodingFailure) in
          try StateCoding.decodeHeader(entry.value, model: model)
        }?.since
      }
      batches.append(batch)
      return true
    }
    if batches.isEmpty, let bytes = try currentStateBytes(of: objectID) {
      first = try decoding(objectID, at: nil) { () throws(DecodingFailure) in
        try StateCoding.since(of: bytes, model: model)
      }
    }
    if let first { batches.insert(first, at: 0) }
    return batches.filter { $0 <= asOf ?? .max }
  }

  /// Calls `body` with the identity of live object `objectID` read in place as UTF-8 text,
  /// when it is one string; nil when it is another identity or the object is not live.
  func withSoleStringIdentity<Result>(of objectID: UInt64, _ body: (UTF8Span) -> Result) throws -> Result? {
    let found = try transaction.withBorrowedValue(forBigEndianKey: objectID, in: layout.state) {
      bytes -> Result? in
      guard
        let range = try decoding(
          objectID, at: nil,
          { () throws(DecodingFailure) in try StateCoding.soleStringIdentity(of: bytes, model: model) })
      else { return nil }
      guard let result = bytes.withUTF8(range, body) else {
        throw LedgerError.corruptState("object \(objectID) does not decode (its current state): invalid UTF-8")
      }
      return result
    }
    return found ?? nil
  }

  /// Entity and identity of any object ever stored (deleted ones included: from the newest
  /// undo image).
  func header(of objectID: UInt64) throws -> (entity: String, identity: [AttributeValue])? {
    // The header starts the state: it is read in place, and the link lists and attributes
    // after it are not touched.
    let current = try transaction.withBorrowedValue(forBigEndianKey: objectID, in: layout.state) { bytes in
      try decoding(objectID, at: nil) { () throws(DecodingFailure) in try StateCoding.decodeHeader(bytes, model: model)
      }
    }
    if let current { return current.map { ($0.entity, $0.identity) } }
    var found: (entity: String, identity: [AttributeValue])?
    try transaction.forEachBackward(
      in: layout.history, prefix: StoreKeys.object(objectID), atOrBefore: StoreKeys.history(objectID, .max)
    ) { entry in
      let batch = UInt64(bigEndianBytes: entry.key.dropFirst(8))
      if let header = try decoding(
        objectID, at: batch, { () throws(DecodingFailure) in try StateCoding.decodeHeader(entry.value, model: model) })
      {
        found = (header.entity, header.identity)
        return false
      }
      return true
    }
    return found
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
      throw LedgerError(.keyCollision, "two idempotency keys longer than \(StoreKeys.identityLimit) bytes share a hash")
    }
    return UInt64(bigEndianBytes: value)
  }

  /// Every idempotency key the store knows, with the batch applied with it, at or before
  /// `batchID`: what a checkpoint standing for those batches keeps.
  func idempotencyKeys(atOrBefore batchID: UInt64) throws -> [String: UInt64] {
    var keys: [String: UInt64] = [:]
    try transaction.forEach(in: layout.idempotency, prefix: []) { entry in
      guard entry.value.count >= 8 else { return true }
      let batch = UInt64(bigEndianBytes: entry.value)
      guard batch <= batchID else { return true }
      let text = entry.value.count > 8 ? Array(entry.value.dropFirst(8)) : entry.key
      keys[String(decoding: text, as: UTF8.self)] = batch
      return true
    }
    return keys
  }

  /// The same store read as of `batchID` (nil: the current state).
  func with(asOf batchID: UInt64?) -> ProjectionStore {
    var copy = self
    copy.asOf = batchID
    return copy
  }
}
