/// A record written under one version of a model told in the terms of the next version:
/// entities, attributes and relationships renamed, what the next version removed left out,
/// values coerced to changed types. A removed sub-entity's objects become objects of its
/// nearest kept ancestor, so that no link is left pointing at nothing.
///
/// An entity whose identity changed takes each object's identity from its new identity
/// attributes: from the change itself when it creates or deletes the object, else from the
/// object as the projections hold it (`IdentityLookup`), since an identity never changes over an
/// object's life (a migration refuses a log where it would).
///
/// Only what can be told from the two models (and the objects' identities) is translated;
/// `MigrationPlan` refuses the rest (a changed parent, a relationship that became ordered, two
/// existing relationships made each other's inverse) before anything is written.
struct RecordTranslation: Sendable {
  /// The identity of an object as the projections hold it (deleted objects included), in the
  /// newest model's terms.
  typealias IdentityLookup = (UInt64) throws -> [AttributeValue]?

  /// Each attribute of an entity that carries on: its next name and, when its type changed,
  /// the next type.
  typealias AttributeMap = [String: (name: String, type: AttributeType?)]
  /// Per entity of `from` whose objects carry on: the next version's entity, and its
  /// attributes' map (nil when every attribute carries on under its name and type).
  private let entities: [String: (name: String, attributes: AttributeMap?)]
  /// Each map of `entities` as `translateAttributes` walks it.
  private let walks: [String: AttributeWalk]
  /// Each link id of `from` (hidden reverse ids included) that carries on, and its next id.
  private let linkIDs: [UInt32: UInt32]
  /// Next ids of relationships that were ordered and are not any more.
  private let unordered: Set<UInt32>
  /// Entities of `to` whose identity differs from their old one: their identity attributes.
  let reidentified: [String: [String]]
  /// Whether every record comes out as it went in.
  let isIdentity: Bool
  /// Whether every record comes out with the same changes, only its names told anew, its
  /// attributes' values coerced and those of removed attributes left out: every entity
  /// carries on under its number (renamed or not), and identities and links carry on. When,
  /// besides, no coercion makes two stored values one and no update changed only removed
  /// attributes (so that every change stays a change), the projections are what the old ones
  /// give with each stored state's attributes told the same way
  /// (`StateCoding.rewriteAttributes`, which checks the values; the migration looks for such
  /// updates), and need no replay.
  let rewritesAttributesOnly: Bool
  /// Root entities of `from` whose objects do not carry on: the next version removed them
  /// and every ancestor.
  let droppedRoots: [String]

  init(from: Model, to: Model) {
    let lineage = ModelLineage(from: from, to: to.entities)
    var entityNames: [String: String] = [:]
    for entity in from.entities {
      // A removed entity's objects carry on as its nearest kept ancestor's.
      var current: String? = entity.name
      while let name = current {
        if let next = lineage.newEntityName(of: name) {
          entityNames[entity.name] = next
          break
        }
        current = from.entity(named: name)?.parent
      }
    }
    var attributes: [String: [String: (name: String, type: AttributeType?)]] = [:]
    for (old, new) in entityNames {
      guard let oldEntity = from.resolved(old), let newEntity = to.resolved(new) else { continue }
      let predecessors = ModelLineage.oldAttributeNames(of: newEntity.attributes, among: oldEntity.attributes)
      var map: [String: (name: String, type: AttributeType?)] = [:]
      for (attribute, previous) in zip(newEntity.attributes, predecessors) {
        guard let previous, let oldAttribute = oldEntity.attributeIndex[previous] else { continue }
        map[previous] = (attribute.name, oldAttribute.type == attribute.type ? nil : attribute.type)
      }
      attributes[old] = map
    }
    var reidentified: [String: [String]] = [:]
    for (old, new) in entityNames where old == lineage.oldEntityName(of: new) {
      guard let oldEntity = from.resolved(old), let newEntity = to.resolved(new) else { continue }
      // A part that is a relationship keeps its place when the relationship carries over
      // (same number, so the same links).
      let carried = oldEntity.identity.map { part -> String? in
        if let attribute = attributes[old]?[part] { return attribute.name }
        guard let relationship = oldEntity.relationshipIndex[part] else { return nil }
        return newEntity.relationships.first { $0.id == relationship.id }?.name
      }
      if carried != newEntity.identity.map({ Optional($0) }) {
        reidentified[new] = newEntity.identity
      }
    }
    var linkIDs: [UInt32: UInt32] = [:]
    var unordered: Set<UInt32> = []
    // Link ids whose links the next version leaves out: a record's changes of them go.
    var dropsLinks = false
    for entity in from.resolvedInOrder {
      for relationship in entity.relationships where relationship.owner == entity.name {
        for id in [relationship.id, relationship.reverseID] {
          if let next = Self.nextLinkID(id, from: from, to: to) { linkIDs[id] = next } else { dropsLinks = true }
        }
        if relationship.isOrdered, let next = to.relationshipsByID[relationship.id], !next.isOrdered {
          unordered.insert(next.id)
        }
      }
    }
    var entities: [String: (name: String, attributes: AttributeMap?)] = [:]
    for (old, new) in entityNames {
      let map = attributes[old] ?? [:]
      let keepsAll =
        map.count == from.resolved(old)?.attributes.count
        && map.allSatisfy { $0.key == $0.value.name && $0.value.type == nil }
      entities[old] = (new, keepsAll ? nil : map)
    }
    self.entities = entities
    walks = entities.compactMapValues { $0.attributes.map(AttributeWalk.init) }
    droppedRoots = from.entities.filter { $0.parent == nil && entityNames[$0.name] == nil }.map(\.name)
    self.linkIDs = linkIDs
    self.unordered = unordered
    self.reidentified = reidentified
    // A stored state names its entity by number, which a renamed entity keeps.
    let keepsObjectsAndLinks =
      reidentified.isEmpty
      && from.entities.allSatisfy { entity in
        guard let next = entities[entity.name]?.name, let old = from.resolved(entity.name) else { return false }
        return to.resolved(next)?.id == old.id
      }
      && !dropsLinks && linkIDs.allSatisfy { $0.key == $0.value } && unordered.isEmpty
    isIdentity =
      keepsObjectsAndLinks && from.entities.allSatisfy { entities[$0.name]?.name == $0.name }
      && entities.values.allSatisfy { $0.attributes == nil }
    rewritesAttributesOnly = keepsObjectsAndLinks
  }

  /// How the stored states of `entities` (names in `to`) are rewritten
  /// (`StateCoding.rewriteAttributes`), by the number of the entity in `from` they continue
  /// (which they keep): attributes renamed, coerced and left out as records are, numbered as
  /// `to` numbers them.
  func attributeRewrites(of entities: Set<String>, from: Model, to: Model) -> [Int: StateCoding.AttributeRewrite] {
    var rewrites: [Int: StateCoding.AttributeRewrite] = [:]
    for (oldName, (nextName, map)) in self.entities where entities.contains(nextName) {
      guard let old = from.resolved(oldName), let next = to.resolved(nextName) else { continue }
      let targets = old.storedAttributeNames.map { attribute in
        // Without a map every attribute carries on; with one, an attribute it lacks is removed.
        let carried: (name: String, type: AttributeType?)? =
          if let map { map[attribute.name] } else { (attribute.name, nil) }
        guard let (name, type) = carried else {
          return StateCoding.AttributeRewrite.Target(name: attribute.name, isRemoved: true)
        }
        let before = old.attributeIndex[attribute.name]?.type
        // Values that the coercion might make one are checked, each as it is rewritten.
        let checked = type.flatMap { type in before.flatMap { Self.keepsValuesApart(from: $0, to: type) ? nil : $0 } }
        return StateCoding.AttributeRewrite.Target(
          name: name, number: next.attributeNumber(of: name), type: type, comesBackAs: checked)
      }
      rewrites[Int(old.id)] = StateCoding.AttributeRewrite(targets: targets)
    }
    return rewrites
  }

  /// Entities of `to` some of whose attributes are renamed, removed or coerced.
  var entitiesWithTranslatedAttributes: [String] { entities.values.filter { $0.attributes != nil }.map(\.name) }

  /// Whether coercing from `old` to `new` never makes two different values one: an update
  /// between them stays a change. Integers widen or narrow (a value out of range fails), and
  /// integers, flags and UUIDs become text that spells them one way each. For other type
  /// changes, a rewrite checks each value.
  static func keepsValuesApart(from old: AttributeType, to new: AttributeType) -> Bool {
    switch (old, new) {
    case (.int16, .int16), (.int16, .int32), (.int16, .int64), (.int32, .int16), (.int32, .int32), (.int32, .int64),
      (.int64, .int16), (.int64, .int32), (.int64, .int64):
      true
    case (.int16, .string), (.int32, .string), (.int64, .string), (.bool, .string), (.uuid, .string): true
    default: false
    }
  }

  /// The id a link stored under `id` in `from` is stored under in `to`, or nil when the
  /// relationship is gone: a kept relationship keeps its number; the other side of a kept
  /// relationship goes to its counterpart in `to`.
  static func nextLinkID(_ id: UInt32, from: Model, to: Model) -> UInt32? {
    if id & ResolvedRelationship.hiddenReverseBit == 0, to.relationshipsByID[id] != nil { return id }
    let forward = from.counterpart(of: id)
    if forward & ResolvedRelationship.hiddenReverseBit == 0, to.relationshipsByID[forward] != nil {
      return to.counterpart(of: forward)
    }
    return nil
  }

  /// Link ids of `from` that two carry on into one id of `to` (two relationships that both
  /// held links made each other's inverse): such a store cannot be translated.
  var mergedLinkIDs: [(UInt32, UInt32)] {
    var seen: [UInt32: UInt32] = [:]
    var merged: [(UInt32, UInt32)] = []
    for (old, new) in linkIDs.sorted(by: { $0.key < $1.key }) {
      if let first = seen[new] { merged.append((first, old)) } else { seen[new] = old }
    }
    return merged
  }

  /// `record` in the terms of `to`; its `modelVersion` still says which version it was written
  /// under. `identities` is needed when an entity's identity changed and a change neither
  /// creates nor deletes its object.
  ///
  /// The record is changed in place: a replay hands over each record it decoded, so that its
  /// lists are renamed and coerced where they lie rather than copied change by change.
  func translate(_ record: consuming ChangeRecord, identities: IdentityLookup?) throws -> ChangeRecord {
    guard !isIdentity else { return record }
    var changes = record.changes
    record.changes = []
    let batchID = record.batchID
    // A record's changes come in runs of one entity: comparing its name costs less than
    // hashing it.
    var last: (old: String, next: String, walk: AttributeWalk?)?
    try changes.keepChanging { change in
      if last?.old != change.entity {
        guard let next = entities[change.entity] else { return false }
        last = (change.entity, next.name, walks[change.entity])
      }
      guard let (_, entity, walk) = last else { return false }
      // An update whose every change was left out is no change (one that changed nothing but
      // the object's entity stays).
      let hadChanges = !(change.attributes.isEmpty && change.links.isEmpty)
      if let walk { try translateAttributes(of: &change, walk) }
      translateLinks(of: &change)
      change.entity = entity
      if let names = reidentified[entity] {
        change.identity = try Self.identity(names, of: change, batch: batchID, identities: identities)
      }
      return !(change.kind == .updated && hadChanges && change.attributes.isEmpty && change.links.isEmpty)
    }
    record.changes = changes
    return record
  }

  /// Renames `change`'s attributes, coerces their values to changed types and leaves out the
  /// ones the next version does not have, keeping them in name order; `change.entity` is
  /// still the old entity's name.
  private func translateAttributes(of change: inout ObjectChange, _ walk: AttributeWalk) throws {
    var attributes = change.attributes
    change.attributes = []
    var position = 0
    try attributes.keepChanging { attribute in
      // The placeholder mark is no property of any model version: it carries on as it is.
      guard attribute.name != AttributeList.placeholderMark else { return true }
      guard let found = walk.position(of: attribute.name, from: position) else { return false }
      position = found + 1
      let (name, type) = walk.targets[found]
      if let type {
        let old = try Self.coerce(attribute.old, to: type, change, attribute.name)
        let new = try Self.coerce(attribute.new, to: type, change, attribute.name)
        if old == new, change.kind == .updated { return false }
        (attribute.old, attribute.new) = (old, new)
      }
      if attribute.name != name { attribute.name = name }
      return true
    }
    // By index: a pair of whole changes would be copied to compare their names.
    for index in attributes.indices.dropFirst() where !(attributes[index - 1].name < attributes[index].name) {
      attributes.sort { $0.name < $1.name }
      break
    }
    change.attributes = attributes
  }

  /// Gives `change`'s links their next relationship ids, leaves out the relationships the next
  /// version does not have and the order of those that are no longer ordered, keeping them in
  /// id order.
  private func translateLinks(of change: inout ObjectChange) {
    guard !change.links.isEmpty else { return }
    var links = change.links
    change.links = []
    var last: UInt32?
    var inOrder = true
    links.keepChanging { link in
      guard let id = linkIDs[link.relationshipID] else { return false }
      if link.relationshipID != id { link.relationshipID = id }
      if unordered.contains(id), link.order != nil {
        link = LinkChange(relationshipID: id, added: link.added.sorted(), removed: link.removed.sorted())
      }
      if let last, last >= id { inOrder = false }
      last = id
      return true
    }
    if !inOrder { links.sort { $0.relationshipID < $1.relationshipID } }
    change.links = links
  }

  /// The identity of a changed object under identity attributes `names`: the values a
  /// creation gives or a deletion takes, else the object's as the projections hold it.
  private static func identity(
    _ names: [String], of change: ObjectChange, batch: UInt64, identities: IdentityLookup?
  ) throws -> [AttributeValue] {
    guard !names.isEmpty else { return [] }
    if change.kind == .updated {
      if let changed = change.attributes.first(where: { names.contains($0.name) }) {
        throw TranslationFailure(
          place: "\(change.entity).\(changed.name)",
          reason:
            "it changes from \(changed.old?.description ?? "nil") to \(changed.new?.description ?? "nil") in batch \(batch), but an identity never changes"
        )
      }
      guard let identity = try identities?(change.objectID), identity.count == names.count else {
        throw TranslationFailure(
          place: change.entity, reason: "object \(change.objectID) has no identity under the new model")
      }
      return identity
    }
    return try names.map { name in
      let attribute = change.attributes.first { $0.name == name }
      guard let value = change.kind == .created ? attribute?.new : attribute?.old else {
        throw TranslationFailure(
          place: "\(change.entity).\(name)",
          reason:
            "the \(change.entity) \(change.kind) in batch \(batch) (key \(change.identity.map(\.keyText).joined(separator: ", "))) has no value for it, and it becomes the identity"
        )
      }
      return value
    }
  }

  private static func coerce(_ value: AttributeValue?, to type: AttributeType, _ change: ObjectChange, _ name: String)
    throws(TranslationFailure) -> AttributeValue?
  {
    guard let value else { return nil }
    switch ValueCoercion.coerce(value, to: type) {
    case .success(let coerced): return coerced
    case .failure(let failure):
      throw TranslationFailure(
        place: "\(change.entity).\(name)", reason: "\(value) cannot become \(type.rawValue): \(failure.reason)")
    }
  }
}

/// An entity's attribute map as a list in name order, which a change's attributes (in name
/// order too) are looked up in by moving forward: a few comparisons of short names, where the
/// map would hash each name.
private struct AttributeWalk: Sendable {
  let names: [String]
  let targets: [(name: String, type: AttributeType?)]

  init(_ map: RecordTranslation.AttributeMap) {
    let sorted = map.sorted { $0.key < $1.key }
    names = sorted.map(\.key)
    targets = sorted.map(\.value)
  }

  /// Where `name` is, looked for from `start` on, then before it (for names out of order).
  func position(of name: String, from start: Int) -> Int? {
    var index = start
    while index < names.count {
      if names[index] == name { return index }
      index += 1
    }
    index = 0
    while index < min(start, names.count) {
      if names[index] == name { return index }
      index += 1
    }
    return nil
  }
}

/// Why a record cannot be told in a later model's terms: where, and why.
struct TranslationFailure: Error, Sendable {
  let place: String
  let reason: String
}

extension Array {
  /// Lets `body` change each element where it lies and keeps those it returns true for, in
  /// their order: the kept ones are swapped forward, so no element is copied.
  fileprivate mutating func keepChanging(_ body: (inout Element) throws -> Bool) rethrows {
    var kept = 0
    for index in indices {
      guard try body(&self[index]) else { continue }
      if kept != index { swapAt(kept, index) }
      kept += 1
    }
    removeLast(count - kept)
  }
}
