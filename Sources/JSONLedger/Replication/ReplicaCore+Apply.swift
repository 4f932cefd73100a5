import JSONLedgerSupport
import Synchronization

/// The applies of one replica waiting to be written (`ReplicaCore.apply`), in the order they
/// came, and whether a task is writing them.
struct ApplyLine: Sendable {
  var waiting: [WaitingApply] = []
  var isRunning = false
}

/// One apply waiting in the line, and its caller.
struct WaitingApply: Sendable {
  let apply: GroupedApply
  let caller: CheckedContinuation<BatchSummary, any Error>
}

extension ReplicaCore {
  /// Applies `batch` through the remote (`write`). `idempotencyKey` and `expectedHead` are
  /// checked under the head's lock, against every machine's batches.
  ///
  /// Applies of this replica that wait for the lock together are written together: one lock,
  /// one catch-up, one local transaction with each apply nested in it (all or nothing each,
  /// as `Ledger.apply` in a group), and one remote append and commit for their records, in
  /// order. An apply that waits alone is written as any write is.
  public func apply(
    _ batch: ChangeBatch, message: String?, author: String?, source: String?, idempotencyKey: String?,
    expectedHead: UInt64?
  ) async throws -> BatchSummary {
    let apply = GroupedApply(
      batch: batch, message: message, author: author, source: source, idempotencyKey: idempotencyKey,
      expectedHead: expectedHead)
    return try await withCheckedThrowingContinuation { caller in
      let starts = applies.withLock { line in
        line.waiting.append(WaitingApply(apply: apply, caller: caller))
        defer { line.isRunning = true }
        return !line.isRunning
      }
      if starts { Task { await self.writeWaitingApplies() } }
    }
  }

  /// The most applies written together: a group's records travel to the remote in one call.
  static var mostAppliesTogether: Int { 64 }

  /// How many applies wait in the line. For tests.
  var waitingApplies: Int { applies.withLock { $0.waiting.count } }

  /// Writes the applies in the line, those that waited together in one group, until none waits.
  private func writeWaitingApplies() async {
    while let group = nextGroup() { await write(group) }
  }

  private func nextGroup() -> [WaitingApply]? {
    applies.withLock { line in
      guard !line.waiting.isEmpty else {
        line.isRunning = false
        return nil
      }
      let group = Array(line.waiting.prefix(Self.mostAppliesTogether))
      line.waiting.removeFirst(group.count)
      return group
    }
  }

  private func write(_ group: [WaitingApply]) async {
    if group.count == 1 {
      let apply = group[0].apply
      do {
        let summary = try await writeApplying("a batch") { ledger in
          try ledger.applySynchronously(
            apply.batch, message: apply.message, author: apply.author, source: apply.source,
            idempotencyKey: apply.idempotencyKey, expectedHead: apply.expectedHead)
        }
        group[0].caller.resume(returning: summary)
      } catch {
        group[0].caller.resume(throwing: error)
      }
      return
    }
    do {
      let outcomes = try await log.withSession { session in
        try await writeTogether(group.map(\.apply), on: session)
      }
      for (waiting, outcome) in zip(group, outcomes) { waiting.caller.resume(with: outcome) }
    } catch {
      for waiting in group { waiting.caller.resume(throwing: error) }
    }
  }

  /// One group: the lock taken once, the applies run together (`Ledger.applyTogether`) in one
  /// transaction that first appends the records the store lacked, and the records of those
  /// kept appended to the remote in one call before the store commits them.
  private func writeTogether(_ applies: [GroupedApply], on session: Log.Session) async throws -> [Result<
    BatchSummary, any Error
  >] {
    let (head, ledger, catchUp) = try await lockAndCatchUp(on: session, intoTheWrite: true)
    let remote = RemoteGroupAppend(log: log, session: session, head: head)
    let outcomes: [Result<BatchSummary, any Error>]
    do {
      outcomes = try await Self.blocking {
        try ledger.applyTogether(applies, after: catchUp?.records, sending: remote.append)
      }
    } catch {
      await settle(catchUp, ledger)
      throw error
    }
    if !remote.appended { try await session.releaseHead() }
    await settle(catchUp, ledger)
    return outcomes
  }
}

/// The remote append of a group's records, made from the store's writer thread while its
/// transaction waits: each record chained to the one before it, the first to the locked head.
private final class RemoteGroupAppend<Log: RemoteLog>: Sendable {
  let log: Log
  let session: Log.Session
  let head: RemoteHead
  private let state = Mutex(false)

  init(log: Log, session: Log.Session, head: RemoteHead) {
    self.log = log
    self.session = session
    self.head = head
  }

  /// Whether the records went to the remote.
  var appended: Bool { state.withLock { $0 } }

  @Sendable func append(_ records: [OutgoingRecord]) throws {
    var previous = head.digest
    let outgoing = try records.map { record in
      guard record.kind != .migration else {
        throw RemoteError.unsupported("a migration through the remote is written alone, not in a group of applies")
      }
      let digest = log.digest(of: record.bytes)
      defer { previous = digest }
      return RemoteRecord(
        batchID: record.batchID, kind: record.kind.description, modelVersion: record.modelVersion,
        idempotencyKey: record.idempotencyKey, previousDigest: previous, digest: digest,
        writer: ReplicaCore<Log>.thisWriter, bytes: record.bytes)
    }
    let session = self.session
    try waitBlocking(executorPreference: log.executor) { try await session.append(contentsOf: outgoing) }
    state.withLock { $0 = true }
  }
}
