import LMDB

/// The write engine: every write of a `Ledger` to its store runs through `perform(_:)`.
extension Ledger {
  /// Runs the write `make` makes on the writer thread, blocking the calling thread until it
  /// committed. (It is made there: what it reads before its transaction is read in turn with
  /// the other writes, and a read-only ledger refuses it before.)
  ///
  /// `joiningOthers`: the write may share one transaction with other such writes that wait
  /// beside it (`runLine(_:)`), each still all or nothing, one commit and one flush for them
  /// all. Its `make` must read nothing from the store, and its body nothing but through its
  /// transaction: a write before it in the group has not committed yet.
  func perform<Outcome>(joiningOthers joins: Bool = false, _ make: () throws -> Write<Outcome>) throws -> Outcome {
    // A write holding the queue (compact's checkpoint) runs this one directly, alone.
    if writer.isCurrent { return try writer.sync { try performOnWriterThread(make()) } }
    // A writer alone writes on its own thread: a line of one would cost a semaphore and two
    // hand-overs between threads (3% more instructions for a batch of one object).
    if let outcome = try writer.syncIfAlone({ try performOnWriterThread(make()) }) { return outcome }
    return try withoutActuallyEscaping(make) { make in
      let waiting = Waiting(ledger: self, joinsGroups: joins && recordGate == nil, make: make)
      defer { waiting.makeWrite = nil }
      try writer.sync(waiting: waiting)
      return try Self.outcome(of: waiting)
    }
  }

  /// Runs the write `make` makes on the writer thread, without blocking the caller (`perform`
  /// above says the rest). A `Write` holds closures that never leave that thread.
  func perform<Outcome: Sendable>(
    joiningOthers joins: Bool = false, _ make: @escaping @Sendable () throws -> Write<Outcome>
  ) async throws -> Outcome {
    let waiting = Waiting(ledger: self, joinsGroups: joins && recordGate == nil, make: make)
    try await writer.run(waiting: waiting)
    return try Self.outcome(of: waiting)
  }

  private static func outcome<Outcome>(of waiting: Waiting<Outcome>) throws -> Outcome {
    guard let outcome = waiting.outcome else {
      throw LedgerError.invalidArgument("a write left the writer's line without running")
    }
    return try outcome.get()
  }

  /// Runs the writes taken from the writer's line on the writer thread, in order, each made in
  /// turn. Writes that may join others (`perform(joiningOthers:)`) and follow one another,
  /// for one ledger, run as one group (`performTogether`); any other write runs alone, after
  /// the group before it committed.
  static func runLine(_ writes: [any WaitingWrite]) {
    var group: [any WaitingWrite] = []
    for write in writes {
      if !write.joinsGroups || group.first.map({ $0.ledger !== write.ledger }) == true {
        runGroup(group)
        group = []
      }
      guard write.make() else { continue }
      if write.joinsGroups { group.append(write) } else { write.runAlone() }
    }
    runGroup(group)
  }

  private static func runGroup(_ group: [any WaitingWrite]) {
    guard group.count > 1 else {
      group.first?.runAlone()
      return
    }
    do { try group[0].ledger.performTogether(group, flushingMeta: group.contains { $0.flushesMeta }) } catch {
      // The shared transaction failed as a whole (its commit): nothing of it is in the
      // store, and each write runs again alone, to meet its own fate.
      for write in group { write.runAlone() }
    }
  }

  /// Runs `group` in one write transaction, each write in a transaction nested in it (LMDB's
  /// nested transactions): a write that fails is undone alone and its caller gets the error;
  /// the others go on, each seeing those before it (a repeated idempotency key, a moved
  /// head), as they would one after another. One commit (and one flush) for them all; the
  /// records are announced in order once it is done.
  ///
  /// `startingOver` is told when the transaction starts (again, after the map grew);
  /// `kept` after each write whether it was kept; `beforeCommit` is the transaction's last
  /// step, after every write (a replica's remote append of their records).
  func performTogether(
    _ group: [any WaitingWrite], flushingMeta: Bool, startingOver: () -> Void = {}, kept: (Bool) -> Void = { _ in },
    beforeCommit: (Transaction) throws -> Void = { _ in }
  ) throws {
    let environment = try environment
    let start = ContinuousClock.now
    let catchUp = pendingCatchUp
    let objects = group.reduce(catchUp?.roomObjects ?? 0) { $0 + ($1.roomObjects ?? 0) }
    let room = Self.estimatedBytes(objects: objects) + group.reduce(0) { $0 + $1.localValuesRoom }
    var caughtUp: [BatchSummary] = []
    try Self.writeTransaction(environment, reserving: room, flushingMeta: flushingMeta) { txn in
      startingOver()
      caughtUp = try catchUp.map { try appendEncoded($0.records, claimed: $0.claimed, txn) } ?? []
      for write in group {
        do {
          try txn.nested { try write.run(in: $0) }
          kept(true)
        } catch {
          write.fail(error)
          kept(false)
        }
      }
      try beforeCommit(txn)
    }
    catchUp?.markCommitted()
    for summary in caughtUp { announce(summary, since: start) }
    for write in group {
      for summary in write.committed() { write.ledger.announce(summary, since: start) }
    }
  }

  /// Runs `write` alone in a transaction of its own: the engine's steps around its body.
  func performOnWriterThread<Outcome>(_ write: Write<Outcome>) throws -> Outcome {
    try Self.check(idempotencyKey: write.idempotencyKey)
    let environment = try environment
    let start = ContinuousClock.now
    let catchUp = pendingCatchUp
    // The records caught up on take room as the objects of a write do.
    let caughtUpObjects = catchUp?.roomObjects ?? 0
    let room: Int
    switch write.room {
    case .objects(let objects): room = Self.estimatedBytes(objects: objects + caughtUpObjects)
    case .wholeStore: room = Self.estimatedBytes(objects: caughtUpObjects) + (try environment.info().usedBytes)
    case .bytes(let bytes): room = bytes + (caughtUpObjects > 0 ? Self.estimatedBytes(objects: caughtUpObjects) : 0)
    }
    // A write through a replica's remote (`recordGate`) has its record taken there before
    // this commit, as a catch-up's are: the commit need not flush the meta page either, unless
    // it also keeps local values, which only this store holds.
    let flushesMeta = write.flushesMeta && (recordGate == nil || !write.localValues.isEmpty)
    let (caughtUp, outcome) = try Self.writeTransaction(
      environment, reserving: room + Self.localValuesRoom(write.localValues.map(\.value)),
      flushingMeta: flushesMeta
    ) { txn in
      let caughtUp = try catchUp.map { try appendEncoded($0.records, claimed: $0.claimed, txn) } ?? []
      return (caughtUp, try steps(of: write, in: txn))
    }
    catchUp?.markCommitted()
    // Two loops, not one over the two lists joined: joining them costs every write an array.
    for summary in caughtUp { announce(summary, since: start) }
    for summary in write.announced?(outcome) ?? [] { announce(summary, since: start) }
    return outcome
  }

  /// The records a write through the remote appends before its body (`catchUp`), until a
  /// transaction that appended them committed.
  private var pendingCatchUp: CatchUpRecords? {
    guard let catchUp, !catchUp.isCommitted, !catchUp.records.isEmpty else { return nil }
    return catchUp
  }

  /// What every write does in its transaction, alone or nested in a group's: the model
  /// version checked, its local values kept, its body.
  func steps<Outcome>(of write: Write<Outcome>, in txn: Transaction) throws -> Outcome {
    if write.checksModelVersion { try checkModelVersion(txn) }
    // Before the body, whose last step may be a replica's remote append: nothing after it
    // may fill the map and run it again.
    try putLocalValues(write.localValues, txn)
    return try write.body(txn)
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
