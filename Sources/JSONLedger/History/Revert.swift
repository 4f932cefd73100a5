import Foundation

/// A later change that a revert would overwrite.
public struct RevertConflict: Sendable, Equatable, CustomStringConvertible {
  /// The object.
  public var object: ObjectKey
  /// The attribute or relationship (`albums`), or `(object)` when the object itself was
  /// deleted or re-created later.
  public var field: String
  /// What the reverted batch set it to.
  public var valueSetByBatch: String
  /// What it is now.
  public var valueNow: String
  /// The later batch that changed it.
  public var changedBy: UInt64

  public var description: String {
    "\(object) \(field): batch set \(valueSetByBatch), now \(valueNow) (changed by batch \(changedBy))"
  }
}

/// The outcome of `Ledger.revert`.
public struct RevertResult: Sendable, Equatable {
  /// The new record's summary.
  public var summary: BatchSummary
  /// The later changes a forced revert overwrote (empty when nothing conflicted).
  public var overridden: [RevertConflict]
}

/// A revert refused: the batch was changed again later, or was already reverted.
public struct RevertRefused: Error, Sendable, CustomStringConvertible {
  /// The batch id.
  public var batchID: UInt64
  /// The later changes that stand in the way.
  public var conflicts: [RevertConflict]
  /// Set when the batch was already reverted (by this batch).
  public var alreadyRevertedBy: UInt64?

  public var description: String {
    if let by = alreadyRevertedBy { return "batch \(batchID) was already reverted by batch \(by)" }
    return (["cannot revert batch \(batchID): \(conflicts.count) later change\(conflicts.count == 1 ? "" : "s") conflict (use --force to revert anyway):"]
      + conflicts.map { "  \($0)" }).joined(separator: "\n")
  }
}

extension Ledger {
  /// Appends a record that undoes batch `batchID`: objects it created are deleted, objects it
  /// deleted restored with their links, fields and links it changed set back.
  ///
  /// If a later batch changed the same field or link of the same object (or deleted or
  /// re-created it), the revert is refused with `RevertRefused` listing every conflict,
  /// unless `force` is true: then the reverted values win and the result lists what they
  /// overrode. Reverting a revert re-applies the original; reverting a batch twice is refused.
  public func revert(_ batchID: UInt64, force: Bool = false, message: String? = nil, author: String? = nil) async throws -> RevertResult {
    try await onWriter { try self.revertNow(batchID, force: force, message: message, author: author) }
  }

  /// Appends one record that makes the current state equal to the state after batch
  /// `batchID`. The log keeps everything in between.
  public func rewind(to batchID: UInt64, message: String? = nil, author: String? = nil) async throws -> BatchSummary {
    try await onWriter { try self.rewindNow(to: batchID, message: message, author: author) }
  }

  private func revertNow(_ batchID: UInt64, force: Bool, message: String?, author: String?) throws -> RevertResult {
    // Records never change once written, so the one read here is the one the write sees.
    let record = try self.record(batchID)
    try environment.reserve(freeBytes: Self.estimatedBytes(objects: record.changes.count))
    let result = try environment.write { txn -> RevertResult in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      for later in (batchID + 1)..<max(head + 1, batchID + 1) {
        let laterRecord = try readRecord(later, txn)
        if laterRecord.metadata.revertedBatchID == batchID, laterRecord.kind == .revert {
          // A revert that was itself reverted no longer counts.
          var undone = false
          for id in (later + 1)..<(head + 1) where try readRecord(id, txn).metadata.revertedBatchID == later { undone = true }
          if !undone { throw RevertRefused(batchID: batchID, conflicts: [], alreadyRevertedBy: later) }
        }
      }
      let metadata = ChangeRecord.Metadata(message: message ?? "revert batch \(batchID)", author: author, revertedBatchID: batchID)
      if batchID == head {
        // Undoing the newest batch: nothing after it touched its objects, so its exact
        // inverse is the revert, with no conflicts to look for and nothing to resolve.
        let (changes, afterStates, statistics) = try inverse(of: record, store: store)
        let reverted = ChangeRecord(batchID: head + 1, time: Date(), kind: .revert, metadata: metadata, statistics: statistics, changes: changes)
        try append(reverted, txn, knownStates: afterStates)
        return RevertResult(summary: BatchSummary(record: reverted), overridden: [])
      }
      let reader = SnapshotReader(store: store, transformers: transformers)
      var conflicts: [RevertConflict] = []
      var targets: [UInt64: ObjectState?] = [:]
      var currentStates: [(UInt64, ObjectState?)] = []
      currentStates.reserveCapacity(record.changes.count)
      for change in record.changes {
        let now = try store.state(of: change.objectID)
        currentStates.append((change.objectID, now))
        let key = ObjectKey(entity: change.entity, identity: change.identity)
        // Only a later batch can conflict: reverting the newest one needs no history scan.
        for later in try batchID < head ? store.batches(touching: change.objectID) : [] where later > batchID {
          guard let laterChange = try readRecord(later, txn).changes.first(where: { $0.objectID == change.objectID }) else { continue }
          if laterChange.kind != .updated || change.kind != .updated {
            conflicts.append(RevertConflict(
              object: key, field: "(object)", valueSetByBatch: change.kind == .deleted ? "deleted" : "present",
              valueNow: now == nil ? "deleted" : "present", changedBy: later))
            continue
          }
          for attribute in change.attributes where laterChange.attributes.contains(where: { $0.name == attribute.name }) {
            conflicts.append(RevertConflict(
              object: key, field: attribute.name, valueSetByBatch: attribute.new?.description ?? "nil",
              valueNow: now?.attributes[attribute.name]?.description ?? "nil", changedBy: later))
          }
          for link in change.links where laterChange.links.contains(where: { $0.relationshipID == link.relationshipID }) {
            conflicts.append(RevertConflict(
              object: key, field: relationshipName(forID: link.relationshipID),
              valueSetByBatch: try link.new.map { try reader.key(of: $0).description }.joined(separator: ", "),
              valueNow: try (now?.links[link.relationshipID] ?? []).map { try reader.key(of: $0).description }.joined(separator: ", "),
              changedBy: later))
          }
        }
        // The target: the current state with the batch's before-values put back.
        if change.kind == .created {
          targets[change.objectID] = .some(nil)
          continue
        }
        var state = now ?? ObjectState(entity: change.entity, identity: change.identity)
        if change.kind == .deleted { state.entity = change.entity }
        for attribute in change.attributes { state.attributes[attribute.name] = attribute.old }
        for link in change.links { state.links[link.relationshipID] = link.old.isEmpty ? nil : link.old }
        targets[change.objectID] = .some(state)
      }
      if !conflicts.isEmpty, !force { throw RevertRefused(batchID: batchID, conflicts: conflicts) }
      // Without conflicts the record holds both sides of every link it changed, so putting
      // its before-values back is already consistent; a forced revert needs the repair.
      let repaired = conflicts.isEmpty
        ? targets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } : try repairLinks(targets, store: store)
      var resolver = try BatchResolver(model: model, source: store, strict: false)
      resolver.seed(currentStates.sorted { $0.0 < $1.0 })
      let (changes, statistics) = try resolver.resolveTargets(repaired)
      let reverted = ChangeRecord(batchID: head + 1, time: Date(), kind: .revert, metadata: metadata, statistics: statistics, changes: changes)
      try append(reverted, txn, knownStates: resolver.afterStates)
      return RevertResult(summary: BatchSummary(record: reverted), overridden: conflicts)
    }
    publish(result.summary)
    return result
  }

  private func rewindNow(to batchID: UInt64, message: String?, author: String?) throws -> BatchSummary {
    let summary = try environment.write { txn -> BatchSummary in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let head = try store.head()
      guard batchID <= head else { throw LedgerError.batchNotFound(batchID, head: head) }
      var targets: [UInt64: ObjectState?] = [:]
      if batchID < head {
        for later in (batchID + 1)...head {
          for change in try readRecord(later, txn).changes where targets[change.objectID] == nil {
            targets[change.objectID] = .some(batchID == 0 ? nil : try store.with(asOf: batchID).state(of: change.objectID))
          }
        }
      }
      var resolver = try BatchResolver(model: model, source: store, strict: false)
      let (changes, statistics) = try resolver.resolveTargets(targets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
      let record = ChangeRecord(
        batchID: head + 1, time: Date(), kind: .rewind,
        metadata: .init(message: message ?? "rewind to batch \(batchID)", author: author),
        statistics: statistics, changes: changes)
      try append(record, txn, knownStates: resolver.afterStates)
      return BatchSummary(record: record)
    }
    publish(summary)
    return summary
  }

  /// The changes that undo `record` when it is the newest batch, the state of each object
  /// after them, and their counts. A creation and a deletion list the whole object, so only
  /// updated objects are read.
  private func inverse(of record: ChangeRecord, store: ProjectionStore) throws -> ([ObjectChange], [ObjectState?], ChangeRecord.Statistics) {
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
          throw LedgerError.storage("object \(change.objectID), updated by batch \(record.batchID), is missing from the current state")
        }
        for attribute in inverse.attributes { state.attributes[attribute.name] = attribute.new }
        for link in inverse.links { state.links[link.relationshipID] = link.new.isEmpty ? nil : link.new }
        afterStates.append(state)
        statistics.updated += 1
      }
      changes.append(inverse)
    }
    return (changes, afterStates, statistics)
  }

  /// Makes the target states consistent with each other and with the objects left as they
  /// are: links to objects that will not exist are dropped, and every link has its
  /// counterpart on the other side.
  private func repairLinks(_ targets: [UInt64: ObjectState?], store: ProjectionStore) throws -> [(UInt64, ObjectState?)] {
    var states = targets
    func state(_ id: UInt64) throws -> ObjectState? {
      if let known = states[id] { return known }
      let loaded = try store.state(of: id)
      states[id] = .some(loaded)
      return loaded
    }
    func counterpart(_ relationshipID: UInt32) -> (id: UInt32, toMany: Bool, ordered: Bool) {
      if relationshipID & ResolvedRelationship.hiddenReverseBit != 0 {
        return (relationshipID & ~ResolvedRelationship.hiddenReverseBit, model.relationshipsByID[relationshipID & ~ResolvedRelationship.hiddenReverseBit]?.isToMany ?? true,
          model.relationshipsByID[relationshipID & ~ResolvedRelationship.hiddenReverseBit]?.isOrdered ?? false)
      }
      let reverse = model.relationshipsByID[relationshipID]?.reverseID ?? relationshipID
      let spec = model.relationshipsByID[reverse]
      return (reverse, spec?.isToMany ?? true, spec?.isOrdered ?? false)
    }
    for id in targets.keys.sorted() {
      guard var current = try state(id) else { continue }
      for (relationshipID, list) in current.links.sorted(by: { $0.key < $1.key }) {
        var kept: [UInt64] = []
        for target in list {
          guard var other = try state(target) else { continue }
          kept.append(target)
          let back = counterpart(relationshipID)
          var otherList = other.links[back.id] ?? []
          if !otherList.contains(id) {
            if !back.toMany { otherList = [] }
            otherList.append(id)
            if !back.ordered { otherList.sort() }
            other.links[back.id] = otherList
            states[target] = .some(other)
          }
        }
        current.links[relationshipID] = kept.isEmpty ? nil : kept
      }
      states[id] = .some(current)
    }
    return states.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }
}
