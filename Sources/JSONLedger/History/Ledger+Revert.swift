import Foundation

extension Ledger {
  /// Appends a record that undoes batch `batchID`: objects it created are deleted, objects it
  /// deleted restored with their links, fields and links it changed set back.
  ///
  /// If a later batch changed the same field or link of the same object (or deleted or
  /// re-created it), the revert is refused with `RevertRefused` (a `LedgerError` with code `.revertConflicts`) listing every conflict,
  /// unless `force` is true: then the reverted values win and the result lists what they
  /// overrode; or unless `keepingLaterChanges` is true: then only the fields and links no
  /// later batch changed are reverted, an object a later batch deleted or re-created is left
  /// as it is, and the result lists what was kept (`RevertResult.kept`). Reverting a revert re-applies the original; reverting a batch twice is refused.
  public func revert(
    _ batchID: UInt64, force: Bool = false, keepingLaterChanges: Bool = false, message: String? = nil,
    author: String? = nil
  ) async throws -> RevertResult {
    let policy = try ConflictPolicy(force: force, keepingLaterChanges: keepingLaterChanges)
    return try await writer.run { try self.revertNow(batchID, policy: policy, message: message, author: author) }
  }

  /// `revert`, blocking the calling thread until the record is committed.
  public func revert(
    _ batchID: UInt64, force: Bool = false, keepingLaterChanges: Bool = false, message: String? = nil,
    author: String? = nil
  ) throws -> RevertResult {
    let policy = try ConflictPolicy(force: force, keepingLaterChanges: keepingLaterChanges)
    return try writer.sync { try revertNow(batchID, policy: policy, message: message, author: author) }
  }

  /// What a revert does with a field or link a later batch changed too.
  private enum ConflictPolicy {
    case refuse, overwrite, keepLater

    init(force: Bool, keepingLaterChanges: Bool) throws {
      switch (force, keepingLaterChanges) {
      case (true, true):
        throw LedgerError.invalidArgument("a revert either overwrites later changes or keeps them, not both")
      case (true, false): self = .overwrite
      case (false, true): self = .keepLater
      case (false, false): self = .refuse
      }
    }
  }

  private func revertNow(_ batchID: UInt64, policy: ConflictPolicy, message: String?, author: String?) throws
    -> RevertResult
  {
    let start = ContinuousClock.now
    do {
      let result = try revertRecord(batchID, policy: policy, message: message, author: author)
      announce(result.summary, since: start)
      return result
    } catch let refused as LedgerError where refused.code == .revertConflicts || refused.code == .alreadyReverted {
      logger.notice(
        "revert refused",
        metadata: [
          "store": "\(path)", "batch": "\(batchID)", "conflicts": "\(refused.conflicts.count)",
          "alreadyRevertedBy": "\(refused.alreadyRevertedBy.map(String.init) ?? "-")",
        ])
      throw refused
    }
  }

  private func revertRecord(_ batchID: UInt64, policy: ConflictPolicy, message: String?, author: String?) throws
    -> RevertResult
  {
    // Records never change once written, so the one read here is the one the write sees.
    let record = try self.record(batchID)
    guard record.kind != .checkpoint else {
      throw LedgerError.invalidArgument(
        "batch \(batchID) is the checkpoint compact left (the state then, not a change): it cannot be reverted")
    }
    guard record.kind != .migration else {
      throw LedgerError.invalidArgument(
        "batch \(batchID) is a migration of the model: it cannot be reverted; migrate to the earlier model instead")
    }
    try environment.reserve(freeBytes: Self.estimatedBytes(objects: record.changes.count))
    let result = try environment.write { txn -> RevertResult in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      for later in (batchID + 1)..<max(head + 1, batchID + 1) {
        let laterRecord = try readRecord(later, txn)
        if laterRecord.metadata.revertedBatchID == batchID, laterRecord.kind == .revert {
          // A revert that was itself reverted no longer counts.
          var undone = false
          for id in (later + 1)..<(head + 1) where try readRecord(id, txn).metadata.revertedBatchID == later {
            undone = true
          }
          if !undone { throw LedgerError.alreadyReverted(batchID: batchID, by: later) }
        }
      }
      let metadata = ChangeRecord.Metadata(
        message: message ?? "revert batch \(batchID)", author: author, revertedBatchID: batchID)
      if batchID == head {
        // Undoing the newest batch: nothing after it touched its objects, so its exact
        // inverse is the revert, with no conflicts to look for and nothing to resolve.
        let (changes, afterStates, statistics) = try inverse(of: record, store: store)
        let reverted = try appendNew(
          kind: .revert, metadata: metadata, statistics: statistics, changes: changes, txn, knownStates: afterStates)
        return RevertResult(summary: BatchSummary(record: reverted), overridden: [], kept: [])
      }
      let reader = SnapshotReader(store: store, transformers: transformers)
      var conflicts: [RevertConflict] = []
      // What later batches changed of each object: its existence, attributes, links.
      var laterObjects: Set<UInt64> = []
      var laterFields: [UInt64: Set<String>] = [:]
      var laterLinks: [UInt64: Set<UInt32>] = [:]
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
          for attribute in change.attributes where laterChange.attributes.contains(where: { $0.name == attribute.name })
          {
            laterFields[change.objectID, default: []].insert(attribute.name)
            conflicts.append(
              RevertConflict(
                object: key, field: attribute.name, setByBatch: .attribute(attribute.new),
                now: .attribute(now?.attributes[attribute.name]), changedBy: later))
          }
          for link in change.links where laterChange.links.contains(where: { link.conflicts(with: $0) }) {
            laterLinks[change.objectID, default: []].insert(link.relationshipID)
            conflicts.append(
              RevertConflict(
                object: key,
                // The relationship's own name; a hidden reverse link (no inverse) is qualified.
                field: model.relationshipsByID[link.relationshipID]?.name
                  ?? relationshipName(forID: link.relationshipID),
                setByBatch: try value(of: link, reader: reader),
                now: try value(of: now?.links[link.relationshipID] ?? [], as: link, reader: reader),
                changedBy: later))
          }
        }
        // Keeping later work: an object a later batch deleted or re-created stays as it is.
        if policy == .keepLater, laterObjects.contains(change.objectID) { continue }
        let keptFields = policy == .keepLater ? laterFields[change.objectID] ?? [] : []
        let keptLinks = policy == .keepLater ? laterLinks[change.objectID] ?? [] : []
        // The target: the current state with the batch's before-values put back.
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
          // A to-one is one value: its old target comes back whatever is linked now.
          let isToOne = model.relationshipsByID[link.relationshipID].map { !$0.isToMany } ?? false
          let list = isToOne ? link.removed : link.inverted.applied(to: state.links[link.relationshipID] ?? [])
          state.links[link.relationshipID] = list.isEmpty ? nil : list
        }
        targets[change.objectID] = .some(state)
      }
      if !conflicts.isEmpty, policy == .refuse {
        throw LedgerError.revertConflicts(batchID: batchID, conflicts: conflicts)
      }
      // Without conflicts the record holds both sides of every link it changed, so putting
      // its before-values back is already consistent; a forced revert, or one that keeps
      // later links, needs the repair.
      var graph = LinkGraph(objects: WorkingSet(model: model, source: store))
      graph.objects.seed(currentStates.sorted { $0.0 < $1.0 })
      try graph.restore(
        targets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, repairingLinks: !conflicts.isEmpty)
      let (changes, statistics) = graph.objects.finish(ignoredKeys: [])
      let reverted = try appendNew(
        kind: .revert, metadata: metadata, statistics: statistics, changes: changes, txn,
        knownStates: graph.objects.takeAfterStates())
      return RevertResult(
        summary: BatchSummary(record: reverted), overridden: policy == .overwrite ? conflicts : [],
        kept: policy == .keepLater ? conflicts : [])
    }
    return result
  }

  /// The changes that undo `record` when it is the newest batch, the state of each object
  /// after them, and their counts. A creation and a deletion list the whole object, so only
  /// updated objects are read.
  private func inverse(of record: ChangeRecord, store: ProjectionStore) throws -> (
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
  private func value(of link: LinkChange, reader: SnapshotReader) throws -> RevertConflict.Value {
    if let order = link.order { return .order(try keys(order.new, reader: reader)) }
    return .links(linked: try keys(link.added, reader: reader), unlinked: try keys(link.removed, reader: reader))
  }

  /// A current link list, as far as a batch's change of it goes: the whole list for an
  /// ordered relationship; for any other, which of the targets the batch touched are
  /// linked now and which are not.
  private func value(of list: [UInt64], as link: LinkChange, reader: SnapshotReader) throws -> RevertConflict.Value {
    if link.order != nil { return .order(try keys(list, reader: reader)) }
    let touched = (link.added + link.removed).sorted()
    let present = Set(list)
    return .links(
      linked: try keys(touched.filter(present.contains), reader: reader),
      unlinked: try keys(touched.filter { !present.contains($0) }, reader: reader))
  }

  private func keys(_ ids: [UInt64], reader: SnapshotReader) throws -> [ObjectKey] {
    try ids.map { try reader.key(of: $0) }
  }
}
