extension Ledger {
  /// Imports a JSON file of any size by streaming it: elements are read one at a time and
  /// applied in batches of at most `chunkSize` objects, so memory stays bounded.
  ///
  /// The file is a top-level array of objects of `entity`, or (with `entity` nil) an object
  /// whose keys name collections. Each chunk is its own batch, all or nothing; with an
  /// `idempotencyKey`, chunk *k* carries `key#k`, so running the same import again after an
  /// interruption skips the chunks already applied and finishes the rest.
  ///
  /// - Parameter progress: called after each chunk with the number of objects applied so far.
  public func importFile(
    at path: String, entity: String? = nil, chunkSize: Int, options: StagingOptions = StagingOptions(),
    strict: Bool = false, message: String? = nil, author: String? = nil, idempotencyKey: String? = nil,
    progress: ((Int) -> Void)? = nil
  ) throws -> [BatchSummary] {
    guard chunkSize > 0 else { throw LedgerError.invalidArgument("the chunk size must be at least 1") }
    guard !options.prunes, options.parent == nil else {
      throw LedgerError.invalidArgument(
        "pruning and parent scopes need the whole payload in one batch: import without a chunk size")
    }
    let fixed = try entity.map { name throws(LedgerError) in try makeBatch().resolvedEntity(name) }
    let chunks = JSONFileChunks(
      path: path, entity: fixed, chunkSize: chunkSize, options: options,
      makeBatch: {
        var batch = self.makeBatch()
        batch.isStrict = strict
        return batch
      })
    var summaries: [BatchSummary] = []
    var applied = 0
    do {
      try chunks.forEachChunk { batch, count in
        let part = summaries.count + 1
        let summary = try applySynchronously(
          batch, message: message.map { "\($0) (part \(part))" } ?? "part \(part) of \(path)", author: author,
          source: path, idempotencyKey: idempotencyKey.map { "\($0)#\(part)" })
        summaries.append(summary)
        applied += count
        // Pages of the map read while resolving this chunk would otherwise stay resident.
        try environment.releaseMappedPages()
        progress?(applied)
      }
    } catch {
      let reason = error as? LedgerError ?? .storage(String(describing: error))
      throw LedgerError.importStopped(
        file: path, failedPart: summaries.count + 1, appliedBatches: summaries.map(\.batchID), reason: reason)
    }
    return summaries
  }

  /// `importFile`, off the caller's executor.
  public func importFile(
    at path: String, entity: String? = nil, chunkSize: Int, options: StagingOptions = StagingOptions(),
    strict: Bool = false, message: String? = nil, author: String? = nil, idempotencyKey: String? = nil,
    progress: (@Sendable (Int) -> Void)? = nil
  ) async throws -> [BatchSummary] {
    try await offTheCaller {
      try self.importFile(
        at: path, entity: entity, chunkSize: chunkSize, options: options, strict: strict, message: message,
        author: author, idempotencyKey: idempotencyKey, progress: progress.map { report in { report($0) } })
    }
  }
}
