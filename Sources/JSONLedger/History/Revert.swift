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
          for link in change.links where laterChange.links.contains(where: { link.conflicts(with: $0) }) {
            conflicts.append(RevertConflict(
              object: key, field: relationshipName(forID: link.relationshipID),
              valueSetByBatch: try describe(link, reader: reader),
              valueNow: try describe(now?.links[link.relationshipID] ?? [], as: link, reader: reader),
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
        for link in change.links {
          // A to-one is one value: its old target comes back whatever is linked now.
          let isToOne = model.relationshipsByID[link.relationshipID].map { !$0.isToMany } ?? false
          let list = isToOne ? link.removed : link.inverted.applied(to: state.links[link.relationshipID] ?? [])
          state.links[link.relationshipID] = list.isEmpty ? nil : list
        }
        targets[change.objectID] = .some(state)
      }
      if !conflicts.isEmpty, !force { throw RevertRefused(batchID: batchID, conflicts: conflicts) }
      // Without conflicts the record holds both sides of every link it changed, so putting
      // its before-values back is already consistent; a forced revert needs the repair.
      let repaired = conflicts.isEmpty
        ? targets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } : try repairLinks(targets, current: Dictionary(currentStates) { first, _ in first }, store: store)
      var resolver = try BatchResolver(model: model, source: store, strict: false)
      resolver.seed(currentStates.sorted { $0.0 < $1.0 })
      let (changes, statistics) = try resolver.resolveTargets(repaired)
      let reverted = ChangeRecord(batchID: head + 1, time: Date(), kind: .revert, metadata: metadata, statistics: statistics, changes: changes)
      try append(reverted, txn, knownStates: resolver.takeAfterStates())
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
      try append(record, txn, knownStates: resolver.takeAfterStates())
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
        for link in inverse.links {
          let list = link.applied(to: state.links[link.relationshipID] ?? [])
          state.links[link.relationshipID] = list.isEmpty ? nil : list
        }
        afterStates.append(state)
        statistics.updated += 1
      }
      changes.append(inverse)
    }
    return (changes, afterStates, statistics)
  }

  /// What a batch did to a link list, by keys: the whole list for an ordered relationship,
  /// what it linked (+) and unlinked (-) for any other.
  private func describe(_ link: LinkChange, reader: SnapshotReader) throws -> String {
    if let order = link.order { return try keys(order.new, reader: reader) }
    return try describe(linked: link.added, unlinked: link.removed, reader: reader)
  }

  /// A current link list, as far as a batch's change of it goes: the whole list for an
  /// ordered relationship; for any other, which of the targets the batch touched are
  /// linked now (+) and which are not (-).
  private func describe(_ list: [UInt64], as link: LinkChange, reader: SnapshotReader) throws -> String {
    if link.order != nil { return try keys(list, reader: reader) }
    let touched = (link.added + link.removed).sorted()
    let present = Set(list)
    return try describe(linked: touched.filter(present.contains), unlinked: touched.filter { !present.contains($0) }, reader: reader)
  }

  private func describe(linked: [UInt64], unlinked: [UInt64], reader: SnapshotReader) throws -> String {
    [linked.isEmpty ? nil : "+ \(try keys(linked, reader: reader))", unlinked.isEmpty ? nil : "- \(try keys(unlinked, reader: reader))"]
      .compactMap { $0 }.joined(separator: " ")
  }

  private func keys(_ ids: [UInt64], reader: SnapshotReader) throws -> String {
    try ids.map { try reader.key(of: $0).description }.joined(separator: ", ")
  }

  /// Makes the target states consistent with each other and with the objects left as they
  /// are: every link a target drops is dropped on the other side too, links to objects that
  /// will not exist are dropped, and every link has its counterpart on the other side (a
  /// to-one counterpart that pointed elsewhere is moved, and that old partner unlinked).
  private func repairLinks(_ targets: [UInt64: ObjectState?], current: [UInt64: ObjectState?], store: ProjectionStore) throws -> [(UInt64, ObjectState?)] {
    var states = targets
    func state(_ id: UInt64) throws -> ObjectState? {
      if let known = states[id] { return known }
      let loaded = try store.state(of: id)
      states[id] = .some(loaded)
      return loaded
    }
    /// The relationship on the other side of `relationshipID`.
    func counterpart(_ relationshipID: UInt32) -> UInt32 {
      if relationshipID & ResolvedRelationship.hiddenReverseBit != 0 { return relationshipID & ~ResolvedRelationship.hiddenReverseBit }
      return model.relationshipsByID[relationshipID]?.reverseID ?? relationshipID
    }
    func shape(_ relationshipID: UInt32) -> (toMany: Bool, ordered: Bool) {
      guard let relationship = model.relationshipsByID[relationshipID] else { return (true, false) }
      return (relationship.isToMany, relationship.isOrdered)
    }
    func unlink(_ id: UInt64, from partner: UInt64, _ relationshipID: UInt32) throws {
      guard var other = try state(partner), let list = other.links[relationshipID], list.contains(id) else { return }
      let kept = list.filter { $0 != id }
      other.links[relationshipID] = kept.isEmpty ? nil : kept
      states[partner] = .some(other)
    }
    func link(_ id: UInt64, to partner: UInt64, _ relationshipID: UInt32) throws {
      guard var other = try state(partner) else { return }
      var list = other.links[relationshipID] ?? []
      if list.contains(id) { return }
      let (toMany, ordered) = shape(relationshipID)
      if !toMany {
        for previous in list { try unlink(partner, from: previous, counterpart(relationshipID)) }
        list = []
      }
      list.append(id)
      if !ordered { list.sort() }
      other.links[relationshipID] = list
      states[partner] = .some(other)
    }
    for id in targets.keys.sorted() {
      let target = try state(id)
      for (relationshipID, list) in (current[id] ?? nil)?.links.sorted(by: { $0.key < $1.key }) ?? [] {
        let staying = Set(target?.links[relationshipID] ?? [])
        for partner in list where !staying.contains(partner) { try unlink(id, from: partner, counterpart(relationshipID)) }
      }
      guard var repaired = target else { continue }
      for (relationshipID, list) in repaired.links.sorted(by: { $0.key < $1.key }) {
        var kept: [UInt64] = []
        for partner in list where try state(partner) != nil {
          kept.append(partner)
          try link(id, to: partner, counterpart(relationshipID))
        }
        repaired.links[relationshipID] = kept.isEmpty ? nil : kept
      }
      states[id] = .some(repaired)
    }
    return states.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }
}
