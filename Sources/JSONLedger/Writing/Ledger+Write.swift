import LMDB

/// The write engine: every write of a `Ledger` to its store runs through `perform(_:)`.
extension Ledger {
  /// Runs the write `make` makes on the writer thread, blocking the calling thread until it
  /// committed. (It is made there: what it reads before its transaction is read in turn with
  /// the other writes, and a read-only ledger refuses it before.)
  func perform<Outcome>(_ make: () throws -> Write<Outcome>) throws -> Outcome {
    try writer.sync { try performOnWriterThread(make()) }
  }

  /// Runs the write `make` makes on the writer thread, without blocking the caller. (A
  /// `Write` holds closures that never leave that thread.)
  func perform<Outcome: Sendable>(_ make: @escaping @Sendable () throws -> Write<Outcome>) async throws -> Outcome {
    try await writer.run { try self.performOnWriterThread(make()) }
  }

  private func performOnWriterThread<Outcome>(_ write: Write<Outcome>) throws -> Outcome {
    try Self.check(idempotencyKey: write.idempotencyKey)
    let environment = try environment
    let start = ContinuousClock.now
    let room: Int
    switch write.room {
    case .objects(let objects): room = Self.estimatedBytes(objects: objects)
    case .wholeStore: room = Self.estimatedBytes(objects: 0) + (try environment.info().usedBytes)
    case .bytes(let bytes): room = bytes
    }
    // A write through a replica's remote (`recordGate`) has its record taken there before
    // this commit, as a catch-up's are: the commit need not flush the meta page either, unless
    // it also keeps local values, which only this store holds.
    let flushesMeta = write.flushesMeta && (recordGate == nil || !write.localValues.isEmpty)
    let outcome = try Self.writeTransaction(
      environment, reserving: room + Self.localValuesRoom(write.localValues.map(\.value)),
      flushingMeta: flushesMeta
    ) { txn in
      if write.checksModelVersion { try checkModelVersion(txn) }
      // Before the body, whose last step may be a replica's remote append: nothing after it
      // may fill the map and run it again.
      try putLocalValues(write.localValues, txn)
      return try write.body(txn)
    }
    for summary in write.announced?(outcome) ?? [] { announce(summary, since: start) }
    return outcome
  }

  /// Refuses an empty idempotency key: one that could not tell two batches apart.
  static func check(idempotencyKey key: String?) throws {
    guard key?.isEmpty != true else {
      throw LedgerError.invalidArgument("an idempotency key cannot be empty: give one, or none")
    }
  }

  /// The one LMDB write transaction of the library: `room` bytes reserved in the map first,
  /// then `body`, committed, a storage engine failure said as a ledger error. Besides the
  /// engine, only what runs before a `Ledger` exists calls it: a new store's first commit,
  /// an upgrade of an old format.
  static func writeTransaction<R>(
    _ environment: Environment, reserving room: Int, flushingMeta: Bool = true, _ body: (Transaction) throws -> R
  ) throws -> R {
    try LedgerError.wrappingStorageErrors {
      try environment.reserve(freeBytes: room)
      return try environment.write(flushingMeta: flushingMeta, body)
    }
  }

  /// The number of changes from which a batch hands the memory it freed back to the system
  /// as it goes (`FreedMemory`): below it, what is freed is little and soon reused.
  static let largeBatch = 1 << 16

  /// A generous estimate of the map space a batch of `objects` needs (record, projections,
  /// copy-on-write pages); reserving too much only costs address space.
  static func estimatedBytes(objects: Int) -> Int { 32 << 20 + objects * 4096 }

  /// Says what a committed write did: a record appended is logged (info) and handed to the
  /// `changes` subscribers; a batch already applied or changing nothing is logged (debug).
  private func announce(_ summary: BatchSummary, since start: ContinuousClock.Instant) {
    if summary.wasAlreadyApplied {
      logger.debug("batch already applied", metadata: ["store": "\(path)", "batch": "\(summary.batchID)"])
      return
    }
    guard summary.wroteRecord else {
      logger.debug("batch changed nothing", metadata: ["store": "\(path)", "head": "\(summary.batchID)"])
      return
    }
    let elapsed = ContinuousClock.now - start
    logger.info(
      "applied batch",
      metadata: [
        "store": "\(path)", "batch": "\(summary.batchID)", "kind": "\(summary.kind)", "created": "\(summary.created)",
        "updated": "\(summary.updated)", "deleted": "\(summary.deleted)", "unchanged": "\(summary.unchanged)",
        "milliseconds": "\(elapsed.wholeMilliseconds)",
      ])
    writer.publish(summary)
  }

  /// A stream of the summaries of batches applied from now on through this `Ledger`
  /// instance (applies, reverts, rewinds, migrations).
  public var changes: AsyncStream<BatchSummary> { writer.subscribe() }
}
