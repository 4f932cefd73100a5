import LMDB

/// One object read in place, inside a read transaction: what `View.withObject(_:key:_:)`
/// and `View.forEachObjectInPlace(_:_:)` lend their closure.
///
/// Nothing is decoded until it is asked for: `album["label"]` reads that one value from the
/// stored bytes and skips the rest, and `relatedKeys(_:)` reads the targets' keys without
/// reading the targets. It is non-copyable and lent, so it cannot leave the closure; what its
/// accessors return are copies that can (`snapshot()` copies the whole object).
///
/// ```swift
/// let label = try ledger.read { view in
///   try view.withObject("Album", key: "Tin Drum") { album in try album["label"] }
/// }
/// ```
public struct StoredObject: ~Copyable {
  let bytes: BorrowedBytes
  let declaration: ResolvedEntity?
  let identityStart: Int
  let store: ProjectionStore
  /// The scan's cache of target keys; nil for a single read.
  let targetKeys: TargetKeyCache?
  /// The concrete entity (a sub-entity's name when the object is one).
  public let entity: String
  /// The store's internal id (stable for the key).
  public let objectID: UInt64

  init(
    bytes: BorrowedBytes, objectID: UInt64, entity: String, declaration: ResolvedEntity?, identityStart: Int,
    store: ProjectionStore, targetKeys: TargetKeyCache?
  ) {
    self.bytes = bytes
    self.objectID = objectID
    self.entity = entity
    self.declaration = declaration
    self.identityStart = identityStart
    self.store = store
    self.targetKeys = targetKeys
  }

  /// The object's entity and key.
  public var key: ObjectKey {
    get throws { ObjectKey(entity: entity, identity: try decoding { () throws(DecodingFailure) in try identity() }) }
  }

  /// The value of the attribute `name`, or nil when it has none (or the entity has no such
  /// attribute).
  public subscript(name: String) -> AttributeValue? {
    get throws {
      // An attribute the model lacks is stored by its name.
      let number = declaration?.attributeNumber(of: name)
      return try decoding { () throws(DecodingFailure) in
        try StateCoding.attribute(numbered: number, named: name, of: bytes, from: identityStart)
      }
    }
  }

  /// The keys of the objects the relationship `relationship` points to, in its order; the
  /// targets' keys are read, not the targets.
  public func relatedKeys(_ relationship: String) throws -> [ObjectKey] {
    guard let relation = declaration?.relationshipIndex[relationship] else {
      throw LedgerError.invalidQuery(
        entity: entity,
        "\(entity) has no relationship \"\(relationship)\" (it has: \((declaration?.relationships ?? []).map(\.name).joined(separator: ", ")))"
      )
    }
    let targets = try decoding { () throws(DecodingFailure) in
      try StateCoding.linkList(relation.id, of: bytes, from: identityStart)
    }
    var keys: [ObjectKey] = []
    keys.reserveCapacity(targets.count)
    if let targetKeys {
      for target in targets { keys.append(try targetKeys.keys.key(of: target)) }
    } else {
      var single = TargetKeys(store: store, caches: false)
      for target in targets { keys.append(try single.key(of: target)) }
    }
    return keys
  }

  /// A copy of the whole object, which outlives the transaction.
  public func snapshot() throws -> ObjectSnapshot {
    var builder = SnapshotBuilder(family: nil)
    try decoding { () throws(DecodingFailure) in _ = try StateCoding.visit(bytes, model: store.model, &builder) }
    if let targetKeys { return try builder.snapshot(objectID, keys: &targetKeys.keys) }
    var single = TargetKeys(store: store, caches: false)
    return try builder.snapshot(objectID, keys: &single)
  }

  private func identity() throws(DecodingFailure) -> [AttributeValue] {
    try StateCoding.identity(of: bytes, from: identityStart)
  }

  private func decoding<Decoded>(_ decode: () throws(DecodingFailure) -> Decoded) throws -> Decoded {
    do { return try decode() } catch {
      throw LedgerError.corruptState("object \(objectID) does not decode (its current state): \(error)")
    }
  }
}

/// The target keys a scan shares among its objects.
final class TargetKeyCache {
  var keys: TargetKeys
  init(store: ProjectionStore) { keys = TargetKeys(store: store, caches: true) }
}
