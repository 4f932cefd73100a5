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
  /// as it is, so is an object the batch created that a kept link list holds, and the result
  /// lists what was kept (`RevertResult.kept`). A kept list comes out exactly as it was: a
  /// link the reverted values would add to it or take from it gives way on the other side.
  /// Reverting a revert re-applies the original; reverting a batch twice is refused.
  public func revert(
    _ batchID: UInt64, force: Bool = false, keepingLaterChanges: Bool = false, message: String? = nil,
    author: String? = nil
  ) async throws -> RevertResult {
    let policy = try ConflictPolicy(force: force, keepingLaterChanges: keepingLaterChanges)
    do {
      return try await perform { try self.reverting(batchID, policy: policy, message: message, author: author) }
    } catch {
      logRefusal(of: batchID, error)
      throw error
    }
  }

  /// `revert`, blocking the calling thread until the record is committed.
  public func revert(
    _ batchID: UInt64, force: Bool = false, keepingLaterChanges: Bool = false, message: String? = nil,
    author: String? = nil
  ) throws -> RevertResult {
    let policy = try ConflictPolicy(force: force, keepingLaterChanges: keepingLaterChanges)
    do {
      return try perform { try reverting(batchID, policy: policy, message: message, author: author) }
    } catch {
      logRefusal(of: batchID, error)
      throw error
    }
  }

  /// The record of `batchID`, when it is one a revert can undo. Records never change once
  /// written, so the one read here is the one a write sees.
  func revertableRecord(_ batchID: UInt64) throws -> ChangeRecord {
    let record = try self.record(batchID)
    guard record.kind != .checkpoint else {
      throw LedgerError.invalidArgument(
        "batch \(batchID) is the checkpoint compact left (the state then, not a change): it cannot be reverted")
    }
    guard record.kind != .migration else {
      throw LedgerError.invalidArgument(
        "batch \(batchID) is a migration of the model: it cannot be reverted; migrate to the earlier model instead")
    }
    return record
  }

  /// What a revert does with a field or link a later batch changed too.
  enum ConflictPolicy {
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

  /// Logs a revert refused for its conflicts or for being done already (notice).
  private func logRefusal(of batchID: UInt64, _ error: any Error) {
    guard let refused = error as? LedgerError, refused.code == .revertConflicts || refused.code == .alreadyReverted
    else { return }
    logger.notice(
      "revert refused",
      metadata: [
        "store": "\(path)", "batch": "\(batchID)", "conflicts": "\(refused.conflicts.count)",
        "alreadyRevertedBy": "\(refused.alreadyRevertedBy.map(String.init) ?? "-")",
      ])
  }

  /// The write of a revert: its plan, made in the transaction, and its record.
  private func reverting(_ batchID: UInt64, policy: ConflictPolicy, message: String?, author: String?) throws
    -> Write<RevertResult>
  {
    let record = try revertableRecord(batchID)
    return Write(room: .objects(record.changes.count), announcing: \.summary) { [self] txn in
      let plan = try revertPlan(of: record, policy: policy, txn)
      if let later = plan.alreadyRevertedBy { throw LedgerError.alreadyReverted(batchID: batchID, by: later) }
      if plan.isRefused { throw LedgerError.revertConflicts(batchID: batchID, conflicts: plan.conflicts) }
      let metadata = ChangeRecord.Metadata(
        message: message ?? "revert batch \(batchID)", author: author, revertedBatchID: batchID)
      let reverted = try appendNew(
        kind: .revert, metadata: metadata, statistics: plan.statistics, changes: plan.changes, txn,
        knownStates: plan.afterStates)
      return RevertResult(
        summary: reverted, overridden: policy == .overwrite ? plan.conflicts : [],
        kept: policy == .keepLater ? plan.conflicts : [])
    }
  }
}
