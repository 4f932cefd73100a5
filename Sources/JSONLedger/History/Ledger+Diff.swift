import JSONLedgerSupport

/// The difference between the states after two batches.
public struct LedgerDiff: Sendable, Equatable {
  /// The state compared from (0: the empty store).
  public var from: UInt64
  /// The state compared to.
  public var to: UInt64
  /// Objects created, deleted or updated going from `from` to `to` (field old → new, links).
  public var changes: [ObjectChange]
}

extension Ledger {
  /// What changed between the state after batch `from` and the state after batch `to`
  /// (either order; 0 is the empty store). Costs in proportion to the batches between them
  /// and the objects they touched, not to the size of the store.
  public func diff(from: UInt64, to: UInt64) throws -> LedgerDiff {
    try readTransaction { txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let extent = try store.extent()
      for id in [from, to] { try extent.checkState(after: id) }
      var touched: [UInt64] = []
      var seen: Set<UInt64> = []
      for batch in (min(from, to) + 1)...max(max(from, to), min(from, to) + 1) where batch <= max(from, to) {
        for change in try readRecord(batch, txn).changes where seen.insert(change.objectID).inserted {
          touched.append(change.objectID)
        }
      }
      var changes: [ObjectChange] = []
      for id in touched.sorted() {
        let before = from == 0 ? nil : try store.with(asOf: from).state(of: id)
        let after = to == 0 ? nil : try store.with(asOf: to).state(of: id)
        if let change = ObjectChange(objectID: id, before: before, after: after, model: model) {
          changes.append(change)
        }
      }
      return LedgerDiff(from: from, to: to, changes: changes)
    }
  }

  /// `diff`, off the caller's executor.
  public func diff(from: UInt64, to: UInt64) async throws -> LedgerDiff {
    try await runBriefly { try self.diff(from: from, to: to) }
  }
}
