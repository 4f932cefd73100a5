/// Appends records already made (an upgrade's, an archive's) to a ledger's log and projects
/// them, a few hundred per write transaction: fewer commits than one each, and a bounded
/// transaction.
struct RecordReplay {
  let ledger: Ledger
  private var pending: [ChangeRecord] = []
  private var pendingChanges = 0

  init(into ledger: Ledger) { self.ledger = ledger }

  mutating func append(_ record: ChangeRecord) throws {
    pending.append(record)
    pendingChanges += record.changes.count
    if pending.count >= 500 || pendingChanges >= 200_000 { try flush() }
  }

  /// Commits what is pending.
  mutating func flush() throws {
    guard !pending.isEmpty else { return }
    try ledger.environment.reserve(freeBytes: Ledger.estimatedBytes(objects: pendingChanges))
    let records = pending
    try ledger.environment.write { txn in
      for record in records { try ledger.append(record, txn) }
    }
    pending.removeAll(keepingCapacity: true)
    pendingChanges = 0
  }
}
