import Foundation
import JSONLedgerSupport
public import Logging
import Synchronization

/// A store kept as a replica of a remote log, over any transport (`RemoteLog`): every rule of
/// replication lives here, and a transport only carries calls.
///
/// Every replica's store holds the same records, byte for byte and in the same order, folded
/// by the same projector; reads are local. A write takes the remote head's lock, catches the
/// store up, runs against that state, and appends its record to the remote before the store
/// commits it: a replica never holds a record the remote lacks. A catch-up checks each
/// record before it applies it: its batch the next, its chain the local head's, its digest
/// its bytes', its model version the store's.
@_spi(Replication) public final class ReplicaCore<Log: RemoteLog>: Sendable {
  /// The local store. After the replica applies a migration (its own or another machine's)
  /// this is a new `Ledger` under the new model version.
  public var ledger: Ledger { current.withLock { $0 } }
  private let current: Mutex<Ledger>
  /// The applies waiting to be written together (`apply`).
  let applies = Mutex(ApplyLine())
  /// The remote's digest of the store's newest record as the last catch-up or write left it
  /// (`remoteDigest(ofLocal:)`): a follower checks the chain at each wake-up, and reading the
  /// digest from the store costs a copy of the record and its checksum every time. The record
  /// of a batch never changes once the store holds it, so a digest kept for a batch stays its.
  private let newestDigest = Mutex<(batch: UInt64, digest: [UInt8])?>(nil)
  /// The remote log.
  public let log: Log
  let logger: Logger

  public init(ledger: Ledger, log: Log, logger: Logger) {
    self.current = Mutex(ledger)
    self.log = log
    self.logger = logger
  }

  /// Who appends, as the log names its writers: host and process.
  public static var thisWriter: String {
    "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"
  }

  /// How the log names this replica among its followers: host and store.
  var followerName: String { "\(ProcessInfo.processInfo.hostName):\(ledger.path)" }

  // MARK: - Catching up

  /// Applies the records the remote holds past the local head, once.
  @discardableResult
  public func sync() async throws -> SyncReport {
    try await log.withSession { session in
      let head = try await session.head()
      let applied = try await catchUp(on: session, to: head)
      let local = try ledger.logExtent().head
      if applied > 0 { _ = try? await session.recordPosition(follower: followerName, head: local) }
      return SyncReport(applied: applied, head: local)
    }
  }

  /// Waits until the local store holds batch `batch`, or throws `RemoteError.timedOut`.
  public func waitFor(batch: UInt64, timeout: Duration) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while try ledger.logExtent().head < batch {
      guard clock.now < deadline else { throw RemoteError.timedOut("batch \(batch)", after: timeout) }
      try await sync()
      if try ledger.logExtent().head < batch { try await Task.sleep(for: .milliseconds(50)) }
    }
  }

  /// Applies the remote's records after the local head up to `head`, each checked, or, with
  /// no head, every record the log holds after the local head. A replica whose history
  /// differs is refused before anything is applied (`RemoteError.diverged`). Returns how many
  /// it applied.
  ///
  /// The chain is checked where it meets the store without asking the remote for more: a
  /// store at the head has the head's digest, and the first record after the store's head
  /// names the store's newest record as the one before it. A write makes this check under
  /// the head's lock, so it costs no round trip there; a follower, once it has checked the
  /// head, reads only records.
  public func catchUp(on session: Log.Session, to head: RemoteHead?) async throws -> Int {
    let remoteHead = head?.batchID ?? .max
    var (local, localDigest) = try meeting(head)
    if local == remoteHead { return 0 }
    var applied = 0
    // The records between two migrations are appended in one local transaction, up to
    // `groupBytes` of them: a writer catching up on the batches of seven others flushes once,
    // not seven times. A record that fails its checks is refused once those before it are in;
    // one the store itself refuses takes its group with it, and the next catch-up starts over
    // from the head.
    var group: [[UInt8]] = []
    var groupBytes = 0
    func appendGroup() async throws {
      guard !group.isEmpty else { return }
      let records = group
      (group, groupBytes) = ([], 0)
      let ledger = self.ledger
      _ = try await Self.blocking { try ledger.appendReplicated(records) }
      applied += records.count
    }
    while local < remoteHead {
      let records = try await session.records(after: local, limit: Self.recordsPerRead)
      if records.isEmpty { break }
      for record in records {
        do {
          try check(record, follows: local, digest: localDigest)
          if record.kind == ChangeRecord.Kind.migration.description {
            try await appendGroup()
            try await applyMigration(record, on: session)
            applied += 1
          } else {
            try checkModelVersion(of: record)
            group.append(record.bytes)
            groupBytes += record.bytes.count
            if groupBytes >= Self.groupBytes { try await appendGroup() }
          }
        } catch {
          try await appendGroup()
          throw error
        }
        local = record.batchID
        localDigest = record.digest
      }
      try await appendGroup()
      remember(localDigest, ofLocal: local)
      // With no head to reach, a short read was the log's end.
      if head == nil, records.count < Self.recordsPerRead { break }
    }
    // The head and the log agree: a head that says more than the log holds is no log to
    // follow or clone.
    if head != nil, local < remoteHead { throw Self.logEnds(at: local, before: remoteHead) }
    return applied
  }

  /// Where the store meets the remote's chain: its head and the remote's digest of it. A
  /// store that holds more than `head`, or another record of it, has diverged.
  private func meeting(_ head: RemoteHead?) throws -> (batch: UInt64, digest: [UInt8]) {
    let local = try ledger.logExtent().head
    let localDigest = try remoteDigest(ofLocal: local)
    guard let head else { return (local, localDigest) }
    if local > head.batchID {
      throw RemoteError.diverged(
        batch: local, local: Self.hex(localDigest),
        remote: "none (the remote's head is batch \(head.batchID): this replica holds batches the remote lacks)")
    }
    if local == head.batchID, head.digest != localDigest {
      throw RemoteError.diverged(batch: local, local: Self.hex(localDigest), remote: Self.hex(head.digest))
    }
    return (local, localDigest)
  }

  /// A record read after batch `local`, whose remote digest is `digest`: the next batch, in
  /// the chain, and what the log says of it (`check(_:)`).
  private func check(_ record: RemoteRecord, follows local: UInt64, digest: [UInt8]) throws {
    guard record.batchID == local + 1 else {
      throw RemoteError.corruptRecord(batch: record.batchID, reason: "the log skips from batch \(local) to it")
    }
    guard record.previousDigest == digest else {
      throw RemoteError.diverged(batch: local, local: Self.hex(digest), remote: Self.hex(record.previousDigest))
    }
    try check(record)
  }

  private static func logEnds(at local: UInt64, before head: UInt64) -> RemoteError {
    RemoteError.corruptRecord(
      batch: local + 1, reason: "the remote's head row says batch \(head), but its log ends at batch \(local)")
  }

  /// The records after the store's head up to `head`, each checked, for a write to append in
  /// its own transaction (`CatchUpRecords`); nil when the store should catch up on its own
  /// first: a migration among them, or more of them than one read or one group holds.
  private func recordsToCatchUp(on session: Log.Session, to head: RemoteHead) async throws -> [RemoteRecord]? {
    var (local, localDigest) = try meeting(head)
    guard local < head.batchID else { return [] }
    guard head.batchID - local <= UInt64(Self.recordsPerRead) else { return nil }
    // Under the head's lock nothing follows the head.
    let records = try await session.records(after: local, limit: Self.recordsPerRead).prefix {
      $0.batchID <= head.batchID
    }
    var bytes = 0
    for record in records {
      try check(record, follows: local, digest: localDigest)
      guard record.kind != ChangeRecord.Kind.migration.description else { return nil }
      try checkModelVersion(of: record)
      bytes += record.bytes.count
      guard bytes < Self.groupBytes else { return nil }
      (local, localDigest) = (record.batchID, record.digest)
    }
    guard local == head.batchID else { throw Self.logEnds(at: local, before: head.batchID) }
    return Array(records)
  }

  /// The most records a catch-up reads in one call.
  static var recordsPerRead: Int { 256 }

  /// The most bytes of records a catch-up appends in one local transaction.
  static var groupBytes: Int { 4 << 20 }

  /// A record that is not a migration is written under the store's model version.
  private func checkModelVersion(of record: RemoteRecord) throws {
    let version = ledger.modelVersion
    guard record.modelVersion == version else {
      throw RemoteError.corruptRecord(
        batch: record.batchID,
        reason: "it is written under model version \(record.modelVersion), but the log before it is at \(version)")
    }
  }

  /// Applies one checked migration record: it moves the store to the model version it names,
  /// taken from the remote's model.
  private func applyMigration(_ record: RemoteRecord, on session: Log.Session) async throws {
    let ledger = self.ledger
    let bytes = record.bytes
    guard record.modelVersion == ledger.modelVersion + 1 else {
      throw RemoteError.corruptRecord(
        batch: record.batchID,
        reason: "a migration to model version \(record.modelVersion) cannot follow version \(ledger.modelVersion)")
    }
    let definition = try Self.modelDefinition(try await session.head().model, batch: record.batchID)
    _ = try await Self.blocking { try ledger.appendReplicatedMigration(bytes, modelDefinition: definition) }
    try reopenAfterMigration()
  }

  /// A remote record is what the log says of it: its bytes have its digest, and they are the
  /// record of its batch (not an older record inserted again as the next batch).
  func check(_ record: RemoteRecord) throws {
    guard log.digest(of: record.bytes) == record.digest else {
      throw RemoteError.corruptRecord(
        batch: record.batchID, reason: "its bytes do not have the checksum the log gives")
    }
    let claimed: UInt64
    do { claimed = try Ledger.batchID(ofRecord: record.bytes) } catch {
      throw RemoteError.corruptRecord(batch: record.batchID, reason: "its bytes are no record: \(error)")
    }
    guard claimed == record.batchID else {
      throw RemoteError.corruptRecord(
        batch: record.batchID,
        reason: "its bytes are the record of batch \(claimed), stored again as batch \(record.batchID)")
    }
  }

  /// The remote model's every version, as the store reads a definition.
  static func modelDefinition(_ text: String, batch: UInt64) throws -> JSONValue {
    do { return try JSONParser.parse(Array(text.utf8)) } catch {
      throw RemoteError.corruptRecord(batch: batch, reason: "the ledger's model does not read: \(error)")
    }
  }

  /// Takes the store as it is after a migration it applied: the `Ledger` it reads through
  /// from now on.
  func reopenAfterMigration() throws {
    let reopened = try ledger.reopened()
    current.withLock { $0 = reopened }
  }

  /// The remote's digest of the store's record of `batch` (0: the chain's start): its bytes',
  /// or, where the log starts at a checkpoint, the one of the record the checkpoint stands for.
  func remoteDigest(ofLocal batch: UInt64) throws -> [UInt8] {
    guard batch > 0 else { return log.genesisDigest }
    if let newest = newestDigest.withLock({ $0 }), newest.batch == batch { return newest.digest }
    let digest = try readRemoteDigest(ofLocal: batch)
    remember(digest, ofLocal: batch)
    return digest
  }

  /// Keeps `digest` as the remote's digest of the store's record of `batch`, which the store
  /// has committed.
  func remember(_ digest: [UInt8], ofLocal batch: UInt64) {
    newestDigest.withLock { $0 = (batch, digest) }
  }

  /// `remoteDigest(ofLocal:)`, read from the store.
  private func readRemoteDigest(ofLocal batch: UInt64) throws -> [UInt8] {
    let ledger = self.ledger
    let start = try ledger.logExtent().firstBatch
    // A checkpoint stands for the record it replaced, batch 1 included (a compaction of the
    // first batch leaves the log starting at 1, at a checkpoint).
    let startsAtCheckpoint = try start > 1 || ledger.log(limit: 1, before: start + 1).first?.kind == .checkpoint
    guard batch == start, startsAtCheckpoint else { return log.digest(of: try ledger.encodedRecord(batch)) }
    guard let digest = try ledger.replicaStartDigest else {
      throw RemoteError.unsupported(
        "\(ledger.path) starts at a checkpoint (batch \(start)) that does not say which remote record it stands for: clone it again, replacing this store (a clone with reset)"
      )
    }
    return digest
  }

  // MARK: - Writing

  /// Runs one write of `body` on the store through the remote: the head's lock taken, the
  /// store caught up (following every migration the log holds), `body` run against that
  /// state, and the record it appends (at most one) appended to the remote before the store
  /// commits it. A remote that refuses it leaves the store as it was.
  public func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    try await log.withSession { session in try await write(what, on: session, catchingUpInItsTransaction: false, body) }
  }

  /// `write(_:_:)` of a body that applies one batch (`Ledger.applySynchronously`), which reads
  /// the store in its transaction alone: that transaction appends the records the store
  /// lacked first, so that the store catches up and writes in one commit (`CatchUpRecords`).
  /// A body that reads the store before its transaction (a revert reads the record it
  /// reverts) goes through `write(_:_:)`, which commits the catch-up first.
  func writeApplying<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    try await log.withSession { session in try await write(what, on: session, catchingUpInItsTransaction: true, body) }
  }

  private func write<R: Sendable>(
    _ what: String, on session: Log.Session, catchingUpInItsTransaction: Bool,
    _ body: @escaping @Sendable (Ledger) throws -> R
  ) async throws -> R {
    let (head, ledger, catchUp) = try await lockAndCatchUp(on: session, intoTheWrite: catchingUpInItsTransaction)
    let gate = RemoteAppend(log: log, session: session, head: head, what: what)
    let result: R
    do {
      let catchingUp = catchUp?.records
      result = try await Self.blocking { try body(try ledger.committing(through: gate.append, after: catchingUp)) }
    } catch {
      // The write's transaction took the records it caught up on with it.
      await settle(catchUp, ledger)
      throw error
    }
    let (appended, migrated) = gate.outcome
    if !appended { try await session.releaseHead() }
    await settle(catchUp, ledger)
    if let sent = gate.sent { remember(sent.digest, ofLocal: sent.batchID) }
    if migrated { try reopenAfterMigration() }
    return result
  }

  /// Takes the head's lock and catches the store up to it: the state a write runs against.
  /// `intoTheWrite`: the records the store lacks are returned for the write's own transaction
  /// to append first (`CatchUpRecords`), unless they hold a migration or are many, which the
  /// store commits first as before.
  func lockAndCatchUp(on session: Log.Session, intoTheWrite: Bool) async throws -> (
    RemoteHead, Ledger, PendingCatchUp?
  ) {
    let head = try await session.lockHead()
    var pending: PendingCatchUp?
    if intoTheWrite, let records = try await recordsToCatchUp(on: session, to: head) {
      if let last = records.last {
        pending = PendingCatchUp(
          records: try CatchUpRecords(records.map(\.bytes)), last: (last.batchID, last.digest))
      }
    } else {
      _ = try await catchUp(on: session, to: head)
    }
    let ledger = self.ledger
    guard head.modelVersion == ledger.modelVersion else {
      throw RemoteError.corruptRecord(
        batch: head.batchID,
        reason:
          "the remote ledger says model version \(head.modelVersion), but its log up to here brings this replica to \(ledger.modelVersion)"
      )
    }
    return (head, ledger, pending)
  }

  /// After a write given `catchUp`: the records appended on their own unless its transaction
  /// committed them (it failed, or wrote nothing), and the newest one's digest kept. A store
  /// that cannot take them now takes them at its next catch-up: the write's outcome stands.
  func settle(_ catchUp: PendingCatchUp?, _ ledger: Ledger) async {
    guard let catchUp else { return }
    if !catchUp.records.isCommitted {
      let records = catchUp.records.records
      do { _ = try await Self.blocking { try ledger.appendReplicated(records) } } catch { return }
    }
    remember(catchUp.last.digest, ofLocal: catchUp.last.batch)
  }

  /// Runs `body`, a store call that blocks (on LMDB's one writer, or a gate on the remote), on
  /// a thread of its own.
  static func blocking<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await runBlocking("JSONLedger.replica", body)
  }

  /// Lower-case hexadecimal text of a digest, for messages.
  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
  }
}

/// The gate a replica's write passes its one new record through: the remote append, made
/// from the store's writer thread while its transaction waits.
private final class RemoteAppend<Log: RemoteLog>: Sendable {
  let log: Log
  let session: Log.Session
  let head: RemoteHead
  let what: String
  private let state = Mutex<(appended: Bool, migrated: Bool)>((false, false))
  private let sentRecord = Mutex<RemoteRecord?>(nil)

  init(log: Log, session: Log.Session, head: RemoteHead, what: String) {
    self.log = log
    self.session = session
    self.head = head
    self.what = what
  }

  /// Whether a record went to the remote, and whether it was a migration.
  var outcome: (appended: Bool, migrated: Bool) { state.withLock { $0 } }

  /// The record the remote took, once the write that made it returned: the store committed it.
  var sent: RemoteRecord? { sentRecord.withLock { $0 } }

  @Sendable func append(_ record: OutgoingRecord) throws {
    guard !state.withLock({ $0.appended }) else {
      throw RemoteError.unsupported("a write through the remote appends one record: \(what) appended more")
    }
    // A migration moves the ledger's model in the same call: every replica that applies the
    // record finds the version it moves to.
    var model: String?
    if record.kind == .migration {
      guard let definition = record.modelDefinition, record.modelVersion == head.modelVersion + 1 else {
        throw RemoteError.unsupported(
          "a migration through the remote moves the model from version \(head.modelVersion) to the next, with its definition"
        )
      }
      model = String(decoding: JSONWriter(options: []).bytes(from: definition), as: UTF8.self)
    }
    let outgoing = RemoteRecord(
      batchID: record.batchID, kind: record.kind.description, modelVersion: record.modelVersion,
      idempotencyKey: record.idempotencyKey, previousDigest: head.digest, digest: log.digest(of: record.bytes),
      writer: ReplicaCore<Log>.thisWriter, bytes: record.bytes)
    let (session, moved) = (self.session, model)
    try waitBlocking(executorPreference: log.executor) {
      try await session.append(outgoing, movingModelTo: moved)
    }
    state.withLock { $0 = (true, model != nil) }
    sentRecord.withLock { $0 = outgoing }
  }
}

/// The records a write through the remote appends before its own (`CatchUpRecords`), and the
/// newest one's batch and remote digest.
struct PendingCatchUp: Sendable {
  let records: CatchUpRecords
  let last: (batch: UInt64, digest: [UInt8])
}

/// What `sync` did.
public struct SyncReport: Sendable, Equatable {
  /// The records applied.
  public var applied: Int
  /// The local head after it.
  public var head: UInt64

  public init(applied: Int, head: UInt64) {
    self.applied = applied
    self.head = head
  }
}
/// A replica's writes go through its remote: `write(_:_:)` is the path a server or a tool
/// takes to write to one.
extension ReplicaCore: LedgerWrites {}
