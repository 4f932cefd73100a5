import JSONLedgerSupport
import LMDB

/// One object change in the user's terms: the object's key, and its relationships by name with
/// the keys of the objects linked and unlinked (a record itself holds internal ids).
///
/// ```swift
/// let record = try ledger.record(2)
/// for described in try ledger.describe(record) {
///   print(described.key, described.attributes.map(\.name), described.links.map(\.relationship))
/// }
/// ```
public struct ChangeDescription: Sendable, Equatable {
  /// A relationship's change: what the batch linked and unlinked, and an ordered
  /// relationship's whole list after it.
  public struct Link: Sendable, Equatable {
    /// `Entity.relationship`; `Entity.relationship (reverse)` for the hidden reverse list of
    /// a relationship without an inverse; `types[1].type` for a link of a row the object owns.
    public var relationship: String
    /// The objects linked.
    public var added: [ObjectKey]
    /// The objects unlinked.
    public var removed: [ObjectKey]
    /// For an ordered relationship, the list after the batch (nil otherwise).
    public var order: [ObjectKey]?
  }

  /// The object.
  public var key: ObjectKey
  /// Created, updated or deleted.
  public var kind: ObjectChange.Kind
  /// The attributes changed, old → new. A row the object owns (`Relationship.owns`) shows
  /// here as the object's own fields, named by the owning relationship and the row's place
  /// in it: `types[1].slot`, nil before a row was added and after one was dropped.
  public var attributes: [AttributeChange]
  /// The relationships changed (a row the object owns named as in `attributes`).
  public var links: [Link]
  /// Whether the object is a placeholder after the change (before it, for a deletion): known
  /// only because something referred to it by key (`ObjectSnapshot.isPlaceholder`).
  public var isPlaceholder = false
  /// Whether the change delivered a placeholder: an import of its own entity gave it.
  public var deliversPlaceholder = false

  /// A description with these parts.
  public init(key: ObjectKey, kind: ObjectChange.Kind, attributes: [AttributeChange], links: [Link]) {
    self.key = key
    self.kind = kind
    self.attributes = attributes
    self.links = links
  }
}

extension Ledger {
  /// A change of a record, or of a diff, in the user's terms: keys and relationship names
  /// instead of internal ids. A linked object deleted since keeps its last key. Alone, a
  /// change of a row some object owns is told as that row's; `describe(_:from:to:)` tells it
  /// as its owner's fields.
  public func describe(_ change: ObjectChange) throws -> ChangeDescription {
    try readTransaction { txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      var keys = TargetKeys(store: store, caches: true)
      return try described(change, keys: &keys)
    }
  }

  /// `describe(_:)`, off the caller's executor.
  public func describe(_ change: ObjectChange) async throws -> ChangeDescription {
    try await runBriefly { try self.describe(change) }
  }

  /// The changes that took the store from batch `before` to batch `after` (a record's, from
  /// its batch less one to it; a diff's), in the user's terms, in their order, with a row an
  /// object owns told as that object's fields (`ChangeDescription.attributes`): its place is
  /// its position in the owner's list after the batch (before it, for a row dropped).
  /// `hidingReverseLinks`: leave out the hidden reverse lists of relationships without an
  /// inverse, which repeat the forward link from the other side.
  public func describe(
    _ changes: [ObjectChange], from before: UInt64, to after: UInt64, hidingReverseLinks: Bool = true
  ) throws -> [ChangeDescription] {
    try describe(changes, from: before, to: after, page: ChangePage.Request(), hidingReverseLinks: hidingReverseLinks)
      .changes
  }

  /// One page of what `describe(_:from:to:hidingReverseLinks:)` tells: the objects `page`'s
  /// entity and kind pick, from its offset, at most its limit of them, each with the rows it
  /// owns; with how many objects each entity has of each kind in all. Only the page's
  /// changes are described, so a page of a 100,000-change batch costs what 50 changes do.
  public func describe(
    _ changes: [ObjectChange], from before: UInt64, to after: UInt64, page: ChangePage.Request,
    hidingReverseLinks: Bool = true
  ) throws -> ChangePage {
    try readTransaction { txn in
      try describe(
        ChangeList(changes), from: before, to: after, page: page, hidingReverseLinks: hidingReverseLinks, txn)
    }
  }

  /// One page of batch `batchID`'s changes as `describe(_:from:to:page:hidingReverseLinks:)`
  /// tells its record's, with the batch's log entry. The record is read past once and only
  /// the page's changes are built: a page of a 100,000-change batch costs a walk over the
  /// record, not 100,000 changes.
  public func describe(batch batchID: UInt64, page: ChangePage.Request, hidingReverseLinks: Bool = true) throws
    -> BatchPage
  {
    try readTransaction { txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let header: ChangeRecord
      let changes: ChangeList
      if let outline = try readOutline(batchID, txn) {
        (header, changes) = (outline.header, ChangeList(outline, batchID: batchID))
      } else {
        let record = try readRecord(batchID, txn)
        (header, changes) = (record, ChangeList(record.changes))
      }
      let described = try describe(
        changes, from: batchID - 1, to: batchID, page: page, hidingReverseLinks: hidingReverseLinks, txn)
      let entry = LogEntry(record: header, revertedBy: try store.revert(of: batchID))
      return BatchPage(entry: entry, changes: described)
    }
  }

  /// `describe(batch:page:hidingReverseLinks:)`, off the caller's executor.
  public func describe(batch batchID: UInt64, page: ChangePage.Request, hidingReverseLinks: Bool = true)
    async throws -> BatchPage
  {
    try await runBriefly { try self.describe(batch: batchID, page: page, hidingReverseLinks: hidingReverseLinks) }
  }

  private func describe(
    _ changes: ChangeList, from before: UInt64, to after: UInt64, page: ChangePage.Request,
    hidingReverseLinks: Bool, _ txn: Transaction
  ) throws -> ChangePage {
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    var keys = TargetKeys(store: store, caches: true)
    // An object's change and the changes of the rows it owns, told as one.
    struct Unit {
      var root: UInt64
      /// The object's own change, by its place in `changes`.
      var change: Int?
      var entity: String
      var kind: ObjectChange.Kind
      var rows: [(ObjectChange, OwnedPlace)] = []
    }
    func built(_ index: Int) throws -> ObjectChange {
      let change = try changes.change(index)
      return hidingReverseLinks ? change.withoutHiddenLinks : change
    }
    var units: [Unit] = []
    units.reserveCapacity(changes.count)
    var positions: [UInt64: Int] = [:]
    positions.reserveCapacity(changes.count)
    var rows: [(ObjectChange, OwnedPlace)] = []
    let places = OwnedPlaces(model: model, before: store.with(asOf: before), after: store.with(asOf: after))
    for index in 0..<changes.count {
      let (objectID, entity, kind) = changes.outline(index)
      // Only a row some entity owns is built to be placed; any other change is counted as
      // its outline says.
      if places.mayBeOwned(entity) {
        let change = try built(index)
        if let place = try places.place(of: change) {
          rows.append((change, place))
          continue
        }
      }
      positions[objectID] = units.count
      units.append(Unit(root: objectID, change: index, entity: entity, kind: kind))
    }
    for (change, place) in rows {
      if let known = positions[place.root] {
        units[known].rows.append((change, place))
      } else {
        // An owner the batch changed only through its rows.
        positions[place.root] = units.count
        units.append(
          Unit(
            root: place.root, change: nil, entity: try keys.key(of: place.root).entity, kind: .updated,
            rows: [(change, place)]))
      }
    }
    struct CountKey: Hashable {
      var entity: String
      var kind: ObjectChange.Kind
    }
    var counts: [ChangePage.Count] = []
    var countPositions: [CountKey: Int] = [:]
    for unit in units {
      let name = CountKey(entity: unit.entity, kind: unit.kind)
      if let known = countPositions[name] {
        counts[known].count += 1
      } else {
        countPositions[name] = counts.count
        counts.append(ChangePage.Count(entity: unit.entity, kind: unit.kind, count: 1))
      }
    }
    let chosen = units.filter { unit in
      (page.entity == nil || unit.entity == page.entity) && (page.kind == nil || unit.kind == page.kind)
    }
    let start = min(max(page.offset, 0), chosen.count)
    let end = page.limit.map { min(chosen.count, start + max($0, 0)) } ?? chosen.count
    var described: [ChangeDescription] = []
    for unit in chosen[start..<end] {
      var owner =
        try unit.change.map { try self.described(try built($0), keys: &keys) }
        ?? ChangeDescription(key: try keys.key(of: unit.root), kind: .updated, attributes: [], links: [])
      for (change, place) in unit.rows {
        let row = try self.described(change, keys: &keys)
        for attribute in row.attributes {
          owner.attributes.append(
            AttributeChange(name: place.path + "." + attribute.name, old: attribute.old, new: attribute.new))
        }
        for var link in row.links where !place.ownerLinks.contains(link.relationship) {
          let name = link.relationship.split(separator: ".").last.map(String.init) ?? link.relationship
          link.relationship = place.path + "." + name
          owner.links.append(link)
        }
        // The rows are told field by field: the owner's list of them says nothing more.
        owner.links.removeAll { place.owningLinks.contains($0.relationship) }
      }
      // A row dropped and another added in its place are one field's change; a change left
      // with nothing to say (only a hidden link moved) is no change to tell.
      let told = owner.coalesced
      if told.kind != .updated || !told.isEmpty || told.deliversPlaceholder { described.append(told) }
    }
    return ChangePage(changes: described, matching: chosen.count, counts: counts)
  }

  /// `describe(_:from:to:page:hidingReverseLinks:)`, off the caller's executor.
  public func describe(
    _ changes: [ObjectChange], from before: UInt64, to after: UInt64, page: ChangePage.Request,
    hidingReverseLinks: Bool = true
  ) async throws -> ChangePage {
    try await runBriefly {
      try self.describe(changes, from: before, to: after, page: page, hidingReverseLinks: hidingReverseLinks)
    }
  }

  /// `describe(_:from:to:hidingReverseLinks:)`, off the caller's executor.
  public func describe(
    _ changes: [ObjectChange], from before: UInt64, to after: UInt64, hidingReverseLinks: Bool = true
  ) async throws -> [ChangeDescription] {
    try await runBriefly {
      try self.describe(changes, from: before, to: after, hidingReverseLinks: hidingReverseLinks)
    }
  }

  /// The changes of `record`, described together (`describe(_:from:to:hidingReverseLinks:)`).
  public func describe(_ record: ChangeRecord, hidingReverseLinks: Bool = true) throws -> [ChangeDescription] {
    try describe(
      record.changes, from: record.batchID - 1, to: record.batchID, hidingReverseLinks: hidingReverseLinks)
  }

  /// One change described alone, keys named through `keys`; the placeholder mark shown as
  /// the description's flags, not as an attribute.
  func described(_ change: ObjectChange, keys: inout TargetKeys) throws -> ChangeDescription {
    var attributes = change.attributes
    var mark: AttributeChange?
    if let index = attributes.firstIndex(where: { $0.name == AttributeList.placeholderMark }) {
      mark = attributes.remove(at: index)
    }
    var links: [ChangeDescription.Link] = []
    for link in change.links {
      links.append(
        ChangeDescription.Link(
          relationship: relationshipName(forID: link.relationshipID),
          added: try link.added.map { try keys.key(of: $0) },
          removed: try link.removed.map { try keys.key(of: $0) },
          order: try link.order.map { try $0.new.map { try keys.key(of: $0) } }))
    }
    var description = ChangeDescription(
      key: ObjectKey(entity: change.entity, identity: change.identity), kind: change.kind, attributes: attributes,
      links: links)
    if let mark {
      description.isPlaceholder = change.kind == .deleted ? mark.old != nil : mark.new != nil
      description.deliversPlaceholder = change.kind == .updated && mark.old != nil && mark.new == nil
    }
    return description
  }
}

extension ChangeDescription {
  /// Whether it names no attribute and no link.
  var isEmpty: Bool { attributes.isEmpty && links.isEmpty }

  /// The description with the changes of one attribute or link named twice made one: the
  /// first old value and the last new one (none when they are equal); what is both added and
  /// removed, neither.
  var coalesced: ChangeDescription {
    var copy = self
    var attributeIndex: [String: Int] = [:]
    var attributes: [AttributeChange] = []
    for attribute in self.attributes {
      if let index = attributeIndex[attribute.name] {
        attributes[index].new = attribute.new
      } else {
        attributeIndex[attribute.name] = attributes.count
        attributes.append(attribute)
      }
    }
    copy.attributes = attributes.filter { $0.old != $0.new }
    var linkIndex: [String: Int] = [:]
    var links: [Link] = []
    for link in self.links {
      if let index = linkIndex[link.relationship] {
        links[index].added += link.added
        links[index].removed += link.removed
        if link.order != nil { links[index].order = link.order }
      } else {
        linkIndex[link.relationship] = links.count
        links.append(link)
      }
    }
    copy.links = links.compactMap { link in
      var link = link
      let both = Set(link.added).intersection(link.removed)
      link.added.removeAll { both.contains($0) }
      link.removed.removeAll { both.contains($0) }
      return link.added.isEmpty && link.removed.isEmpty && link.order == nil ? nil : link
    }
    return copy
  }
}

/// Where a row some object owns sits: the object at the top of the chain of owners, the path
/// from it (`types[1]`, `stats[0].effects[2]`), and the names of the links that join the row
/// to its owner (left out of its description) and the owner to its rows.
struct OwnedPlace {
  let root: UInt64
  let path: String
  let ownerLinks: Set<String>
  let owningLinks: Set<String>
}

/// Finds the owner and the place of rows a relationship owns, in the store as of the batches
/// around a change.
struct OwnedPlaces {
  let model: Model
  let before: ProjectionStore
  let after: ProjectionStore

  /// The place of the row `change` changes, or nil when its entity is owned by nothing (or
  /// its owner is not found).
  /// Whether a row of `entity` may have a place: whether some relationship owns it.
  func mayBeOwned(_ entity: String) -> Bool { model.resolved(entity)?.isOwned ?? false }

  func place(of change: ObjectChange) throws -> OwnedPlace? {
    guard let entity = model.resolved(change.entity), entity.isOwned else { return nil }
    var path = ""
    var ownerLinks: Set<String> = []
    var owningLinks: Set<String> = []
    var current = change.objectID
    var store = change.kind == .deleted ? before : after
    var links = change.links
    var depth = 0
    while let currentEntity = try entityName(of: current, in: store, fallback: depth == 0 ? change.entity : nil)
      .flatMap({ model.resolved($0) }), currentEntity.isOwned, depth < NestingLimit.objects
    {
      guard let (owner, relationship) = try owner(of: current, entity: currentEntity, links: links, in: store)
      else {
        return depth == 0
          ? nil : OwnedPlace(root: current, path: path, ownerLinks: ownerLinks, owningLinks: owningLinks)
      }
      let list = try store.state(of: owner)?.links[relationship.id]?.array ?? []
      let position = list.firstIndex(of: current).map(String.init) ?? "?"
      let step = "\(relationship.name)[\(position)]"
      path = path.isEmpty ? step : step + "." + path
      if depth == 0 {
        ownerLinks.insert(Self.name(ofLink: relationship.reverseID, model: model))
        owningLinks.insert("\(relationship.owner).\(relationship.name)")
      }
      current = owner
      links = []
      // An owner above the row is read as of the batch: it outlives the row's deletion.
      store = after
      depth += 1
    }
    guard depth > 0 else { return nil }
    return OwnedPlace(root: current, path: path, ownerLinks: ownerLinks, owningLinks: owningLinks)
  }

  private func entityName(of id: UInt64, in store: ProjectionStore, fallback: String?) throws -> String? {
    if let fallback { return fallback }
    return try store.header(of: id)?.entity
  }

  /// The object owning `id` and the relationship it owns it through: from the change's own
  /// link lists (a row created or dropped), else from the row's state in `store`.
  private func owner(of id: UInt64, entity: ResolvedEntity, links: [LinkChange], in store: ProjectionStore) throws
    -> (UInt64, ResolvedRelationship)?
  {
    let owning = entity.owners.compactMap { name -> ResolvedRelationship? in
      let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
      guard parts.count == 2 else { return nil }
      return model.resolved(parts[0])?.relationshipIndex[parts[1]]
    }
    let state = try store.state(of: id)
    for relationship in owning {
      if let link = links.first(where: { $0.relationshipID == relationship.reverseID }),
        let owner = link.added.first ?? link.removed.first
      {
        return (owner, relationship)
      }
      if let owner = state?.links[relationship.reverseID]?.first { return (owner, relationship) }
    }
    return nil
  }

  static func name(ofLink id: UInt32, model: Model) -> String {
    let forward = id & ~ResolvedRelationship.hiddenReverseBit
    guard let relationship = model.relationshipsByID[forward] else { return "#\(id)" }
    let name = "\(relationship.owner).\(relationship.name)"
    return forward == id ? name : name + " (reverse)"
  }
}

/// One page of a batch's changes (`Ledger.describe(batch:page:hidingReverseLinks:)`) with the
/// batch's log entry.
public struct BatchPage: Sendable, Equatable {
  /// The batch: when, what kind, who and why, its counts, and the revert that undid it.
  public var entry: LogEntry
  /// The page of its changes.
  public var changes: ChangePage
}

/// The changes a page is chosen from: each one's object, entity and kind known without
/// building it, the change built on demand, from a record's outline or changes already built.
struct ChangeList {
  let count: Int
  let outline: (Int) -> (objectID: UInt64, entity: String, kind: ObjectChange.Kind)
  let change: (Int) throws -> ObjectChange

  init(_ changes: [ObjectChange]) {
    count = changes.count
    outline = { index in (changes[index].objectID, changes[index].entity, changes[index].kind) }
    change = { index in changes[index] }
  }

  init(_ record: RecordOutline, batchID: UInt64) {
    count = record.entries.count
    outline = { index in
      let entry = record.entries[index]
      return (entry.objectID, record.entityName(entry), entry.kind)
    }
    change = { index in
      do {
        return try record.change(record.entries[index])
      } catch {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "\(error)")
      }
    }
  }
}

/// A page of described changes (`Ledger.describe(_:from:to:page:hidingReverseLinks:)`).
public struct ChangePage: Sendable, Equatable {
  /// Which changes a page holds: those of one entity and one kind (nil: any), from `offset`,
  /// at most `limit` of them (nil: all). An object's rows count with it, as one.
  public struct Request: Sendable, Equatable {
    public var entity: String?
    public var kind: ObjectChange.Kind?
    public var offset: Int
    public var limit: Int?

    public init(entity: String? = nil, kind: ObjectChange.Kind? = nil, offset: Int = 0, limit: Int? = nil) {
      (self.entity, self.kind, self.offset, self.limit) = (entity, kind, offset, limit)
    }
  }

  /// How many objects of an entity a batch created, updated or deleted.
  public struct Count: Sendable, Equatable {
    public var entity: String
    public var kind: ObjectChange.Kind
    public var count: Int
  }

  /// The page's changes, described.
  public var changes: [ChangeDescription]
  /// The objects the request's entity and kind pick, over all pages.
  public var matching: Int
  /// Every object changed, by entity and kind, in the order first met.
  public var counts: [Count]
}
