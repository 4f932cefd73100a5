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
public final class Replica: Sendable {
  /// The local store: read it as any ledger. After the replica applies a migration (its own
  /// or another machine's) this is a new `Ledger` under the new model version; one taken
  /// before throws `LedgerError.modelChanged`.
  public var ledger: Ledger { current.withLock { $0 } }
  private let current: Mutex<Ledger>
  /// The remote log.
  public let remote: RemoteLocation
  let logger: Logger
  /// Who appends, as the log's `writer` column names it: host and process.
  static var thisWriter: String { "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)" }

  /// Connections kept open between calls (at most two), so that a write or a catch-up does not
  /// pay for a new one. A call that fails closes its connection instead of keeping it.
  private let idleConnections = Mutex<[RemoteConnection]>([])

  deinit {
    for connection in idleConnections.withLock({ $0 }) { connection.close() }
  }

  /// Runs `body` on a kept connection (or a new one), on `RemoteExecutor`, keeping the
  /// connection afterwards unless `body` threw.
  func withConnection<R>(_ body: (RemoteConnection) async throws -> R) async throws -> R {
    try await onRemoteExecutor { try await withConnectionHere(body) }
  }

  private func withConnectionHere<R>(_ body: (RemoteConnection) async throws -> R) async throws -> R {
    let kept = idleConnections.withLock { idle -> RemoteConnection? in
      while let connection = idle.popLast() {
        if !connection.connection.isClosed { return connection }
        connection.close()
      }
      return nil
    }
    let connection: RemoteConnection
    if let kept { connection = kept } else { connection = try await RemoteConnection.open(remote, logger: logger) }
    do {
      let result = try await body(connection)
      let stays = idleConnections.withLock { idle in
        guard idle.count < 2 else { return false }
        idle.append(connection)
        return true
      }
      if !stays { connection.close() }
      return result
    } catch {
      connection.close()
      throw error
    }
  }

  init(ledger: Ledger, remote: RemoteLocation, logger: Logger) {
    self.current = Mutex(ledger)
    self.remote = remote
    self.logger = logger
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

  // MARK: - Publishing and cloning

  /// Publishes `ledger`'s log to `remote` verbatim (the same batch ids and bytes), creating the
  /// tables when the database has none, and makes the store its first replica. Refused when
  /// the ledger exists there already, when the store was compacted (a remote log starts at
  /// batch 1, for now), or when the store is a replica of another remote. Migration records
  /// go with the rest: each moves the remote's model version as it did the store's.
  ///
  /// The store is marked a replica first, so that no local write slips in between the upload
  /// and the mark. A publish that fails before the remote could have committed takes the mark
  /// back. One that was interrupted (a crash, a kill) leaves the store marked: publishing it
  /// again to the same remote finishes it, or, when the remote holds its log already,
  /// answers the replica it is.
  public static func publish(
    _ ledger: Ledger, to remote: RemoteLocation,
    logger: Logger = Logger(label: "JSONLedgerPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
  ) async throws -> Replica {
    let wasMarked = try ledger.replicaSource
    if let source = wasMarked, !remote.isRemembered(source) {
      throw RemoteError.unsupported("\(ledger.path) is a replica of \(source) already")
    }
    let (first, head) = try ledger.logExtent()
    guard first == 1 else {
      throw RemoteError.unsupported(
        "\(ledger.path) was compacted (its log starts at batch \(first)): only a log from batch 1 can be published")
    }
    // In document order: the order of the entities is part of the model (sorted keys made a
    // clone's model differ from the app's by it).
    let model = String(decoding: JSONWriter(options: []).bytes(from: ledger.modelDefinition), as: UTF8.self)
    if wasMarked == nil { try await offThePool { try ledger.setReplicaSource(remote.remembered) } }
    // Whether the remote is known to hold no log of this store, so that the mark may go.
    let unpublished = Mutex(wasMarked == nil)
    do {
      // The session on `RemoteExecutor`, as every other one: it reads the store between calls.
      try await onRemoteExecutor {
        let connection = try await RemoteConnection.open(remote, logger: logger)
        defer { connection.close() }
        if wasMarked != nil {
          switch try await remoteLog(of: ledger, head: head, model: model, on: connection) {
          case .ours: return
          case .none: unpublished.withLock { $0 = true }
          case .another:
            unpublished.withLock { $0 = true }
            throw RemoteError.ledgerExists(remote.ledger)
          case .unknown(let start):
            throw RemoteError.unsupported(
              "\(ledger.path) is marked a replica of \(remote.remembered), whose log starts at batch \(start), after this store's head (batch \(head)): whether it holds this store's log cannot be told"
            )
          }
        }
        try await upload(ledger, head: head, model: model, to: connection, as: remote.ledger)
        // From here the remote may have committed, answered or not: the mark stays, and
        // publishing again finds out.
        unpublished.withLock { $0 = false }
        try await connection.rows("COMMIT", "COMMIT")
      }
    } catch {
      if unpublished.withLock({ $0 }) { _ = try? await offThePool { try ledger.setReplicaSource(nil) } }
      throw error
    }
    return Replica(ledger: ledger, remote: remote, logger: logger)
  }

  /// What the remote's ledger of a store's name holds of that store's log (up to `head`).
  private enum RemoteLog {
    /// Its log, perhaps with batches after it.
    case ours
    /// No ledger of that name.
    case none
    /// The log of another store.
    case another
    /// A log that starts after `head` (compacted): which store's it is cannot be told.
    case unknown(start: UInt64)
  }

  private static func remoteLog(
    of ledger: Ledger, head: UInt64, model: String, on connection: RemoteConnection
  ) async throws -> RemoteLog {
    guard try await connection.schemaVersion() != nil else { return .none }
    let row: LedgerRow
    do { row = try await connection.ledgerRow() } catch RemoteError.ledgerNotFound { return .none }
    // A replica's store is never ahead of its remote.
    guard row.head >= head else { return .another }
    // An empty log is every log's start: the one the publish began is the one with no batch
    // yet and this store's model.
    guard head > 0 else { return row.head == 0 && row.model == model ? .ours : .another }
    guard let checksum = try await connection.checksum(of: head) else { return .unknown(start: row.logStart) }
    return checksum == RecordDigest.of(try ledger.encodedRecord(head)) ? .ours : .another
  }

  /// Creates the tables when the database has none, then the ledger's row and its log,
  /// batches 1 to `head` of `ledger` as they are, in a transaction on `connection` that the
  /// caller commits.
  private static func upload(
    _ ledger: Ledger, head: UInt64, model: String, to connection: RemoteConnection, as name: String
  ) async throws {
    try await connection.rows("BEGIN", "BEGIN")
    if try await connection.schemaVersion() == nil {
      for statement in RemoteSchema.statements {
        try await connection.rows(PostgresQuery(unsafeSQL: statement), "the schema")
      }
    } else {
      try await connection.checkSchema()
    }
    let existing = try await connection.rows(
      "SELECT 1 FROM jsonledger_ledgers WHERE ledger = \(name)", "the ledger's row")
    guard existing.isEmpty else { throw RemoteError.ledgerExists(name) }
    try await connection.rows(
      """
      INSERT INTO jsonledger_ledgers (ledger, head, head_sha256, model_version, model)
      VALUES (\(name), 0, \(Data(RecordDigest.genesis)), 1, \(model))
      """, "the ledger's row")
    var previous = RecordDigest.genesis
    let writer = thisWriter
    if head > 0 {
      for batch in 1...head {
        let bytes = try ledger.encodedRecord(batch)
        let record = try await ledger.record(batch)
        let sha = RecordDigest.of(bytes)
        if record.kind == .migration { try await connection.setModel(model, version: record.modelVersion) }
        try await connection.insert(
          batch: batch, kind: record.kind.description, modelVersion: record.modelVersion,
          idempotencyKey: record.metadata.idempotencyKey, previous: previous, sha: sha, writer: writer, record: bytes)
        previous = sha
      }
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
    // The session on `RemoteExecutor`, as every other one; the store's writes and the files'
    // copies and moves off it (`offThePool`).
    try await onRemoteExecutor {
      try await cloneHere(
        from: remote, into: path, reset: reset, fromBackup: backup, fromSnapshot: fromSnapshot, options: options,
        logger: logger)
    }
  }

  private static func cloneHere(
    from remote: RemoteLocation, into path: String, reset: Bool, fromBackup backup: String?, fromSnapshot: Bool,
    options: Ledger.Options, logger: Logger
  ) async throws -> Replica {
    let target = URL(fileURLWithPath: path).standardizedFileURL.path
    let exists = FileManager.default.fileExists(atPath: target)
    if exists, !reset, !((try? FileManager.default.contentsOfDirectory(atPath: target))?.isEmpty ?? false) {
      throw RemoteError.unsupported("\(path) exists: clone into a new folder, or replace it with reset")
    }
    // A reset replaces a store, never anything else that happens to be at the path; and the
    // folders a clone builds in are cleared only when they hold what a clone left there.
    if exists, reset, !Ledger.holdsAStoreOrNothing(target) {
      throw RemoteError.unsupported("\(path) is not a store: a reset replaces a store only, so nothing was touched")
    }
    let building = target + ".cloning"
    for leftover in [building, target + ".replaced"] where !Ledger.holdsAStoreOrNothing(leftover) {
      throw RemoteError.unsupported(
        "\(leftover) exists and is not a store a clone left: move it away, then clone again")
    }
    try? FileManager.default.removeItem(atPath: building)
    let connection = try await RemoteConnection.open(remote, logger: logger)
    let row: LedgerRow
    do {
      try await connection.checkSchema()
      row = try await connection.ledgerRow()
    } catch {
      connection.close()
      throw error
    }
    guard row.logStart == 1 else {
      connection.close()
      throw RemoteError.unsupported(
        "the remote ledger \"\(remote.ledger)\" starts at batch \(row.logStart): a clone needs a log from batch 1"
      )
    }
    let definition: JSONValue
    do { definition = try JSONParser.parse(Array(row.model.utf8)) } catch {
      connection.close()
      throw RemoteError.corruptRecord(batch: 0, reason: "the ledger's model does not read: \(error)")
    }
    let replica: Replica
    // Built without a flush per commit, then flushed once: the store takes its place only
    // whole, so a crash meanwhile leaves nothing to trust.
    var noSync = options
    noSync.durability = .noSync
    let buildOptions = noSync
    do {
      let ledger: Ledger
      if let backup {
        ledger = try await offThePool {
          try FileManager.default.copyItem(atPath: backup, toPath: building)
          return try Ledger.open(at: building, options: buildOptions)
        }
        // The backup's versions must be the remote's first ones: the same models, numbered the
        // same; the migrations after its head follow with the tail.
        guard try ledger.hasFirstModelVersions(of: definition) else {
          ledger.close()
          throw RemoteError.unsupported(
            "the backup \(backup) has another model than the remote ledger \"\(remote.ledger)\": it is not a backup of this ledger"
          )
        }
      } else if fromSnapshot, let snapshot = try await connection.newestSnapshot(atOrBefore: row.head) {
        // From the newest snapshot, under the version it was written under; the tail follows.
        guard try await connection.checksum(of: snapshot.batch) == snapshot.logSHA else {
          throw RemoteError.corruptRecord(
            batch: snapshot.batch, reason: "the snapshot stands for another record than the log's")
        }
        let (version, record, digest) = (snapshot.modelVersion, snapshot.record, snapshot.logSHA)
        ledger = try await offThePool {
          let ledger = try Ledger.create(
            at: building, modelDefinition: definition, version: version, options: buildOptions)
          _ = try ledger.startReplica(atCheckpoint: record, digest: digest)
          return ledger
        }
      } else {
        // At the first version: the migration records bring it to the others as they come.
        ledger = try await offThePool {
          try Ledger.create(at: building, modelDefinition: definition, version: 1, options: buildOptions)
        }
      }
      try await offThePool { try ledger.setReplicaSource(remote.remembered) }
      replica = Replica(ledger: ledger, remote: remote, logger: logger)
      _ = try await replica.catchUp(on: connection, to: row.head)
      connection.close()
      _ = try await replica.ledger.verify()
      let built = replica.ledger
      try await offThePool {
        try built.flushToDisk()
        built.close()
        ledger.close()
      }
    } catch {
      connection.close()
      try? FileManager.default.removeItem(atPath: building)
      throw error
    }
    // The new store takes the place of the old one only once it is whole.
    let opened = try await offThePool {
      let old = target + ".replaced"
      if exists {
        try? FileManager.default.removeItem(atPath: old)
        try FileManager.default.moveItem(atPath: target, toPath: old)
      }
      try FileManager.default.moveItem(atPath: building, toPath: target)
      // Gone once the new store is in place: the store it replaced, or one a reset left when
      // it was interrupted between its two moves.
      try? FileManager.default.removeItem(atPath: old)
      return try Ledger.open(at: target, options: options)
    }
    return Replica(ledger: opened, remote: remote, logger: logger)
  }

  // MARK: - Catching up

  /// What `sync` did.
  public struct SyncReport: Sendable, Equatable {
    /// The records applied.
    public var applied: Int
    /// The local head after it.
    public var head: UInt64
  }

  /// Applies the records the remote holds past the local head, once.
  @discardableResult
  public func sync() async throws -> SyncReport {
    try await withConnection { connection in
      let row = try await connection.ledgerRow()
      let applied = try await catchUp(on: connection, to: row.head)
      let head = try ledger.logExtent().head
      if applied > 0 { _ = try? await connection.recordPosition(follower: followerName, head: head) }
      return SyncReport(applied: applied, head: head)
    }
  }

  /// Waits until the local store holds batch `batch` (a batch another machine wrote: read
  /// your writes across machines), or throws `RemoteError.timedOut`.
  public func waitFor(batch: UInt64, timeout: Duration = .seconds(30)) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while try ledger.logExtent().head < batch {
      guard clock.now < deadline else { throw RemoteError.timedOut("batch \(batch)", after: timeout) }
      try await sync()
      if try ledger.logExtent().head < batch { try await Task.sleep(for: .milliseconds(50)) }
    }
  }

  /// Takes the store as it is after a migration it applied: the `Ledger` it reads through
  /// from now on.
  private func reopenAfterMigration() throws {
    let reopened = try ledger.reopened()
    current.withLock { $0 = reopened }
  }

  /// The remote's checksum of the store's record of `batch` (0: the chain's start): its bytes',
  /// or, where the log starts at a checkpoint, the one of the record the checkpoint stands for.
  func remoteChecksum(ofLocal batch: UInt64) throws -> [UInt8] {
    guard batch > 0 else { return RecordDigest.genesis }
    let ledger = self.ledger
    let start = try ledger.logExtent().first
    // A checkpoint stands for the record it replaced, batch 1 included (a compaction of the
    // first batch leaves the log starting at 1, at a checkpoint).
    let startsAtCheckpoint = try start > 1 || ledger.log(limit: 1, before: start + 1).first?.kind == .checkpoint
    guard batch == start, startsAtCheckpoint else { return RecordDigest.of(try ledger.encodedRecord(batch)) }
    guard let digest = try ledger.replicaStartDigest else {
      throw RemoteError.unsupported(
        "\(ledger.path) starts at a checkpoint (batch \(start)) that does not say which remote record it stands for: clone it again (clone --reset)"
      )
    }
    return digest
  }

  var followerName: String { "\(ProcessInfo.processInfo.hostName):\(ledger.path)" }

  /// Applies the remote's records after the local head up to `remoteHead`, each checked: its
  /// batch the next, its previous checksum the local head's, its checksum its bytes', its
  /// model version the store's. A replica whose history differs is refused before anything
  /// is applied (`RemoteError.diverged`).
  func catchUp(on connection: RemoteConnection, to remoteHead: UInt64) async throws -> Int {
    var local = try ledger.logExtent().head
    var localSHA = try remoteChecksum(ofLocal: local)
    if local > remoteHead {
      throw RemoteError.diverged(
        batch: local, local: Hex.string(localSHA),
        remote: "none (the remote's head is batch \(remoteHead): this replica holds batches the remote lacks)")
    }
    if local > 0 {
      let remoteSHA = try await connection.checksum(of: local)
      guard remoteSHA == localSHA else {
        throw RemoteError.diverged(
          batch: local, local: Hex.string(localSHA), remote: remoteSHA.map(Hex.string) ?? "none")
      }
    }
    var applied = 0
    while local < remoteHead {
      let rows = try await connection.logRows(after: local, limit: 256)
      if rows.isEmpty { break }
      for row in rows {
        guard row.batch == local + 1 else {
          throw RemoteError.corruptRecord(batch: row.batch, reason: "the log skips from batch \(local) to it")
        }
        guard row.previousSHA == localSHA else {
          throw RemoteError.diverged(
            batch: local, local: Hex.string(localSHA), remote: Hex.string(row.previousSHA))
        }
        try Self.check(row)
        let ledger = self.ledger
        let bytes = row.record
        if row.kind == ChangeRecord.Kind.migration.description {
          guard row.modelVersion == ledger.modelVersion + 1 else {
            throw RemoteError.corruptRecord(
              batch: row.batch,
              reason:
                "a migration to model version \(row.modelVersion) cannot follow version \(ledger.modelVersion)")
          }
          let definition = try await remoteModel(on: connection, batch: row.batch)
          _ = try await offThePool { try ledger.appendReplicatedMigration(bytes, modelDefinition: definition) }
          try reopenAfterMigration()
        } else {
          guard row.modelVersion == ledger.modelVersion else {
            throw RemoteError.corruptRecord(
              batch: row.batch,
              reason:
                "it is written under model version \(row.modelVersion), but the log before it is at \(ledger.modelVersion)"
            )
          }
          _ = try await offThePool { try ledger.appendReplicated(bytes) }
        }
        local = row.batch
        localSHA = row.sha
        applied += 1
      }
    }
    // The head row and the log agree: a row that says more than the log holds is no log to
    // follow or clone.
    if local < remoteHead {
      throw RemoteError.corruptRecord(
        batch: local + 1,
        reason: "the remote's head row says batch \(remoteHead), but its log ends at batch \(local)")
    }
    return applied
  }

  /// A remote record is what its row says: its bytes have the row's checksum, and they are the
  /// record of the row's batch (not an older record inserted again as the next batch).
  static func check(_ row: LogRow) throws {
    guard RecordDigest.of(row.record) == row.sha else {
      throw RemoteError.corruptRecord(batch: row.batch, reason: "its bytes do not have the checksum its row gives")
    }
    let claimed: UInt64
    do { claimed = try Ledger.batchID(ofRecord: row.record) } catch {
      throw RemoteError.corruptRecord(batch: row.batch, reason: "its bytes are no record: \(error)")
    }
    guard claimed == row.batch else {
      throw RemoteError.corruptRecord(
        batch: row.batch, reason: "its bytes are the record of batch \(claimed), stored again as batch \(row.batch)")
    }
  }

  /// Every version of the remote ledger's model (a migration's record names its version; the
  /// ledger's row keeps them all).
  private func remoteModel(on connection: RemoteConnection, batch: UInt64) async throws -> JSONValue {
    let row = try await connection.ledgerRow()
    do { return try JSONParser.parse(Array(row.model.utf8)) } catch {
      throw RemoteError.corruptRecord(batch: batch, reason: "the ledger's model does not read: \(error)")
    }
  }

  // MARK: - Writing

  /// Applies `batch` through the remote: the head lock taken, the store caught up, the batch
  /// resolved against that state, its record committed to PostgreSQL, then to the store.
  /// `idempotencyKey` and `expectedHead` are checked under the lock, against every machine's
  /// batches. A lost commit acknowledgement is resolved by the key: applying again with it
  /// answers the batch that was committed (`wasAlreadyApplied`).
  public func apply(
    _ batch: ChangeBatch, message: String? = nil, author: String? = nil, source: String? = nil,
    idempotencyKey: String? = nil, expectedHead: UInt64? = nil
  ) async throws -> BatchSummary {
    try await write("a batch") { ledger in
      try ledger.applySynchronously(
        batch, message: message, author: author, source: source, idempotencyKey: idempotencyKey,
        expectedHead: expectedHead)
    }
  }

  /// Runs one write of `body` on the store (an import, a revert, a rewind) through the
  /// remote, as `apply` does a batch. `body` writes at most one record.
  public func write<R: Sendable>(_ what: String, _ body: @escaping @Sendable (Ledger) throws -> R) async throws -> R {
    try await withConnection { connection in try await write(what, on: connection, body) }
  }

  /// Migrates the store to `model` through the remote (`Ledger.migrate(to:allowingRemovals:)`):
  /// under the head lock, caught up, the migration's record committed to PostgreSQL with the
  /// new model's definition, then to the store. Every other replica migrates when it applies
  /// the record. `ledger` is then a new `Ledger` under the new version.
  @discardableResult
  public func migrate(to model: Model, allowingRemovals: Bool = false) async throws -> MigrationReport {
    try await write("a migration") { ledger in try ledger.migrate(to: model, allowingRemovals: allowingRemovals) }
  }

  private func write<R: Sendable>(
    _ what: String, on connection: RemoteConnection, _ body: @escaping @Sendable (Ledger) throws -> R
  ) async throws -> R {
    try await connection.rows("BEGIN", "BEGIN")
    // A writer cut off while it holds the lock loses it when the server notices: its
    // transaction idles, and is ended after this long.
    try await connection.rows("SET LOCAL idle_in_transaction_session_timeout = '20s'", "the session's limits")
    try await connection.rows("SET LOCAL lock_timeout = '60s'", "the session's limits")
    let row = try await connection.ledgerRow(locking: true, timeout: .seconds(70))
    // Caught up, the store follows every migration the remote's log holds.
    _ = try await catchUp(on: connection, to: row.head)
    let ledger = self.ledger
    guard row.modelVersion == ledger.modelVersion else {
      throw RemoteError.corruptRecord(
        batch: row.head,
        reason:
          "the remote ledger says model version \(row.modelVersion), but its log up to here brings this replica to \(ledger.modelVersion)"
      )
    }
    let state = Mutex<(previous: [UInt8], appended: Bool, migrated: Bool)>((row.headSHA, false, false))
    let writer = Self.thisWriter
    let gate: RecordGate = { record in
      let previous = try state.withLock { state -> [UInt8] in
        guard !state.appended else {
          throw RemoteError.unsupported("a write through the remote appends one record: \(what) appended more")
        }
        return state.previous
      }
      // A migration moves the ledger's model in the same transaction: every replica that
      // applies the record finds the version it moves to.
      let model: String?
      if record.kind == .migration {
        guard let definition = record.modelDefinition, record.modelVersion == row.modelVersion + 1 else {
          throw RemoteError.unsupported(
            "a migration through the remote moves the model from version \(row.modelVersion) to the next, with its definition"
          )
        }
        model = String(decoding: JSONWriter(options: []).bytes(from: definition), as: UTF8.self)
      } else {
        model = nil
      }
      let sha = RecordDigest.of(record.bytes)
      try waitBlocking {
        if let model { try await connection.setModel(model, version: record.modelVersion) }
        try await connection.insert(
          batch: record.batchID, kind: record.kind.description, modelVersion: record.modelVersion,
          idempotencyKey: record.idempotencyKey, previous: previous, sha: sha, writer: writer, record: record.bytes)
        try await connection.rows("COMMIT", "the commit of batch \(record.batchID)")
      }
      state.withLock { $0 = (sha, true, model != nil) }
    }
    let result = try await offThePool { try ledger.withRecordGate(gate) { try body(ledger) } }
    let (appended, migrated) = state.withLock { ($0.appended, $0.migrated) }
    if !appended { try await connection.rows("ROLLBACK", "ROLLBACK", timeout: .seconds(5)) }
    if migrated { try reopenAfterMigration() }
    return result
  }

  // MARK: - Compacting

  /// Compacts the store (`Ledger.compact(keepingBatches:before:archive:discarding:)`) and
  /// publishes its checkpoint as a snapshot, from which new replicas start (`clone`). The
  /// remote's log is not pruned: it keeps every batch, and other replicas are not affected.
  /// Run again, it publishes the store's checkpoint if an earlier run could not.
  @discardableResult
  public func compact(
    keepingBatches count: Int? = nil, before date: Date? = nil, archive: String?, discarding: Bool = false
  ) async throws -> CompactReport {
    let ledger = self.ledger
    let report = try await offThePool {
      try ledger.compactReplica(
        keepingBatches: count, before: date, archive: archive, discarding: discarding, digest: RecordDigest.of)
    }
    try await publishSnapshot()
    return report
  }

  /// Publishes the checkpoint the store's log starts at, when it starts at one, once the
  /// remote's record of that batch is found to be the one the checkpoint stands for.
  func publishSnapshot() async throws {
    let ledger = self.ledger
    let start = try ledger.logExtent().first
    guard start > 1 else { return }
    let digest = try remoteChecksum(ofLocal: start)
    let record = try ledger.encodedRecord(start)
    let modelVersion = ledger.modelVersion
    let writer = Self.thisWriter
    try await withConnection { connection in
      let remote = try await connection.checksum(of: start)
      guard remote == digest else {
        throw RemoteError.diverged(batch: start, local: Hex.string(digest), remote: remote.map(Hex.string) ?? "none")
      }
      try await connection.rows("BEGIN", "BEGIN")
      try await connection.upgradeSchema()
      try await connection.insertSnapshot(
        batch: start, modelVersion: modelVersion, logSHA: digest, record: record, writer: writer)
      try await connection.rows("COMMIT", "the snapshot's commit")
    }
  }

  // MARK: - Status

  /// Where the replica stands against its remote.
  public struct Status: Sendable, Equatable {
    public var localHead: UInt64
    public var remoteHead: UInt64
    /// Batches the replica has yet to apply.
    public var lag: UInt64 { remoteHead > localHead ? remoteHead - localHead : 0 }
    /// When the remote's head last moved.
    public var remoteUpdated: Date
    /// The bytes the ledger's rows take in the log table, as PostgreSQL stores them
    /// (compressed records included).
    public var remoteBytes: Int64
  }

  /// The local head, the remote head, and the lag between them.
  public func status() async throws -> Status {
    try await withConnection { connection in try await status(on: connection) }
  }

  private func status(on connection: RemoteConnection) async throws -> Status {
    let row = try await connection.ledgerRow()
    let name = remote.ledger
    let size = try await connection.rows(
      "SELECT coalesce(sum(pg_column_size(l.*)), 0)::bigint FROM jsonledger_log l WHERE ledger = \(name)",
      "the log's size", timeout: .seconds(120))
    return Status(
      localHead: try ledger.logExtent().head, remoteHead: row.head, remoteUpdated: row.updatedAt,
      remoteBytes: try size.first?.decode(Int64.self) ?? 0)
  }

  /// What `verifyAgainstRemote` found.
  public struct Verification: Sendable, Equatable {
    /// The batches compared, local against remote.
    public var batches: UInt64
    /// The remote's head.
    public var remoteHead: UInt64
  }

  /// Checks that the remote's log chains (each record's previous checksum the one before's)
  /// and that every record the replica holds is the remote's, byte for byte by checksum; then
  /// verifies the store itself. Throws `RemoteError.diverged` or `.corruptRecord` naming the
  /// first batch that differs.
  public func verifyAgainstRemote() async throws -> Verification {
    // Every record's bytes are read and checked, not only the checksum columns: a damaged
    // record whose column still holds the old checksum is found.
    let (checksums, remoteHead) = try await withConnection { connection in
      var checksums: [(batch: UInt64, previous: [UInt8], sha: [UInt8])] = []
      var previous = RecordDigest.genesis
      while true {
        let rows = try await connection.logRows(after: UInt64(checksums.count), limit: 256)
        if rows.isEmpty { break }
        for row in rows {
          guard row.batch == UInt64(checksums.count) + 1, row.previousSHA == previous else {
            throw RemoteError.corruptRecord(batch: row.batch, reason: "the remote's chain breaks there")
          }
          try Self.check(row)
          checksums.append((row.batch, row.previousSHA, row.sha))
          previous = row.sha
        }
      }
      return (checksums, try await connection.ledgerRow().head)
    }
    guard remoteHead == UInt64(checksums.count) else {
      throw RemoteError.corruptRecord(
        batch: UInt64(checksums.count) + 1,
        reason: "the remote's head row says batch \(remoteHead), but its log ends at batch \(checksums.count)")
    }
    let (first, head) = try ledger.logExtent()
    guard head <= UInt64(checksums.count) else {
      throw RemoteError.diverged(
        batch: UInt64(checksums.count) + 1, local: "present", remote: "none (the remote's head is \(checksums.count))")
    }
    if head > 0 {
      // A compacted replica's log starts at a checkpoint: from there on.
      for batch in first...head {
        let local = try remoteChecksum(ofLocal: batch)
        let remote = checksums[Int(batch) - 1].sha
        guard local == remote else {
          throw RemoteError.diverged(batch: batch, local: Hex.string(local), remote: Hex.string(remote))
        }
      }
    }
    _ = try await ledger.verify()
    return Verification(batches: head, remoteHead: UInt64(checksums.count))
  }
}
