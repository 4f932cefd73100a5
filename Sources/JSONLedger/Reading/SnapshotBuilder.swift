/// Builds object snapshots straight from stored states, for scans and reads by key: no
/// intermediate `ObjectState`. One builder serves a whole scan, reusing its buffers.
struct SnapshotBuilder: StateVisitor {
  let readsAttributes = true
  /// The entities wanted (an entity and its sub-entities); an object of another is skipped.
  let family: [String]?
  private var name = ""
  private var entity: ResolvedEntity?
  private var identity: [AttributeValue] = []
  /// Link lists by relationship position in `entity`.
  private var lists: [[UInt64]?] = []
  /// Attribute values by position among `entity`'s stored attribute names.
  private var values: [AttributeValue?] = []
  private var valueCount = 0
  /// Attributes whose names the model lacks.
  private var others: [(String, AttributeValue)] = []
  /// Whether the object visited carries the placeholder mark (`AttributeList.placeholderMark`).
  private(set) var isPlaceholder = false
  private(set) var isSkipped = false
  /// The batch the last object visited began in.
  private(set) var since: UInt64 = 0
  /// Whether the last object visited keeps a link list as changes (an undo image), which
  /// this builder does not resolve.
  private(set) var hasDeltas = false

  init(family: [String]?) { self.family = family }

  mutating func visitHeader(entity name: String, resolved: ResolvedEntity?, identity: [AttributeValue], since: UInt64)
    -> Bool
  {
    self.since = since
    hasDeltas = false
    if let family, !family.contains(name) {
      isSkipped = true
      return false
    }
    isSkipped = false
    if self.entity !== resolved || self.name != name {
      self.entity = resolved
      self.name = name
      // Not `repeating:`, which costs as much as the rest of a small object's read here
      // (CONTRIBUTING.md, "Hot paths").
      lists = Array(repeatElement(nil, count: resolved?.relationships.count ?? 0))
      values = Array(repeatElement(nil, count: resolved?.storedAttributeNames.count ?? 0))
    } else {
      for index in lists.indices { lists[index] = nil }
      for index in values.indices { values[index] = nil }
    }
    self.identity = identity
    valueCount = 0
    isPlaceholder = false
    others.removeAll(keepingCapacity: true)
    return true
  }

  mutating func visitLinks(count: Int) {}

  mutating func visitList(_ relationshipID: UInt32, _ targets: [UInt64]) {
    // Hidden reverse lists are no relationship of the entity.
    guard let position = entity?.relationships.firstIndex(where: { $0.id == relationshipID }) else { return }
    lists[position] = targets
  }

  mutating func visitDelta(_ relationshipID: UInt32, chain: Int, _ change: LinkChange) { hasDeltas = true }

  mutating func visitAttributes(count: Int) {}

  mutating func visitAttribute(_ name: String, position: Int?, _ value: AttributeValue) {
    if let position {
      values[position] = value
      valueCount += 1
    } else if name == AttributeList.placeholderMark {
      isPlaceholder = true
    } else {
      others.append((name, value))
    }
  }

  /// Takes an object's state as if it were read from its stored bytes.
  mutating func visit(_ state: ObjectState, resolved: ResolvedEntity?) {
    guard visitHeader(entity: state.entity, resolved: resolved, identity: state.identity, since: 0) else { return }
    for (id, targets) in state.links { visitList(id, targets.array) }
    let positions = resolved?.storedAttributePositions ?? [:]
    for (name, value) in state.attributes { visitAttribute(name, position: positions[name], value) }
  }

  /// The snapshot of the object last visited, as object `id`; relationship targets named
  /// through `keys`.
  func snapshot(_ id: UInt64, keys: inout TargetKeys) throws -> ObjectSnapshot {
    let objectKey = ObjectKey(entity: name, identity: identity)
    guard let entity else {
      var snapshot = ObjectSnapshot(
        key: objectKey, attributes: Dictionary(others, uniquingKeysWith: { $1 }), relationships: [:], objectID: id,
        declaration: nil)
      snapshot.isPlaceholder = isPlaceholder
      return snapshot
    }
    var attributes: [String: AttributeValue]
    if valueCount == values.count, others.isEmpty {
      // Every attribute has a value: the dictionary takes the layout of the positions, and no
      // name is hashed.
      attributes = entity.storedAttributePositions.mapValues { values[$0] ?? .bool(false) }
    } else {
      attributes = Dictionary(minimumCapacity: valueCount + others.count)
      for (position, value) in values.enumerated() {
        if let value { attributes[entity.storedAttributeNames[position].name] = value }
      }
      for (name, value) in others { attributes[name] = value }
    }
    var relationships: [String: [ObjectKey]] = [:]
    if !entity.relationships.isEmpty {
      // One pass builds each list; then the dictionary takes the layout of the positions.
      var keyLists: [[ObjectKey]] = []
      keyLists.reserveCapacity(lists.count)
      for list in lists {
        var targets: [ObjectKey] = []
        targets.reserveCapacity(list?.count ?? 0)
        for target in list ?? [] { targets.append(try keys.key(of: target)) }
        keyLists.append(targets)
      }
      relationships = entity.relationshipPositions.mapValues { keyLists[$0] }
    }
    var snapshot = ObjectSnapshot(
      key: objectKey, attributes: attributes, relationships: relationships, objectID: id, declaration: entity)
    snapshot.isPlaceholder = isPlaceholder
    return snapshot
  }
}
