import JSONLedgerSupport
import LMDB

/// The reading logic behind `View`: a copyable value over one transaction, used only while
/// that transaction is open.
@usableFromInline struct SnapshotReader {
  let store: ProjectionStore
  let transformers: ValueTransformers
  /// What one read leaves for the next, shared by the copies of this reader, which all run on
  /// the thread of its transaction, one call at a time.
  private let scratch = Scratch()

  private final class Scratch {
    // Both unchecked: the runtime's check of each access cost 2% of a read by key
    // (RESULTS.md), and no two accesses can overlap. A view is neither copyable nor
    // `Sendable`, so its reader runs on one thread at a time; `keyBytes` is accessed by
    // `objectID(of:key:)` alone, which encodes a key and looks it up and calls nothing that
    // reaches this object again, and `lastEntity` is only read or set whole.

    /// The bytes of the last key looked up, reused for the next: a view reads many objects
    /// by key, and an allocation each cost about 7% of a read by key (RESULTS.md).
    @exclusivity(unchecked) var keyBytes: [UInt8]
    /// The entity the last call named: a view that reads many objects names one entity
    /// again and again, and finding it by name cost 2.6% of a read by key. Unowned: the model
    /// the reader holds keeps its entities, and holding one strongly cost a view that reads
    /// one object more than the cache saved it.
    @exclusivity(unchecked) unowned(unsafe) var lastEntity: ResolvedEntity?

    init() {
      keyBytes = []
      // Room for a usual key at once: grown by appending, it is reallocated twice or more.
      keyBytes.reserveCapacity(64)
    }
  }

  init(store: ProjectionStore, transformers: ValueTransformers) {
    self.store = store
    self.transformers = transformers
  }

  /// The model the store was created with.
  var model: Model { store.model }

  func entity(_ name: String) throws -> ResolvedEntity {
    if let last = scratch.lastEntity, last.name == name { return last }
    guard let entity = store.model.resolved(name) else {
      throw LedgerError.unknownEntity(name, known: store.model.entities.map(\.name))
    }
    scratch.lastEntity = entity
    return entity
  }

  /// The object of `entity` (or of a sub-entity) with `key`, or nil.
  ///
  /// `key` is the identity value (`"Japan"`, `42`, or `"42"` for an integer key); a composite
  /// key is an array in identity order or an object of the identity attributes.
  func object(_ entity: String, key: JSONValue) throws -> ObjectSnapshot? {
    let resolved = try self.entity(entity)
    guard let id = try objectID(of: resolved, key: key) else { return nil }
    if store.asOf == nil {
      // The current state, read in place straight into a snapshot (the builder copies what
      // it keeps). The builder is filled by the closure, not returned from it wrapped in two
      // optionals, which cost a read as of a batch about 1,200 instructions (RESULTS.md).
      let model = store.model
      var builder = SnapshotBuilder(family: resolved.family)
      let visited = try store.transaction.withBorrowedValue(forBigEndianKey: id, in: store.layout.state) { bytes in
        do { return try StateCoding.visit(bytes, model: model, &builder) } catch {
          throw LedgerError.corruptState("object \(id) does not decode (its current state): \(error)")
        }
      }
      guard visited == true else { return nil }
      var keys = TargetKeys(store: store, caches: false)
      return builder.isSkipped ? nil : try builder.snapshot(id, keys: &keys)
    }
    if let asOf = store.asOf, let found = try objectInPlace(id, asOf: asOf, family: resolved.family) { return found }
    guard let state = try store.state(of: id), resolved.family.contains(state.entity) else { return nil }
    return try snapshot(id, state)
  }

  /// Object `id` as of batch `asOf`, read in place where `ProjectionStore.storedState(of:)`
  /// finds it and built straight into a snapshot: `.some(nil)` when it did not exist then
  /// (or was of another entity than `family`'s); nil when its image keeps a link list as
  /// changes, which `storedState` resolves.
  private func objectInPlace(_ id: UInt64, asOf: UInt64, family: [String]) throws -> ObjectSnapshot?? {
    // Filled by the closure, not returned from it (`object(_:key:)` says why).
    let model = store.model
    var builder = SnapshotBuilder(family: family)
    let found = try store.withStateBytes(of: id) { bytes, batch in
      try store.decoding(id, at: batch) { () throws(DecodingFailure) in
        try StateCoding.visit(bytes, model: model, &builder)
      }
    }
    guard found == true else { return .some(nil) }
    guard !builder.hasDeltas else { return nil }
    guard !builder.isSkipped, builder.since <= asOf else { return .some(nil) }
    var keys = TargetKeys(store: store, caches: false)
    return .some(try builder.snapshot(id, keys: &keys))
  }

  /// Calls `body` with the object of `entity` (or of a sub-entity) with `key`, read in place,
  /// unless there is none (`View.withObject(_:key:_:)`).
  @usableFromInline func visitObject(_ entity: String, key: JSONValue, _ body: (borrowing StoredObject) throws -> Void)
    throws
  {
    let resolved = try self.entity(entity)
    guard let id = try objectID(of: resolved, key: key) else { return }
    if store.asOf == nil {
      _ = try store.transaction.withBorrowedValue(forBigEndianKey: id, in: store.layout.state) { bytes in
        try lend(bytes, id, of: resolved, targetKeys: nil, body)
      }
      return
    }
    guard let stored = try store.storedState(of: id), resolved.family.contains(stored.state.entity) else { return }
    var writer = BinaryWriter()
    StateCoding.write(stored.state, since: stored.since, model: model, into: &writer)
    try BorrowedBytes.withBytes(of: writer.bytes) { bytes in
      try lend(bytes, id, of: resolved, targetKeys: nil, body)
    }
  }

  /// Calls `body` with each object of `entity` and its sub-entities, read in place, in the
  /// order they were first stored: the current state is one cursor walk over the entity's
  /// range, and nothing is decoded that `body` does not ask for.
  func forEachObjectInPlace(_ entity: String, _ body: (borrowing StoredObject) throws -> Void) throws {
    let resolved = try self.entity(entity)
    let targetKeys = TargetKeyCache(store: store)
    guard store.asOf == nil else {
      var writer = BinaryWriter()
      for id in try store.objectIDs(root: resolved.rootName) {
        guard let stored = try store.storedState(of: id), resolved.family.contains(stored.state.entity) else {
          continue
        }
        writer.removeAll()
        StateCoding.write(stored.state, since: stored.since, model: model, into: &writer)
        try BorrowedBytes.withBytes(of: writer.bytes) { bytes in
          try lend(bytes, id, of: resolved, targetKeys: targetKeys, body)
        }
      }
      return
    }
    try store.transaction.forEachBorrowed(in: store.layout.state, prefix: StoreKeys.rootPrefix(resolved.rootID)) {
      key, bytes in
      guard key.count == 8 else { throw LedgerError.corruptState("a state key is \(key.count) bytes long") }
      var id: UInt64 = 0
      for index in 0..<8 { id = id << 8 | UInt64(key[index]) }
      try lend(bytes, id, of: resolved, targetKeys: targetKeys, body)
      return true
    }
  }

  /// Calls `body` with the object whose current state is `bytes`, unless it is of no entity of
  /// `requested`'s family.
  private func lend(
    _ bytes: BorrowedBytes, _ id: UInt64, of requested: ResolvedEntity, targetKeys: TargetKeyCache?,
    _ body: (borrowing StoredObject) throws -> Void
  ) throws {
    let declaration: ResolvedEntity?
    let identityStart: Int
    do {
      // Most often the object is of the entity asked for, found by its number alone.
      if let start = try StateCoding.identityStart(of: bytes, ifOfEntityNumbered: requested.id) {
        (declaration, identityStart) = (requested, start)
      } else {
        let entity = try StateCoding.entity(of: bytes, model: model)
        guard requested.family.contains(entity.name) else { return }
        (declaration, identityStart) = (entity.resolved, entity.identityStart)
      }
    } catch {
      throw LedgerError.corruptState("object \(id) does not decode (\(store.statePlace)): \(error)")
    }
    let object = StoredObject(
      bytes: bytes, objectID: id, declaration: declaration, identityStart: identityStart, store: store,
      targetKeys: targetKeys)
    try body(object)
  }

  /// The id of the object of `entity` that `key` names; nil when the store holds none. A bare
  /// key of a single identity, the common read, is looked up with no array of its value made.
  func objectID(of entity: ResolvedEntity, key: JSONValue) throws -> UInt64? {
    if let text = CallerKey.soleText(of: entity, key: key) {
      return try store.objectID(rootID: entity.rootID, text: text, encodingInto: &scratch.keyBytes)
    }
    if case .success(let value)? = CallerKey.singleValue(of: entity, key: key) {
      return try store.objectID(
        rootID: entity.rootID, identity: CollectionOfOne(value), encodingInto: &scratch.keyBytes)
    }
    // Every other shape, and a refused bare key, which `identity(of:key:)` reports.
    guard let identity = try identity(of: entity, key: key) else { return nil }
    return try store.objectID(rootID: entity.rootID, identity: identity, encodingInto: &scratch.keyBytes)
  }

  /// The identity `key` names (`CallerKey`'s rule).
  private func identity(of entity: ResolvedEntity, key: JSONValue) throws -> [AttributeValue]? {
    switch CallerKey.identity(of: entity, key: key, keyCase: model.keyCase, model: model) {
    case .success(let values): values
    case .failure(let failure): throw LedgerError.invalidKey(entity: entity.name, failure.reason)
    }
  }

  /// All objects of `entity` and its sub-entities, in the order they were first stored.
  func objects(_ entity: String) throws -> [ObjectSnapshot] {
    var result: [ObjectSnapshot] = []
    try forEachObject(entity) { result.append($0) }
    return result
  }

  /// Calls `body` for each object of `entity` and its sub-entities, in the order they were
  /// first stored: the current state is one cursor walk over the entity's range.
  func forEachObject(_ entity: String, _ body: (ObjectSnapshot) throws -> Void) throws {
    try visitObjects(entity) { object in
      try body(object)
      return true
    }
  }

  /// `forEachObject(_:_:)`, until `body` returns false: a page reads what it shows, not the entity.
  func visitObjects(_ entity: String, _ body: (ObjectSnapshot) throws -> Bool) throws {
    let resolved = try self.entity(entity)
    let family = Set(resolved.family)
    // Many objects point to the same few (albums to their band): their keys are read once.
    var keys = TargetKeys(store: store, caches: true)
    guard store.asOf == nil else {
      for id in try store.objectIDs(root: resolved.rootName) {
        guard let state = try store.state(of: id), family.contains(state.entity) else { continue }
        guard try body(try snapshot(id, state, keys: &keys)) else { return }
      }
      return
    }
    let model = store.model
    var builder = SnapshotBuilder(family: resolved.family)
    try store.forEachCurrentState(root: resolved.rootID) { id, bytes in
      do { guard try StateCoding.visit(bytes, model: model, &builder) else { return true } } catch {
        throw LedgerError.corruptState("object \(id) does not decode (its current state): \(error)")
      }
      if builder.isSkipped { return true }
      return try body(try builder.snapshot(id, keys: &keys))
    }
  }

  /// The number of objects of `entity` and its sub-entities.
  func count(_ entity: String) throws -> Int {
    var count = 0
    try forEachObject(entity) { _ in count += 1 }
    return count
  }

  /// The objects `object`'s relationship `relationship` points to, in its order.
  func related(_ object: ObjectSnapshot, _ relationship: String) throws -> [ObjectSnapshot] {
    var cache: [UInt64: ObjectSnapshot] = [:]
    return try related(object, relationship, cache: &cache)
  }

  /// `related(_:_:)`, each target read once per `cache`: an export that meets one object
  /// under many others (a label on 20,000 issues) reads and names its links once.
  func related(_ object: ObjectSnapshot, _ relationship: String, cache: inout [UInt64: ObjectSnapshot]) throws
    -> [ObjectSnapshot]
  {
    let resolved = try entity(object.entity)
    guard let relation = resolved.relationshipIndex[relationship] else {
      throw LedgerError.invalidQuery(
        entity: object.entity,
        "\(object.entity) has no relationship \"\(relationship)\" (it has: \(resolved.relationships.map(\.name).joined(separator: ", ")))"
      )
    }
    guard let state = try store.state(of: object.objectID) else { return [] }
    var result: [ObjectSnapshot] = []
    for id in state.links[relation.id] ?? [] {
      if let known = cache[id] {
        result.append(known)
      } else if let target = try store.state(of: id) {
        let snapshot = try snapshot(id, target)
        cache[id] = snapshot
        result.append(snapshot)
      }
    }
    return result
  }

  func snapshot(_ id: UInt64, _ state: ObjectState) throws -> ObjectSnapshot {
    var keys = TargetKeys(store: store, caches: false)
    return try snapshot(id, state, keys: &keys)
  }

  /// A snapshot whose relationship targets' keys come from `keys`: the state goes through
  /// the same builder as stored bytes do.
  func snapshot(_ id: UInt64, _ state: ObjectState, keys: inout TargetKeys) throws -> ObjectSnapshot {
    var builder = SnapshotBuilder(family: nil)
    builder.visit(state, resolved: store.model.resolved(state.entity))
    return try builder.snapshot(id, keys: &keys)
  }

  func key(of id: UInt64) throws -> ObjectKey {
    var keys = TargetKeys(store: store, caches: false)
    return try keys.key(of: id)
  }

  /// The current objects whose indexed attribute's entry lies from `start` (an encoded
  /// value, or a prefix of one) until `isPastEnd` says an entry's encoded value is beyond the
  /// range; in stored order. They are candidates: a value longer than an entry holds is cut
  /// there, so the caller checks each on its value (`QueryPlan.matches`).
  func indexedObjects(
    _ entity: ResolvedEntity, attribute: String, from start: [UInt8], isPastEnd: (ArraySlice<UInt8>) -> Bool
  ) throws -> [ObjectSnapshot] {
    let prefix = StoreKeys.indexPrefix(root: entity.rootID, attribute: attribute)
    var found: [ObjectSnapshot] = []
    try store.transaction.forEach(in: store.layout.indexes, prefix: prefix, from: prefix + start) { entry in
      guard entry.key.count >= prefix.count + 8 else { return true }
      if isPastEnd(entry.key[prefix.count..<(entry.key.count - 8)]) { return false }
      let id = UInt64(bigEndianBytes: entry.key.suffix(8))
      if let state = try store.state(of: id), entity.family.contains(state.entity) {
        found.append(try snapshot(id, state))
      }
      return true
    }
    return found.sorted { $0.objectID < $1.objectID }
  }

  /// The live objects in one stored link list of an object (a relationship id, or a hidden
  /// reverse id).
  func linked(from objectID: UInt64, storedAs relationshipID: UInt32) throws -> [ObjectSnapshot] {
    guard let state = try store.state(of: objectID) else { return [] }
    return try (state.links[relationshipID] ?? []).compactMap { id in
      guard let target = try store.state(of: id) else { return nil }
      return try snapshot(id, target)
    }
  }
}

/// The keys of relationship targets, read from the store; during a scan each one once
/// (many objects point to the same few: albums to their band).
struct TargetKeys {
  let store: ProjectionStore
  /// The slot of each target read so far; nil when the keys are not kept (a single read,
  /// which would pay for allocating the table and nothing else).
  private var slots: SlotTable?
  private var known: [ObjectKey] = []

  init(store: ProjectionStore, caches: Bool) {
    self.store = store
    self.slots = caches ? SlotTable() : nil
  }

  mutating func key(of id: UInt64) throws -> ObjectKey {
    if let slot = slots?[id] { return known[slot] }
    let key: ObjectKey
    if let header = try store.header(of: id) {
      key = ObjectKey(entity: header.entity, identity: header.identity)
    } else {
      key = ObjectKey(entity: "?", identity: [.integer(Int64(bitPattern: id))])
    }
    guard slots != nil else { return key }
    // Bounded, so that a scan of many objects with distinct targets stays small.
    if known.count >= 100_000 {
      slots = SlotTable()
      known.removeAll(keepingCapacity: true)
    }
    slots?.insert(id, slot: known.count)
    known.append(key)
    return key
  }
}
