@_spi(Replication) public import JSONLedger

extension Replica {
  /// Imports a JSON file of any size through the remote in parts of at most `chunkSize`
  /// objects, as `Ledger.importFile(at:entity:chunkSize:…)` does locally: each part is a write
  /// of its own under the remote's head lock, so other machines' writes interleave between
  /// parts, never inside one. With an `idempotencyKey`, part *k* carries `key#k`, checked
  /// against every machine's batches: running the import again after an interruption, on this
  /// machine or another, skips the parts already applied and finishes the rest.
  public func importFile(
    at path: String, entity: String? = nil, chunkSize: Int, options: StagingOptions = StagingOptions(),
    message: String? = nil, author: String? = nil, idempotencyKey: String? = nil,
    progress: (@Sendable (ImportProgress) -> Void)? = nil
  ) async throws -> [BatchSummary] {
    try await core.importFile(
      at: path, entity: entity, chunkSize: chunkSize, options: options, message: message, author: author,
      idempotencyKey: idempotencyKey, progress: progress)
  }
}
