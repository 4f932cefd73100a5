import Foundation

extension Ledger {
  /// Appends one record that makes the current state equal to the state after batch
  /// `batchID`. The log keeps everything in between.
  public func rewind(to batchID: UInt64, message: String? = nil, author: String? = nil) async throws -> BatchSummary {
    try await perform { self.rewinding(to: batchID, message: message, author: author) }
  }

  /// `rewind`, blocking the calling thread until the record is committed.
  public func rewind(to batchID: UInt64, message: String? = nil, author: String? = nil) throws -> BatchSummary {
    try perform { rewinding(to: batchID, message: message, author: author) }
  }

  /// The write of a rewind: the states after `batchID` of every object a later record
  /// changed, read in the transaction, and the record that restores them.
  private func rewinding(to batchID: UInt64, message: String?, author: String?) -> Write<BatchSummary> {
    // Room for the objects the later records changed, which a rewind restores (at most all).
    Write(room: .wholeStore, announcing: \.self) { [self] txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      let extent = try store.extent()
      let head = extent.head
      // The state rewound to must be one the log still holds (not one `compact` archived).
      try extent.checkState(after: batchID)
      var targets: [UInt64: ObjectState?] = [:]
      if batchID < head {
        for later in (batchID + 1)...head {
          for change in try readRecord(later, txn).changes where targets[change.objectID] == nil {
            targets[change.objectID] = .some(
              batchID == 0 ? nil : try store.with(asOf: batchID).state(of: change.objectID))
          }
        }
      }
      // States read from one point of history are consistent with each other.
      var graph = LinkGraph(objects: WorkingSet(model: model, source: store))
      try graph.restore(targets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, repairingLinks: false)
      let (changes, statistics) = graph.objects.finish(ignoredKeys: [])
      return try appendNew(
        kind: .rewind, metadata: .init(message: message ?? "rewind to batch \(batchID)", author: author),
        statistics: statistics, changes: changes, txn, knownStates: graph.objects.takeAfterStates())
    }
  }
}
