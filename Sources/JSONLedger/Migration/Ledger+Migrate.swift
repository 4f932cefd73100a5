import Foundation
import JSONLedgerSupport
import LMDB

/// What `Ledger.migrate(at:to:)` did.
public struct MigrationReport: Sendable {
  /// The model version before and after (equal when there was nothing to do).
  public var fromVersion: UInt32
  public var toVersion: UInt32
  /// What differed, and how the store followed.
  public var plan: MigrationPlan
  /// The `migration` record's batch id; nil when there was nothing to do.
  public var batchID: UInt64?
  /// Records replayed under the new model (0 unless the log was replayed).
  public var replayedBatches: Int
}

extension Ledger {
  /// Whether opening a store whose model differs from the given one migrates it.
  public enum Migration: Sendable {
    /// A different model is an error that lists the differences (the default).
    case none
    /// The store is migrated to the given model (`Ledger.migrate(at:to:options:allowingRemovals:)`,
    /// removals of live objects not allowed), unless the change cannot be derived.
    case automatic
  }

  /// What migrating this store to `model` would do, without writing anything.
  public func migrationPlan(to model: Model) throws -> MigrationPlan {
    do { return try MigrationPlan(from: self.model, to: model) } catch { throw LedgerError.model(error) }
  }

  /// Migrates the store at `path` to `model` in one commit: readers, in this process or
  /// another, see the store before or after, never between.
  ///
  /// Additive changes are written in place; renames and type changes that keep values apart
  /// rewrite the stored states of the entities concerned; removals, other type changes and a
  /// new identity replay the log under the new model into fresh projections (`MigrationPlan`).
  /// The log keeps every batch with the model version it was written under, and a
  /// `migration` record marks the change.
  /// A change that cannot be derived throws `LedgerError.migrationRefused` listing why, and
  /// nothing is written. `Ledger` values opened before the migration throw
  /// `LedgerError.modelChanged`: open the store again.
  ///
  /// A model that removes entities whose objects are still live is refused (the objects
  /// would be gone from every view, and migrating back does not bring them back) unless
  /// `allowingRemovals` is true; `objectsRemoved(by:)` counts them beforehand.
  @discardableResult
  public static func migrate(
    at path: String, to model: Model, options: Options = Options(), allowingRemovals: Bool = false
  ) throws -> MigrationReport {
    let ledger = try open(at: path, options: options)
    defer { ledger.close() }
    return try ledger.migrate(to: model, allowingRemovals: allowingRemovals)
  }

  /// `migrate(at:to:options:allowingRemovals:)`, off the caller's executor.
  @discardableResult
  public static func migrate(
    at path: String, to model: Model, options: Options = Options(), allowingRemovals: Bool = false
  ) async throws -> MigrationReport {
    let ledger = try open(at: path, options: options)
    defer { ledger.close() }
    return try await runBlocking("JSONLedger.migrate") {
      try ledger.migrate(to: model, allowingRemovals: allowingRemovals)
    }
  }

  /// The live objects of each entity `plan` removes (`MigrationPlan.removedEntities`) that
  /// holds any, in the plan's order.
  public func objectsRemoved(by plan: MigrationPlan) throws -> [(entity: String, objects: Int)] {
    try readTransaction { txn in try objectsRemoved(by: plan, txn) }
  }

  private func objectsRemoved(by plan: MigrationPlan, _ txn: Transaction) throws -> [(entity: String, objects: Int)] {
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    return try plan.removedEntities.compactMap { name in
      guard let entity = model.resolved(name) else { return nil }
      var count = 0
      try store.forEachCurrentState(root: entity.rootID) { _, _ in
        count += 1
        return true
      }
      return count == 0 ? nil : (name, count)
    }
  }

  /// Migrates this ledger's store to `model` (`migrate(at:to:options:allowingRemovals:)`) and
  /// publishes the `migration` batch on `changes`. Afterwards this `Ledger` throws
  /// `LedgerError.modelChanged`: open the store again to read it under the new model.
  @discardableResult
  public func migrate(to model: Model, allowingRemovals: Bool = false) throws -> MigrationReport {
    do { try transformers.validate(model) } catch { throw LedgerError.model(error) }
    return try migrate(following: try migrationPlan(to: model), allowingRemovals: allowingRemovals)
  }

  /// `migrate(to:allowingRemovals:)` as `plan` says (a test may ask a rewrite to replay).
  func migrate(following plan: MigrationPlan, allowingRemovals: Bool) throws -> MigrationReport {
    guard plan.refusals.isEmpty else { throw LedgerError.migrationRefused(path: path, reasons: plan.refusals) }
    var report = MigrationReport(
      fromVersion: versions.current, toVersion: versions.current, plan: plan, batchID: nil, replayedBatches: 0)
    guard plan.method != .nothing else { return report }
    let next = versions.appending(plan.next)
    let start = ContinuousClock.now
    // A replay writes every projection anew while the old pages stay until the commit.
    let (summary, replayed) = try perform {
      Write(room: .wholeStore, announcing: \.0) { [self] txn -> (BatchSummary, Int) in
        let replayed = try follow(plan, to: next, allowingRemovals: allowingRemovals, txn)
        // Written under the next versions, which the store holds from here on.
        let summary = try appendNew(
          kind: .migration,
          metadata: ChangeRecord.Metadata(
            message: "migrate the model from version \(versions.current) to \(next.current) (\(plan.method.rawValue))"),
          statistics: ChangeRecord.Statistics(), changes: [], txn, under: next)
        return (summary, replayed)
      }
    }
    (report.batchID, report.replayedBatches, report.toVersion) = (summary.batchID, replayed, next.current)
    let elapsed = ContinuousClock.now - start
    logger.info(
      "migrated the model",
      metadata: [
        "store": "\(path)", "from": "\(report.fromVersion)", "to": "\(report.toVersion)",
        "method": "\(plan.method.rawValue)", "replayed": "\(report.replayedBatches)",
        "milliseconds": "\(elapsed.wholeMilliseconds)",
      ])
    return report
  }

  /// Takes the projections and the stored model from the current version to `next` as `plan`
  /// says, in `txn`: the part of a migration before its record, shared by `migrate(to:)` and
  /// a replica applying another machine's migration. Returns the records replayed.
  func follow(_ plan: MigrationPlan, to next: ModelVersions, allowingRemovals: Bool, _ txn: Transaction) throws -> Int {
    try checkModelVersion(txn)
    if !allowingRemovals {
      let removed = try objectsRemoved(by: plan, txn)
      guard removed.isEmpty else {
        throw LedgerError.migrationRefused(
          path: path,
          reasons: removed.map {
            ModelDifference(
              place: $0.entity,
              change:
                "removed, with \($0.objects) live object\($0.objects == 1 ? "" : "s"), which would be gone from every view; allow removals to migrate"
            )
          })
      }
    }
    var replayed = 0
    switch plan.method {
    case .replay: replayed = try replayLog(under: plan, txn)
    case .rewrite:
      // A value that cannot take its new type refuses the migration, and the replay names the
      // batch that wrote it; one that might have become another value (an update between them
      // would be no change) is for the replay to fold.
      do {
        try txn.nested { try rewriteInPlace(plan, $0) }
      } catch is NeedsReplay {
        replayed = try replayLog(under: plan, txn)
      }
    case .inPlace: try rewriteInPlace(plan, txn)
    case .nothing: break
    }
    try checkValues(plan, txn)
    try next.write(into: txn, in: layout.meta)
    return replayed
  }

  /// Rebuilds the projections from the log, each record told in the new model's terms; a
  /// value that cannot take its attribute's new type, or an identity that is missing, changes
  /// or is shared under a new identity, refuses the migration.
  private func replayLog(under plan: MigrationPlan, _ txn: Transaction) throws -> Int {
    let lookup = identities(txn, model: plan.next)
    // By new key: the object that has it, and the batch that created it.
    var owners: [[UInt8]: (id: UInt64, batch: UInt64)] = [:]
    var key: [UInt8] = []
    return try rebuildProjections(txn, model: plan.next) { record in
      let batchID = record.batchID
      do {
        let translated = try plan.translation.translate(consume record, identities: lookup)
        // Under a new identity, no two objects may share a key.
        for change in translated.changes where change.kind == .created && !change.identity.isEmpty {
          guard plan.translation.reidentified[change.entity] != nil, let entity = plan.next.resolved(change.entity)
          else { continue }
          OrderedEncoding.encodeIdentity(root: entity.rootID, change.identity, into: &key)
          if let owner = owners[key], owner.id != change.objectID {
            // Named by the keys they have now: their ids mean nothing to a user.
            let names = [(owner.id, owner.batch), (change.objectID, batchID)].map { id, batch in
              let created = try? txn.value(forKey: StoreKeys.batch(batch), in: layout.log).map {
                try Self.decodeRecord($0, batchID: batch, versions: versions, identities: lookup)
              }
              return (created ?? nil)?.changes.first { $0.objectID == id }
                .map { $0.identity.map(\.keyText).joined(separator: ", ") } ?? "object \(id)"
            }
            throw TranslationFailure(
              place: change.entity,
              reason:
                "two objects would share the key \(change.identity.map(\.keyText).joined(separator: ", ")): \(names[0]) and \(names[1])"
            )
          }
          owners[key] = (change.objectID, batchID)
        }
        return translated
      } catch let failure as TranslationFailure {
        throw LedgerError.migrationRefused(
          path: path,
          reasons: [ModelDifference(place: failure.place, change: "\(failure.reason) (batch \(batchID))")])
      }
    }
  }

  /// Writes the changes `plan` makes without replaying the log (`inPlace`, `rewrite`): the
  /// states and undo images of `rewrittenEntities`, and the indexes when they change. The
  /// projections' digest follows every entry rewritten, and is kept at the same head.
  private func rewriteInPlace(_ plan: MigrationPlan, _ txn: Transaction) throws {
    let extent = try ProjectionStore(transaction: txn, layout: layout, model: model).extent()
    var digest = try ProjectionDigest.continuing(txn, layout, at: extent)
    try rewriteAttributes(of: plan.rewrittenEntities, plan, txn, digest: &digest)
    if plan.changesIndexes { try rebuildIndexes(plan.next, txn, digest: &digest) }
    try ProjectionDigest.keep(digest, txn, layout, at: extent)
  }

  /// Rewrites the states and undo images of objects of `entities` (of `plan.next`) as
  /// `plan.next` writes them (`StateCoding.rewriteAttributes`), each where it lies, and
  /// removes the undo images of updates that changed only removed attributes
  /// (`FoldedUpdates`). Throws `NeedsReplay` when a value cannot take its attribute's new
  /// type, or does not come back from it as it was, or when such an update meets a list kept
  /// as a change.
  private func rewriteAttributes(
    of entities: Set<String>, _ plan: MigrationPlan, _ txn: Transaction, digest: inout ProjectionDigest?
  ) throws {
    let rewrites = plan.translation.attributeRewrites(of: entities, from: model, to: plan.next)
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    var writer = BinaryWriter(capacity: 1024)
    // Undo images are walked before the states, which their last images are compared with.
    var scratch = BinaryWriter(capacity: 1024)
    func currentState(_ objectID: UInt64) throws -> (original: [UInt8], rewritten: [UInt8])? {
      guard let original = try txn.value(forKey: StoreKeys.object(objectID), in: layout.state) else { return nil }
      let outcome = try store.decoding(objectID, at: nil) { () throws(DecodingFailure) in
        try StateCoding.rewriteAttributes(original, from: model, rewrites, into: &scratch)
      }
      switch outcome {
      case .unchanged: return (original, original)
      case .rewritten: return (original, scratch.bytes)
      case .needsReplay: throw NeedsReplay()
      }
    }
    for root in Set(entities.compactMap { plan.next.resolved($0)?.rootID }).sorted() {
      var folding = rewrites.values.contains { $0.removesAttributes } ? FoldedUpdates(rewrites: rewrites) : nil
      for part in [ProjectionDigest.Part.history, .state] {
        try txn.replaceEach(in: layout.database(of: part), prefix: StoreKeys.rootPrefix(root)) {
          key, value, replacement in
          let outcome = try store.decoding(
            key.bigEndianUInt64(at: 0), at: key.count == 16 ? key.bigEndianUInt64(at: 8) : nil
          ) { () throws(DecodingFailure) in
            try StateCoding.rewriteAttributes(value, from: model, rewrites, into: &writer)
          }
          if part == .history, folding != nil, outcome != .needsReplay {
            try folding?.see(
              key: key, original: value, rewritten: outcome == .rewritten ? writer.bytes : nil,
              currentState: currentState)
          }
          switch outcome {
          case .unchanged: return false
          case .needsReplay: throw NeedsReplay()
          case .rewritten:
            if digest != nil {
              key.withSpan { key in
                value.withSpan { digest?.remove(part, key: key, value: $0) }
                digest?.add(part, key: key, value: writer.bytes.span)
              }
            }
            writer.exchangeBytes(with: &replacement)
            return true
          }
        }
        guard part == .history, var found = folding else { continue }
        try found.finish(currentState: currentState)
        for image in found.folded {
          _ = try txn.delete(image.key, in: layout.history)
          digest?.remove(.history, key: image.key.span, value: image.bytes.span)
        }
        try register(found.registrations, txn, digest: &digest)
        folding = nil
      }
    }
  }

  /// Gives each object of `registrations` the payload fingerprint of the change its
  /// registration names in `keys` (`FoldedUpdates.Registration`), each record read once.
  private func register(
    _ registrations: [FoldedUpdates.Registration], _ txn: Transaction, digest: inout ProjectionDigest?
  ) throws {
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    var encoded: [UInt8] = []
    for (batch, objects) in Dictionary(grouping: registrations, by: \.batch).sorted(by: { $0.key < $1.key }) {
      // An undo image or a state's `since` names a batch of the log (a compacted store's
      // projections start at its checkpoint).
      guard let bytes = try txn.value(forKey: StoreKeys.batch(batch), in: layout.log) else {
        throw LedgerError.corruptState(
          "object \(objects[0].objectID) names batch \(batch), which the log does not hold")
      }
      let record = try Self.decodeRecord(bytes, batchID: batch, versions: versions)
      let wanted = Set(objects.map(\.objectID))
      var fingerprints: [UInt64: UInt64] = [:]
      for change in record.changes where wanted.contains(change.objectID) {
        fingerprints[change.objectID] = change.payloadFingerprint
      }
      for object in objects {
        guard let fingerprint = fingerprints[object.objectID] else {
          throw LedgerError.corruptState(
            "batch \(batch) does not change object \(object.objectID), as its history says")
        }
        let header = try store.decoding(object.objectID, at: nil) { () throws(DecodingFailure) in
          try StateCoding.decodeHeader(object.state, model: model)
        }
        guard let header, !header.identity.isEmpty, let entity = model.resolved(header.entity) else { continue }
        encoded.removeAll(keepingCapacity: true)
        OrderedEncoding.encodeIdentity(root: entity.rootID, header.identity, into: &encoded)
        let key = StoreKeys.identityKey(forEncoded: encoded)
        guard let old = try txn.value(forKey: key, in: layout.keys), old.count >= StoreKeys.registrationLength else {
          throw LedgerError.corruptState("object \(object.objectID) has no entry in keys")
        }
        var value = old
        value.replaceSubrange(8..<16, with: [UInt8](bigEndian: fingerprint))
        guard value != old else { continue }
        try txn.put(value, forKey: key, in: layout.keys)
        digest?.remove(.keys, key: key.span, value: old.span)
        digest?.add(.keys, key: key.span, value: value.span)
      }
    }
  }

  /// Fills `indexes` anew from the live objects, for the attributes `model` marks indexed.
  private func rebuildIndexes(_ model: Model, _ txn: Transaction, digest: inout ProjectionDigest?) throws {
    if digest != nil {
      try txn.forEachInPlace(in: layout.indexes, prefix: []) { key, value in
        digest?.remove(.indexes, key: key, value: value)
        return true
      }
    }
    try txn.removeAll(in: layout.indexes)
    let projector = Projector(transaction: txn, layout: layout, model: model)
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    for root in model.resolvedInOrder where root.rootName == root.name {
      guard root.family.contains(where: { model.resolved($0)?.hasIndexedAttributes ?? false }) else { continue }
      try store.forEachCurrentState(root: root.id) { id, bytes in
        let state = try store.decoding(id, at: nil) { () throws(DecodingFailure) in
          try StateCoding.decode(bytes, model: model)?.state
        }
        if let state { try projector.index(id, state, digest: &digest) }
        return true
      }
    }
  }

  /// Refuses the migration when a live object lacks an attribute that became required, or
  /// holds more than one link in a relationship that became to-one.
  private func checkValues(_ plan: MigrationPlan, _ txn: Transaction) throws {
    guard !plan.newlyRequired.isEmpty || !plan.newlyToOne.isEmpty else { return }
    let model = plan.next
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    var reasons: [ModelDifference] = []
    let entities = Set(plan.newlyRequired.map(\.entity) + plan.newlyToOne.map(\.entity))
    for root in model.resolvedInOrder where root.rootName == root.name && !Set(root.family).isDisjoint(with: entities) {
      try store.forEachCurrentState(root: root.id) { id, bytes in
        let decoded = try store.decoding(id, at: nil) { () throws(DecodingFailure) in
          try StateCoding.decode(bytes, model: model)?.state
        }
        guard let state = decoded else { return true }
        let key = state.identity.map(\.keyText).joined(separator: ", ")
        for (entity, attribute) in plan.newlyRequired where entity == state.entity && state.attributes[attribute] == nil
        {
          reasons.append(
            ModelDifference(
              place: "\(entity).\(attribute)", change: "it becomes required, but \(entity) \(key) has no value"))
        }
        for (entity, relationship) in plan.newlyToOne
        where entity == state.entity && (state.links[relationship.id]?.count ?? 0) > 1 {
          reasons.append(
            ModelDifference(
              place: "\(entity).\(relationship.name)",
              change:
                "it becomes to-one, but \(entity) \(key) links \(state.links[relationship.id]?.count ?? 0) objects"))
        }
        return reasons.count < 50
      }
    }
    if !reasons.isEmpty { throw LedgerError.migrationRefused(path: path, reasons: reasons) }
  }
}
