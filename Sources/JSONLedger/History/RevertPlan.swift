import Foundation
import JSONLedgerSupport
import LMDB

/// What a revert of one batch would do, worked out without writing: the later changes that
/// stand in the way, and the changes it would append. `Ledger.revertPlan(_:force:keepingLaterChanges:)`
/// gives one to show before a revert (the console's revert button); `revert` appends the plan it
/// makes in its own write transaction, so that what it checked is what it writes.
public struct RevertPlan: Sendable {
  /// The batch the plan undoes.
  public var batchID: UInt64
  /// The later changes to the same fields, links or objects: with neither `force` nor
  /// `keepingLaterChanges` they refuse the revert; with `force` the revert overrides them;
  /// keeping later changes, it leaves them as they are.
  public var conflicts: [RevertConflict] = []
  /// Set when the batch was already reverted (by this batch): a revert is refused.
  public var alreadyRevertedBy: UInt64?
  /// The changes the revert would append (empty when it is refused).
  public var changes: [ObjectChange] = []
  /// Their counts.
  public var statistics = ChangeRecord.Statistics()
  let policy: Ledger.ConflictPolicy
  var afterStates: [ObjectState?]? = nil

  init(
    batchID: UInt64, policy: Ledger.ConflictPolicy, conflicts: [RevertConflict] = [], alreadyRevertedBy: UInt64? = nil,
    changes: [ObjectChange] = [], statistics: ChangeRecord.Statistics = .init(), afterStates: [ObjectState?]? = nil
  ) {
    self.batchID = batchID
    self.policy = policy
    self.conflicts = conflicts
    self.alreadyRevertedBy = alreadyRevertedBy
    self.changes = changes
    self.statistics = statistics
    self.afterStates = afterStates
  }

  /// Whether a revert with these options would be refused.
  public var isRefused: Bool { alreadyRevertedBy != nil || (policy == .refuse && !conflicts.isEmpty) }
}

extension Ledger {
  /// What `revert(_:force:keepingLaterChanges:)` would do now, in a read transaction: nothing
  /// is written. A revert made afterwards makes its own plan, against the log as it is then.
  public func revertPlan(_ batchID: UInt64, force: Bool = false, keepingLaterChanges: Bool = false) throws
    -> RevertPlan
  {
    let policy = try ConflictPolicy(force: force, keepingLaterChanges: keepingLaterChanges)
    let record = try revertableRecord(batchID)
    return try readTransaction { txn in try revertPlan(of: record, policy: policy, txn) }
  }

  /// `revertPlan`, off the caller's thread.
  public func revertPlan(_ batchID: UInt64, force: Bool = false, keepingLaterChanges: Bool = false) async throws
    -> RevertPlan
  {
    try await runBriefly { try self.revertPlan(batchID, force: force, keepingLaterChanges: keepingLaterChanges) }
  }

  /// The plan of a revert of `record` against the store `txn` sees.
  func revertPlan(of record: ChangeRecord, policy: ConflictPolicy, _ txn: Transaction) throws -> RevertPlan {
    let batchID = record.batchID
    let model = model
    func isToOne(_ relationshipID: UInt32) -> Bool {
      model.relationshipsByID[relationshipID].map { !$0.isToMany } ?? false
    }
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    let head = try store.head()
    if let later = try store.revert(of: batchID) {
      return RevertPlan(batchID: batchID, policy: policy, alreadyRevertedBy: later)
    }
    if batchID == head {
      // Undoing the newest batch: nothing after it touched its objects, so its exact
      // inverse is the revert, with no conflicts to look for and nothing to resolve.
      let (changes, afterStates, statistics) = try inverse(of: record, store: store)
      return RevertPlan(
        batchID: batchID, policy: policy, changes: changes, statistics: statistics, afterStates: afterStates)
    }
    let reader = SnapshotReader(store: store, transformers: transformers)
    var conflicts: [RevertConflict] = []
    // What later batches changed of each object: its existence, attributes, links.
    var laterObjects: Set<UInt64> = []
    var laterFields: [UInt64: Set<String>] = [:]
    var laterLinks: [UInt64: Set<UInt32>] = [:]
    // The first later batch that changed each of those lists.
    var laterLinkBatches: [UInt64: [UInt32: UInt64]] = [:]
    var targets: [UInt64: ObjectState?] = [:]
    var currentStates: [(UInt64, ObjectState?)] = []
    currentStates.reserveCapacity(record.changes.count)
    for change in record.changes {
      let now = try store.state(of: change.objectID)
      currentStates.append((change.objectID, now))
      let key = ObjectKey(entity: change.entity, identity: change.identity)
      // Only a later batch can conflict: reverting the newest one needs no history scan.
      for later in try batchID < head ? store.batches(touching: change.objectID) : [] where later > batchID {
        guard let laterChange = try readRecord(later, txn).changes.first(where: { $0.objectID == change.objectID })
        else { continue }
        if laterChange.kind != .updated || change.kind != .updated {
          laterObjects.insert(change.objectID)
          conflicts.append(
            RevertConflict(
              object: key, field: "(object)", setByBatch: .exists(change.kind != .deleted), now: .exists(now != nil),
              changedBy: later))
          continue
        }
        for attribute in change.attributes where laterChange.attributes.contains(where: { $0.name == attribute.name }) {
          laterFields[change.objectID, default: []].insert(attribute.name)
          conflicts.append(
            RevertConflict(
              object: key, field: attribute.name, setByBatch: .attribute(attribute.new),
              now: .attribute(now?.attributes[attribute.name]), changedBy: later))
        }
        for link in change.links
        where laterChange.links.contains(where: { later in
          // A to-one is one value, as an ordered list is: any later change to it conflicts
          // (its old target comes back whatever is linked now, below).
          later.relationshipID == link.relationshipID && isToOne(link.relationshipID) || link.conflicts(with: later)
        }) {
          laterLinks[change.objectID, default: []].insert(link.relationshipID)
          if laterLinkBatches[change.objectID]?[link.relationshipID] == nil {
            laterLinkBatches[change.objectID, default: [:]][link.relationshipID] = later
          }
          conflicts.append(
            RevertConflict(
              object: key,
              // The relationship's own name; a hidden reverse link (no inverse) is qualified.
              field: model.relationshipsByID[link.relationshipID]?.name
                ?? relationshipName(forID: link.relationshipID),
              setByBatch: try value(of: link, reader: reader),
              now: try value(of: now?.links[link.relationshipID]?.array ?? [], as: link, reader: reader),
              changedBy: later))
        }
      }
    }
    // Keeping later work: an object the batch created that a later batch linked to anything
    // stays as it is now, links and all: deleting it would take it out of lists the revert
    // keeps, the lists of objects the batch never touched among them.
    if policy == .keepLater {
      for (change, (id, now)) in zip(record.changes, currentStates) where change.kind == .created {
        guard let now, !laterObjects.contains(id) else { continue }
        let created = change.createdState?.links ?? [:]
        let gained = now.links.first { relationshipID, targets in
          let had = created[relationshipID]?.array ?? []
          return targets.contains { !had.contains($0) }
        }
        guard let (relationshipID, targets) = gained else { continue }
        laterObjects.insert(id)
        let partner = targets.first { !(created[relationshipID]?.array ?? []).contains($0) } ?? id
        let changedBy = try store.batches(touching: partner).last { $0 > batchID } ?? head
        conflicts.append(
          RevertConflict(
            object: ObjectKey(entity: change.entity, identity: change.identity), field: "(object)",
            setByBatch: .exists(true), now: .exists(true), changedBy: changedBy))
      }
    }
    if policy == .keepLater, !laterLinks.isEmpty {
      let created = Dictionary(
        record.changes.lazy.filter { $0.kind == .created }.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
      for (owner, now) in currentStates {
        guard let relationships = laterLinks[owner], let now else { continue }
        for relationshipID in relationships.sorted() {
          for partner in now.links[relationshipID] ?? [] where !laterObjects.contains(partner) {
            guard let change = created[partner] else { continue }
            laterObjects.insert(partner)
            conflicts.append(
              RevertConflict(
                object: ObjectKey(entity: change.entity, identity: change.identity), field: "(object)",
                setByBatch: .exists(true), now: .exists(true),
                changedBy: laterLinkBatches[owner]?[relationshipID] ?? head))
          }
        }
      }
    }
    // An object kept as it is keeps every list it has: the link repair below leaves them.
    if policy == .keepLater {
      for (id, now) in currentStates where laterObjects.contains(id) {
        for (relationshipID, _) in now?.links ?? [:] { laterLinks[id, default: []].insert(relationshipID) }
      }
    }
    // The targets, once every object's kept fields and links are known: each object's current
    // state with the batch's before-values put back.
    for (change, (_, now)) in zip(record.changes, currentStates) {
      // Keeping later work: an object a later batch deleted or re-created stays as it is.
      if policy == .keepLater, laterObjects.contains(change.objectID) { continue }
      let keptFields = policy == .keepLater ? laterFields[change.objectID] ?? [] : []
      let keptLinks = policy == .keepLater ? laterLinks[change.objectID] ?? [] : []
      if change.kind == .created {
        targets[change.objectID] = .some(nil)
        continue
      }
      var state = now ?? ObjectState(entity: change.entity, identity: change.identity)
      if change.kind == .deleted { state.entity = change.entity }
      for attribute in change.attributes where !keptFields.contains(attribute.name) {
        state.attributes[attribute.name] = attribute.old
      }
      for link in change.links where !keptLinks.contains(link.relationshipID) {
        // A link whose other side a later batch set, and this revert keeps, is kept on this
        // side too: putting it back here would let the link repair undo the kept side.
        let counterpart = model.counterpart(of: link.relationshipID)
        let keptByPartner = { (partner: UInt64) in laterLinks[partner]?.contains(counterpart) ?? false }
        var restored = link
        if policy == .keepLater, link.order == nil {
          restored.added.removeAll(where: keptByPartner)
          restored.removed.removeAll(where: keptByPartner)
          if restored.added.isEmpty, restored.removed.isEmpty { continue }
        }
        // A to-one is one value: its old target comes back whatever is linked now.
        let list =
          isToOne(link.relationshipID)
          ? restored.removed : restored.inverted.applied(to: state.links[link.relationshipID]?.array ?? [])
        state.links[link.relationshipID] = list.isEmpty ? nil : LinkTargets(list)
      }
      targets[change.objectID] = .some(state)
    }
    if !conflicts.isEmpty, policy == .refuse {
      return RevertPlan(batchID: batchID, policy: policy, conflicts: conflicts)
    }
    // Without conflicts the record holds both sides of every link it changed, so putting
    // its before-values back is already consistent; a forced revert, or one that keeps
    // later links, needs the repair.
    var graph = LinkGraph(objects: WorkingSet(model: model, source: store))
    graph.objects.seed(currentStates.sorted { $0.0 < $1.0 })
    try graph.restore(
      targets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, repairingLinks: !conflicts.isEmpty,
      keeping: policy == .keepLater ? laterLinks : [:])
    let (changes, statistics) = graph.objects.finish(ignoredKeys: [])
    return RevertPlan(
      batchID: batchID, policy: policy, conflicts: conflicts, changes: changes, statistics: statistics,
      afterStates: graph.objects.takeAfterStates())
  }

  /// The changes that undo `record` when it is the newest batch, the state of each object
  /// after them, and their counts. A creation and a deletion list the whole object, so only
  /// updated objects are read.
  fileprivate func inverse(of record: ChangeRecord, store: ProjectionStore) throws -> (
    [ObjectChange], [ObjectState?], ChangeRecord.Statistics
  ) {
    var changes: [ObjectChange] = []
    var afterStates: [ObjectState?] = []
    var statistics = ChangeRecord.Statistics()
    changes.reserveCapacity(record.changes.count)
    afterStates.reserveCapacity(record.changes.count)
    for change in record.changes {
      let inverse = change.inverted
      switch inverse.kind {
      case .deleted:
        afterStates.append(nil)
        statistics.deleted += 1
      case .created:
        afterStates.append(inverse.createdState)
        statistics.created += 1
      case .updated:
        guard var state = try store.state(of: change.objectID) else {
          throw LedgerError.corruptState(
            "object \(change.objectID), updated by batch \(record.batchID), is missing from the current state")
        }
        state.apply(inverse)
        afterStates.append(state)
        statistics.updated += 1
      }
      changes.append(inverse)
    }
    return (changes, afterStates, statistics)
  }

  /// What a batch did to a link list, by keys: the whole list for an ordered relationship,
  /// what it linked (+) and unlinked (-) for any other.
  fileprivate func value(of link: LinkChange, reader: SnapshotReader) throws -> RevertConflict.Value {
    if let order = link.order { return .order(try keys(order.new, reader: reader)) }
    return .links(linked: try keys(link.added, reader: reader), unlinked: try keys(link.removed, reader: reader))
  }

  /// A current link list, as far as a batch's change of it goes: the whole list for an
  /// ordered relationship; for any other, which of the targets the batch touched are
  /// linked now and which are not.
  fileprivate func value(of list: [UInt64], as link: LinkChange, reader: SnapshotReader) throws -> RevertConflict.Value
  {
    if link.order != nil { return .order(try keys(list, reader: reader)) }
    let touched = (link.added + link.removed).sorted()
    let present = Set(list)
    return .links(
      linked: try keys(touched.filter(present.contains), reader: reader),
      unlinked: try keys(touched.filter { !present.contains($0) }, reader: reader))
  }

  fileprivate func keys(_ ids: [UInt64], reader: SnapshotReader) throws -> [ObjectKey] {
    try ids.map { try reader.key(of: $0) }
  }
}
