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
  // The references below are unowned and unsafe, as `bytes` is borrowed, and for the same
  // reason they stay valid: an object is lent (non-copyable, `borrowing`) to a closure that
  // runs inside the reader's call, which holds the transaction, the layout, the model and
  // its entities and the scan's cache until it returns, and the object cannot outlive it.
  // Held strongly, each cost a retain and a release per object read (RESULTS.md); with none
  // held, an object is made and dropped with no call at all.
  /// The entity, when the model has it.
  unowned(unsafe) let declaration: ResolvedEntity?
  unowned(unsafe) let transaction: Transaction
  unowned(unsafe) let layout: StoreLayout
  /// The scan's cache of target keys; nil for a single read.
  unowned(unsafe) let targetKeys: TargetKeyCache?
  let unretainedModel: Model.Unretained
  let asOf: UInt64?
  let identityStart: Int
  /// The store's internal id (stable for the key).
  public let objectID: UInt64

  init(
    bytes: BorrowedBytes, objectID: UInt64, declaration: ResolvedEntity?, identityStart: Int,
    store: borrowing ProjectionStore, targetKeys: TargetKeyCache?
  ) {
    self.bytes = bytes
    self.objectID = objectID
    self.declaration = declaration
    self.identityStart = identityStart
    self.transaction = store.transaction
    self.layout = store.layout
    self.unretainedModel = Model.Unretained(store.model)
    self.asOf = store.asOf
    self.targetKeys = targetKeys
  }

  /// The concrete entity (a sub-entity's name when the object is one).
  public var entity: String {
    if let declaration { return declaration.name }
    // An entity the model lacks is stored by its name, which the reader that lent this object
    // decoded already: it decodes again.
    return (try? StateCoding.entity(of: bytes, model: model).name) ?? ""
  }

  private var model: Model { unretainedModel.model }

  /// The store the object was read from, for the reads that reach past it (its targets' keys).
  private var store: ProjectionStore {
    ProjectionStore(transaction: transaction, layout: layout, model: model, asOf: asOf)
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

  /// Whether the object is a placeholder: known only because another object referred to it
  /// by key, until an import of its own entity delivers it (`ObjectSnapshot.isPlaceholder`).
  public var isPlaceholder: Bool {
    get throws { try self[AttributeList.placeholderMark] != nil }
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
    return try keys(of: targets)
  }

  /// A copy of the whole object, which outlives the transaction.
  public func snapshot() throws -> ObjectSnapshot {
    var builder = SnapshotBuilder(family: nil)
    try decoding { () throws(DecodingFailure) in _ = try StateCoding.visit(bytes, model: model, &builder) }
    if let targetKeys { return try builder.snapshot(objectID, keys: &targetKeys.keys) }
    var single = TargetKeys(store: store, caches: false)
    return try builder.snapshot(objectID, keys: &single)
  }

  /// Where each part of the state begins, for reading many of them (an export); nothing is
  /// decoded. False for an object of an entity the model lacks.
  func locateParts(into parts: inout StateParts) throws -> Bool {
    guard let declaration else { return false }
    try decoding { () throws(DecodingFailure) in
      try StateCoding.locateParts(of: bytes, entity: declaration, from: identityStart, into: &parts)
    }
    return true
  }

  /// The attribute value that starts at `start` (`locateParts`).
  func value(at start: Int) throws -> AttributeValue {
    try decoding { () throws(DecodingFailure) in
      try StateCoding.value(of: bytes, at: start, identityStart: identityStart)
    }
  }

  /// Calls `body` with the attribute value that starts at `start` (`locateParts`) as UTF-8
  /// text, read in place; nil when that value is no string.
  func withStringValue<Result>(at start: Int, _ body: (UTF8Span) -> Result) throws -> Result? {
    try decoding { () throws(DecodingFailure) -> Result? in
      try withString(at: try StateCoding.valueStart(of: bytes, at: start, identityStart: identityStart), body)
    }
  }

  /// Calls `body` with the object's identity read in place as UTF-8 text, when it is one
  /// string; nil for another identity.
  func withSoleStringIdentity<Result>(_ body: (UTF8Span) -> Result) throws -> Result? {
    try decoding { () throws(DecodingFailure) -> Result? in
      var reader = ByteReader(bytes, position: identityStart)
      guard try reader.readCount() == 1 else { return nil }
      return try withString(at: reader.position, body)
    }
  }

  /// Calls `body` with the stored value at `position` as UTF-8 text, read in place; nil when
  /// that value is no string.
  private func withString<Result>(at position: Int, _ body: (UTF8Span) -> Result) throws(DecodingFailure)
    -> Result?
  {
    var reader = ByteReader(bytes, position: position)
    guard reader.nextByte == 1 else { return nil }
    _ = try reader.readByte()
    let count = try reader.readCount()
    let start = reader.position
    try reader.skip(count)
    guard let result = bytes.withUTF8(start..<start + count, body) else {
      throw DecodingFailure(reason: "invalid UTF-8 at byte \(start)")
    }
    return result
  }

  /// Calls `body` with each id of the link list that starts at `start` (`locateParts`), in
  /// its order.
  func forEachTarget(ofListAt start: Int, _ body: (UInt64) throws -> Void) throws {
    var reader = ByteReader(bytes, position: start)
    var remaining = try decoding { () throws(DecodingFailure) in try reader.readCompactIDCount() }
    var previous: UInt64?
    while let id = try decoding({ () throws(DecodingFailure) in
      try reader.readCompactID(after: previous, remaining: &remaining)
    }) {
      try body(id)
      previous = id
    }
  }

  private func keys(of targets: [UInt64]) throws -> [ObjectKey] {
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

  private func identity() throws(DecodingFailure) -> [AttributeValue] {
    try StateCoding.identity(of: bytes, from: identityStart)
  }

  private func decoding<Decoded>(_ decode: () throws(DecodingFailure) -> Decoded) throws -> Decoded {
    do { return try decode() } catch {
      throw LedgerError.corruptState("object \(objectID) does not decode (\(store.statePlace)): \(error)")
    }
  }
}

/// The target keys a scan shares among its objects.
final class TargetKeyCache {
  // Unchecked: the runtime's check of each access cost 3.7% of reading an entity with one
  // relationship (RESULTS.md), and no two accesses can overlap. A scan and its objects run on
  // the thread of its transaction (a view is not `Sendable`), and the one access, a key read
  // by `TargetKeys.key(of:)`, calls nothing that reaches this cache again.
  @exclusivity(unchecked) var keys: TargetKeys
  init(store: ProjectionStore) { keys = TargetKeys(store: store, caches: true) }
}
