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
      throw LedgerError.invalidArgument("pruning and parent scopes need the whole payload in one batch: import without a chunk size")
    }
    let template = makeBatch()
    let fixed = try entity.map { name throws(LedgerError) in try template.resolvedEntity(name) }
    var stream = try JSONStream(path: path)
    var pending: [(entity: ResolvedEntity, key: String, index: Int, element: JSONValue)] = []
    var counters: [String: Int] = [:]
    var summaries: [BatchSummary] = []
    var applied = 0

    func flush() throws {
      guard !pending.isEmpty else { return }
      var batch = makeBatch()
      batch.isStrict = strict
      var start = 0
      while start < pending.count {
        var end = start
        while end < pending.count, pending[end].key == pending[start].key { end += 1 }
        let run = pending[start..<end]
        try batch.stage(.array(run.map(\.element)), entity: run.first!.entity, path: run.first!.key, firstIndex: run.first!.index, options: options)
        start = end
      }
      let part = summaries.count + 1
      let summary = try applySynchronously(
        batch, message: message.map { "\($0) (part \(part))" } ?? "part \(part) of \(path)", author: author, source: path,
        idempotencyKey: idempotencyKey.map { "\($0)#\(part)" })
      summaries.append(summary)
      applied += pending.count
      pending.removeAll(keepingCapacity: true)
      // Pages of the map read while resolving this chunk would otherwise stay resident.
      try environment.releaseMappedPages()
      progress?(applied)
    }

    try stream.forEachElement { collection, element in
      let target: ResolvedEntity
      let key = collection ?? ""
      if let collection {
        guard fixed == nil else {
          throw LedgerError.invalidArgument("with an entity, the file must be a top-level array, not an object of collections")
        }
        guard let resolved = template.collectionEntity(forKey: collection) else {
          throw LedgerError.unknownCollection(collection, known: template.knownCollectionKeys())
        }
        target = resolved
      } else {
        guard let fixed else { throw LedgerError.invalidArgument("a top-level array needs an entity (--entity)") }
        target = fixed
      }
      let index = counters[key, default: 0]
      counters[key] = index + 1
      pending.append((target, key, index, element))
      if pending.count >= chunkSize { try flush() }
    }
    try flush()
    return summaries
  }
}
