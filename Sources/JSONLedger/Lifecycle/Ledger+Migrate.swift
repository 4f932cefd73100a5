import Foundation
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
  /// Records replayed under the new model (0 in place).
  public var replayedBatches: Int
}

extension Ledger {
  /// Whether opening a store whose model differs from the given one migrates it.
  public enum Migration: Sendable {
    /// A different model is an error that lists the differences (the default).
    case none
    /// The store is migrated to the given model (`Ledger.migrate(at:to:options:)`), unless the
    /// change cannot be derived.
    case automatic
  }

  /// What migrating this store to `model` would do, without writing anything.
  public func migrationPlan(to model: Model) throws -> MigrationPlan {
    do { return try MigrationPlan(from: self.model, to: model) } catch { throw LedgerError.model(error) }
  }

  /// Migrates the store at `path` to `model` in one commit: readers, in this process or
  /// another, see the store before or after, never between.
  ///
  /// Additive changes are written in place; renames, removals and type changes replay the log
  /// under the new model into fresh projections (`MigrationPlan`). The log keeps every batch
  /// with the model version it was written under, and a `migration` record marks the change.
  /// A change that cannot be derived throws `LedgerError.migrationRefused` listing why, and
  /// nothing is written. `Ledger` values opened before the migration throw
  /// `LedgerError.modelChanged`: open the store again.
  @discardableResult
  public static func migrate(at path: String, to model: Model, options: Options = Options()) throws
    -> MigrationReport
  {
    let ledger = try open(at: path, options: options)
    defer { ledger.close() }
    return try ledger.migrate(to: model)
  }

  /// `migrate(at:to:options:)`, off the caller's executor.
  @discardableResult
  public static func migrate(at path: String, to model: Model, options: Options = Options()) async throws
    -> MigrationReport
  {
    let ledger = try open(at: path, options: options)
    defer { ledger.close() }
    return try await ledger.offTheCaller { try ledger.migrate(to: model) }
  }

  func migrate(to model: Model) throws -> MigrationReport {
    do { try transformers.validate(model) } catch { throw LedgerError.model(error) }
    let plan = try migrationPlan(to: model)
    guard plan.refusals.isEmpty else { throw LedgerError.migrationRefused(path: path, reasons: plan.refusals) }
    var report = MigrationReport(
      fromVersion: versions.current, toVersion: versions.current, plan: plan, batchID: nil, replayedBatches: 0)
    guard plan.method != .nothing else { return report }
    let next = versions.appending(plan.next)
    let environment = try environment
    // A replay writes every projection anew while the old pages stay until the commit.
    try environment.reserve(freeBytes: Self.estimatedBytes(objects: 0) + (try environment.info().usedBytes))
    let start = ContinuousClock.now
    (report.batchID, report.replayedBatches) = try environment.write { txn in
      try checkModelVersion(txn)
      let store = ProjectionStore(transaction: txn, layout: layout, model: plan.next)
      let head = try store.head()
      var replayed = 0
      switch plan.method {
      case .replay: replayed = try replayLog(under: plan, through: head, txn)
      case .inPlace where plan.changesIndexes: try rebuildIndexes(plan.next, txn)
      default: break
      }
      try checkValues(plan, txn)
      try next.write(into: txn, in: layout.meta)
      let record = ChangeRecord(
        batchID: head + 1, time: Date(), kind: .migration,
        metadata: ChangeRecord.Metadata(
          message: "migrate the model from version \(versions.current) to \(next.current) (\(plan.method.rawValue))"),
        statistics: ChangeRecord.Statistics(), changes: [], modelVersion: next.current)
      try txn.put(RecordCoding.encode(record), forKey: StoreKeys.batch(record.batchID), in: layout.log, flags: .append)
      try Projector(transaction: txn, layout: layout, model: plan.next).apply(record)
      return (record.batchID, replayed)
    }
    report.toVersion = next.current
    let elapsed = ContinuousClock.now - start
    logger.info(
      "migrated the model",
      metadata: [
        "store": "\(path)", "from": "\(report.fromVersion)", "to": "\(report.toVersion)",
        "method": "\(plan.method.rawValue)", "replayed": "\(report.replayedBatches)",
        "milliseconds": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
      ])
    return report
  }

  /// Empties the projections and folds every record of the log into them, each told in the
  /// new model's terms; returns the records replayed.
  private func replayLog(under plan: MigrationPlan, through head: UInt64, _ txn: Transaction) throws -> Int {
    let horizon = try ProjectionStore(transaction: txn, layout: layout, model: model).horizon()
    for database in layout.projections { try txn.removeAll(in: database) }
    for key in [MetaKey.head, MetaKey.nextObjectSequence] { _ = try txn.delete(key, in: layout.meta) }
    let projector = Projector(transaction: txn, layout: layout, model: plan.next)
    var batchID = horizon
    while batchID <= head {
      guard let bytes = try txn.value(forKey: StoreKeys.batch(batchID), in: layout.log) else {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "it is missing from the log")
      }
      let record = try Self.decodeRecord(bytes, batchID: batchID, versions: versions)
      do {
        try projector.apply(try plan.translation.translate(record, version: versions.current + 1))
      } catch let failure as TranslationFailure {
        throw LedgerError.migrationRefused(
          path: path, reasons: [ModelDifference(place: failure.place, change: "\(failure.reason) (batch \(batchID))")])
      }
      batchID += 1
    }
    return Int(head >= horizon ? head - horizon + 1 : 0)
  }

  /// Fills `indexes` anew from the live objects, for the attributes `model` marks indexed.
  private func rebuildIndexes(_ model: Model, _ txn: Transaction) throws {
    try txn.removeAll(in: layout.indexes)
    let projector = Projector(transaction: txn, layout: layout, model: model)
    let store = ProjectionStore(transaction: txn, layout: layout, model: model)
    for root in model.resolvedInOrder where root.rootName == root.name {
      guard root.family.contains(where: { model.resolved($0)?.hasIndexedAttributes ?? false }) else { continue }
      try store.forEachCurrentState(root: root.id) { id, bytes in
        if let state = try StateCoding.decode(bytes, model: model)?.state { try projector.index(id, state) }
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
      try store.forEachCurrentState(root: root.id) { _, bytes in
        guard let state = try StateCoding.decode(bytes, model: model)?.state else { return true }
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
