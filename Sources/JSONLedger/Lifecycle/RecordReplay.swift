/// Appends records already made (an upgrade's, an archive's) to a ledger's log and projects
/// them, a few hundred per write transaction: fewer commits than one each, and a bounded
/// transaction. Memory stays bounded too: at most 5,000 pending changes, and the map's pages
/// are handed back after each commit, so a replay's resident memory does not grow with the
/// log.
struct RecordReplay {
  let ledger: Ledger
  private var pending: [(record: ChangeRecord, encoded: [UInt8]?)] = []
  private var pendingChanges = 0

  init(into ledger: Ledger) { self.ledger = ledger }

  /// Appends `record`; `encoded`, when given, is written to the log in its place (a record
  /// kept as it was, under the model version it names).
  mutating func append(_ record: ChangeRecord, encoded: [UInt8]? = nil) throws {
    pending.append((record, encoded))
    pendingChanges += record.changes.count
    if pending.count >= 500 || pendingChanges >= 5_000 { try flush() }
  }

  /// Commits what is pending.
  mutating func flush() throws {
    guard !pending.isEmpty else { return }
    let records = pending
    // Each record checks the model version it is appended under (`append`).
    try ledger.perform {
      Write(room: .objects(pendingChanges), checksModelVersion: false) { [records, ledger] txn in
        for (record, encoded) in records { try ledger.append(record, txn, encoded: encoded) }
      }
    }
    pending.removeAll()
    pendingChanges = 0
    try ledger.environment.releaseMappedPages()
  }
}
