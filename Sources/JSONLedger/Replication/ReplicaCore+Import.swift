import JSONLedgerSupport

extension ReplicaCore {
  /// Imports a JSON file of any size through the remote in parts of at most `chunkSize`
  /// objects, as `Ledger.importFile(at:entity:chunkSize:…)` does locally: each part is a write
  /// of its own under the remote's head lock, so other machines' writes interleave between
  /// parts, never inside one. With an `idempotencyKey`, part *k* carries `key#k`, checked
  /// against every machine's batches.
  public func importFile(
    at path: String, entity: String?, chunkSize: Int, options: StagingOptions, message: String?, author: String?,
    idempotencyKey: String?, progress: (@Sendable (ImportProgress) -> Void)?
  ) async throws -> [BatchSummary] {
    let ledger = ledger
    let executor = log.executor
    return try await Self.blocking {
      try ledger.importFile(
        at: path, entity: entity, chunkSize: chunkSize, options: options, message: message, author: author,
        idempotencyKey: idempotencyKey, progress: progress.map { report in { report($0) } }
      ) { batch, part in
        // The parts are read on this (non-cooperative) thread; each waits for its write.
        try waitBlocking(executorPreference: executor) {
          try await self.writeApplying("part \(part.number) of \(path)") { ledger in
            try ledger.applySynchronously(
              batch, message: part.message, author: part.author, source: part.source,
              idempotencyKey: part.idempotencyKey)
          }
        }
      }
    }
  }
}
