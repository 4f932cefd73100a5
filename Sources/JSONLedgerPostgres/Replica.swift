public import Foundation
@_spi(Replication) public import JSONLedger
public import Logging
import PostgresNIO
import Synchronization

/// A store that is a replica of a ledger whose log lives in PostgreSQL.
///
/// Every machine's store holds the same records, byte for byte and in the same order, folded
/// by the same projector; reads are local and never need the remote. A write takes the
/// ledger's head lock in PostgreSQL, catches the store up, applies the batch against that
/// state, and commits the record to PostgreSQL before the store commits it: a replica never
/// holds a record the remote lacks. `follow` and `sync` apply the records other machines
/// wrote.
///
/// ```swift
/// let remote = try RemoteLocation(url: "postgres://app@db.internal/ledgers", ledger: "bands")
/// let replica = try await Replica.clone(from: remote, into: "/var/cache/bands")
/// let summary = try await replica.apply(batch, idempotencyKey: "sync-2026-11-25")
/// try await replica.follow()  // until cancelled
/// ```
///
/// Every rule of replication is `ReplicaCore`'s, in the core library; this type opens, clones
/// and publishes replicas whose remote log is PostgreSQL (`PostgresLog`).
public final class Replica: Sendable {
  /// The local store: read it as any ledger. After the replica applies a migration (its own
  /// or another machine's) this is a new `Ledger` under the new model version; one taken
  /// before throws `LedgerError.modelChanged`.
  public var ledger: Ledger { core.ledger }
  /// The remote log.
  public let remote: RemoteLocation
  let core: ReplicaCore<PostgresLog>

  init(ledger: Ledger, remote: RemoteLocation, logger: Logger) {
    self.remote = remote
    self.core = ReplicaCore(ledger: ledger, log: PostgresLog(location: remote, logger: logger), logger: logger)
  }

  private init(core: ReplicaCore<PostgresLog>, remote: RemoteLocation) {
    self.remote = remote
    self.core = core
  }

  /// The replica of `ledger`'s store, its remote the one it remembers (the password from
  /// `PGPASSWORD`), or nil when the store is not a replica.
  public static func ifReplica(
    _ ledger: Ledger, logger: Logger = Logger(label: "JSONLedgerPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
  ) throws -> Replica? {
    guard let source = try ledger.replicaSource else { return nil }
    return Replica(ledger: ledger, remote: try RemoteLocation.remembered(source), logger: logger)
  }

  /// Opens the replica at `path` (a store made by `publish` or `clone`), its remote the one
  /// it remembers, with the password from `PGPASSWORD`.
  public static func open(
    at path: String, options: Ledger.Options = Ledger.Options(),
    logger: Logger = Logger(label: "JSONLedgerPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
  ) throws -> Replica {
    let ledger = try Ledger.open(at: path, options: options)
    guard let replica = try ifReplica(ledger, logger: logger) else {
      ledger.close()
      throw RemoteError.unsupported("\(path) is not a replica: publish it (remote init) or clone one")
    }
    return replica
  }

  /// Opens the replica at `path` as an app starts one. A missing or empty folder is first
  /// cloned from `remote`; a store that is a replica of another remote or ledger than `remote`
  /// is refused. With `model` (the app's), a store whose model differs is first caught up
  /// (`sync`: another machine may have migrated it already); a model that still differs throws
  /// `LedgerError.modelDiffers`, or, with `migration: .automatic`, is migrated to through the
  /// remote (`migrate(to:)`), and every other replica follows.
  ///
  /// ```swift
  /// let replica = try await Replica.open(
  ///   at: "/var/cache/bands", model: model, remote: remote, migration: .automatic)
  /// ```
  public static func open(
    at path: String, model: Model?, remote: RemoteLocation? = nil, migration: Ledger.Migration = .none,
    options: Ledger.Options = Ledger.Options(),
    logger: Logger = Logger(label: "JSONLedgerPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
  ) async throws -> Replica {
    let isEmpty = (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty ?? true
    let replica: Replica
    if isEmpty {
      guard let remote else {
        throw RemoteError.unsupported("\(path) holds no store: give the remote to clone it from")
      }
      replica = try await clone(from: remote, into: path, options: options, logger: logger)
    } else {
      replica = try open(at: path, options: options, logger: logger)
    }
    do {
      if let remote, let source = try replica.ledger.replicaSource, !remote.isRemembered(source) {
        throw RemoteError.unsupported("\(path) is a replica of \(source), not of \(remote.remembered)")
      }
      guard let model, let difference = try modelDifference(at: path, from: model, options: options) else {
        return replica
      }
      try await replica.sync()
      guard try modelDifference(at: path, from: model, options: options) != nil else { return replica }
      guard migration == .automatic else { throw difference }
      try await replica.migrate(to: model)
      return replica
    } catch {
      replica.ledger.close()
      throw error
    }
  }

  /// What `Ledger.open(at:model:)` says of `model` against the store's: nil when they are the
  /// same, else its `modelDiffers` error.
  private static func modelDifference(at path: String, from model: Model, options: Ledger.Options) throws
    -> LedgerError?
  {
    do {
      try Ledger.open(at: path, model: model, options: options).close()
      return nil
    } catch let error as LedgerError where error.code == .modelDiffers {
      return error
    }
  }

  /// Builds a new replica at `path` from the remote's log, then verifies it: from the newest
  /// snapshot (a replica's compaction published it) and the batches after it, or from batch 1
  /// when there is none or `fromSnapshot` is false. With `reset`, a store already at `path` is
  /// replaced once the new one is whole (how a diverged replica recovers); without, it is
  /// refused. With `backup` (a `jsonledger backup` of a store of this ledger), the new replica
  /// starts from a copy of it and applies only the batches after its head, once its head
  /// record's checksum is found to be the remote's.
  ///
  /// The store is built at `PATH.cloning`. A store it replaces is moved to `PATH.replaced`,
  /// and removed once the new one is at `PATH`, as is one a reset left there when it was
  /// interrupted between the two moves.
  public static func clone(
    from remote: RemoteLocation, into path: String, reset: Bool = false, fromBackup backup: String? = nil,
    fromSnapshot: Bool = true, options: Ledger.Options = Ledger.Options(),
    logger: Logger = Logger(label: "JSONLedgerPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
  ) async throws -> Replica {
    let core = try await ReplicaCore.clone(
      from: PostgresLog(location: remote, logger: logger), into: path, reset: reset, fromBackup: backup,
      fromSnapshot: fromSnapshot, options: options, logger: logger)
    return Replica(core: core, remote: remote)
  }

  // MARK: - Catching up and writing

  /// What `sync` did.
  public typealias SyncReport = JSONLedger.SyncReport
  /// Where the replica stands against its remote.
  public typealias Status = ReplicaStatus
  /// What `verifyAgainstRemote` found.
  public typealias Verification = ReplicaVerification

  /// Applies the records the remote holds past the local head, once.
  @discardableResult
  public func sync() async throws -> SyncReport { try await core.sync() }

  /// Waits until the local store holds batch `batch` (a batch another machine wrote: read
  /// your writes across machines), or throws `RemoteError.timedOut`.
  public func waitFor(batch: UInt64, timeout: Duration = .seconds(30)) async throws {
    try await core.waitFor(batch: batch, timeout: timeout)
  }

  /// Applies `batch` through the remote: the head lock taken, the store caught up, the batch
  /// resolved against that state, its record committed to PostgreSQL, then to the store.
  /// `idempotencyKey` and `expectedHead` are checked under the lock, against every machine's
  /// batches. A lost commit acknowledgement is resolved by the key: applying again with it
  /// answers the batch that was committed (`wasAlreadyApplied`). Applies of this replica that
  /// wait for the lock together are written together: their records in one PostgreSQL
  /// transaction, each batch still all or nothing.
  public func apply(
    _ batch: ChangeBatch, message: String? = nil, author: String? = nil, source: String? = nil,
    idempotencyKey: String? = nil, expectedHead: UInt64? = nil
  ) async throws -> BatchSummary {
    try await core.apply(
      batch, message: message, author: author, source: source, idempotencyKey: idempotencyKey,
      expectedHead: expectedHead)
  }

  /// Runs one write of `body` on the store (an import, a revert, a rewind) through the
  /// remote, as `apply` does a batch. `body` writes at most one record.
  public func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    try await core.write(what, body)
  }

  /// Migrates the store to `model` through the remote (`Ledger.migrate(to:allowingRemovals:)`):
  /// under the head lock, caught up, the migration's record committed to PostgreSQL with the
  /// new model's definition, then to the store. Every other replica migrates when it applies
  /// the record. `ledger` is then a new `Ledger` under the new version.
  @discardableResult
  public func migrate(to model: Model, allowingRemovals: Bool = false) async throws -> MigrationReport {
    try await write("a migration") { ledger in try ledger.migrate(to: model, allowingRemovals: allowingRemovals) }
  }

  /// Applies the remote's records as they are committed, until cancelled (or, with
  /// `untilCaughtUp`, until the local head reaches the remote's head as it was when this call
  /// began).
  ///
  /// A notification (PostgreSQL `LISTEN`) wakes it at once; the log is read by batch id, so a
  /// lost or repeated notification costs nothing, and it also polls every `pollInterval`. A
  /// session that fails or stalls (a call that does not answer is abandoned after its
  /// deadline) is started again after a pause; a diverged or unsupported record stops it with
  /// the error, nothing of that record applied.
  ///
  /// - Parameters:
  ///   - untilCaughtUp: return once the local head reaches the remote's head as it was when
  ///     the call began, instead of following until cancelled.
  ///   - pollInterval: how often the remote's head is read besides its notifications.
  ///   - progress: called after each catch-up that applied records, with the local head.
  public func follow(
    untilCaughtUp: Bool = false, pollInterval: Duration = .seconds(1),
    progress: @escaping @Sendable (SyncReport) -> Void = { _ in }
  ) async throws {
    try await core.follow(untilCaughtUp: untilCaughtUp, pollInterval: pollInterval, progress: progress)
  }

  // MARK: - Compacting and checking

  /// Compacts the store (`Ledger.compact(keepingBatches:before:archive:discarding:)`) and
  /// publishes its checkpoint as a snapshot, from which new replicas start (`clone`). The
  /// remote's log is not pruned: it keeps every batch, and other replicas are not affected.
  /// Run again, it publishes the store's checkpoint if an earlier run could not.
  @discardableResult
  public func compact(
    keepingBatches count: Int? = nil, before date: Date? = nil, archive: String?, discarding: Bool = false
  ) async throws -> CompactReport {
    try await core.compact(keepingBatches: count, before: date, archive: archive, discarding: discarding)
  }

  /// The local head, the remote head, and the lag between them.
  public func status() async throws -> Status { try await core.status() }

  /// Checks that the remote's log chains (each record's previous checksum the one before's)
  /// and that every record the replica holds is the remote's, byte for byte by checksum; then
  /// verifies the store itself. Throws `RemoteError.diverged` or `.corruptRecord` naming the
  /// first batch that differs.
  public func verifyAgainstRemote() async throws -> Verification { try await core.verifyAgainstRemote() }
}

/// A replica's writes go through its remote (`write(_:_:)`).
extension Replica: LedgerWrites {}
