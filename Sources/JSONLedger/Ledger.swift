import Foundation
import JSONLedgerSupport
public import LMDB
public import Logging
import Synchronization

/// A store of JSON-mapped objects kept as an append-only log of change records in LMDB, with
/// projections for fast current and point-in-time reads.
///
/// ```swift
/// let ledger = try Ledger.open(at: "/var/cache/bands", model: model)
/// var batch = ledger.makeBatch()
/// try batch.stage(json, as: "Band")
/// let summary = try await ledger.apply(batch, message: "import from /bands")
/// let japan = try ledger.read { view in try view.object("Band", key: "Japan") }
/// ```
///
/// One writer at a time (applies are queued on the ledger's own writer thread), and applies
/// that wait for it at once commit together, each batch still all or nothing; any number of
/// readers, in this process and others, each seeing whole batches only.
public final class Ledger: Sendable {
  /// The store directory.
  public let path: String
  /// The store's model: the one it was created with, or the one it was last migrated to.
  public var model: Model { versions.model }
  /// Every version of the model the store had; records are read in the current one's terms.
  let versions: ModelVersions
  /// The version of `model` among the store's (1 until the store is first migrated); new
  /// batches are written under it.
  public var modelVersion: UInt32 { versions.current }
  /// The LMDB environment, shared with every other `Ledger` of this path in the process;
  /// nil once `close()` was called.
  private let openEnvironment: Mutex<Environment?>
  let layout: StoreLayout
  let transformers: ValueTransformers
  /// `Options.logger`.
  let logger: Logger
  let writer: WriteQueue
  /// Marks the batches this instance made (`ChangeBatch.origin`): what their staging read
  /// from the store is trusted only by the store it was read from.
  let batchOrigin: UInt64
  /// What each new record written through this instance passes through before its
  /// transaction commits: a replica's remote append, given to one write
  /// (`committing(through:)`); nil elsewhere.
  let recordGate: RecordGate?
  /// Records the remote holds and the store lacks, which the first write through this
  /// instance folds in its own transaction before its body (`committing(through:after:)`);
  /// nil elsewhere.
  let catchUp: CatchUpRecords?
  /// The mapper every batch of this instance stages through, made for the first: its key
  /// tables and the model's digest depend on the model and transformers alone, and making them
  /// cost a small batch more than resolving and folding it (RESULTS.md).
  private let mappers: Mapper.Cache

  /// The version of the store format this library writes and reads (`StoreFormat.version`).
  public static var formatVersion: Int { Int(StoreFormat.version) }

  /// What a commit guarantees on disk: `full` (the default) flushes every commit; `noMetaSync`
  /// may lose the last commit on a machine crash; `noSync` loses nothing on a process crash
  /// but may lose recent commits on a machine crash.
  public typealias Durability = Environment.Durability

  /// Settings for opening a store.
  public struct Options: Sendable {
    /// What a commit guarantees on disk (full by default).
    public var durability: Durability = .full
    /// Value transformers the model refers to by name.
    public var transformers = ValueTransformers()
    /// Permission bits of new store files (owner read/write by default).
    public var filePermissions: UInt32 = 0o600
    /// The initial LMDB map size; it grows by itself.
    public var initialMapSize = 64 << 20
    /// Where the ledger logs what it does: opening and creating (debug), each applied batch,
    /// revert and rewind with its counts and duration (info), a refused revert (notice). Off
    /// unless you pass a logger of yours.
    public var logger = Logger(label: "JSONLedger", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Whether opening an existing store first walks every page of its data file
    /// (`Ledger.checkPages()`): a damaged file is then an error instead of a crash in LMDB,
    /// for the cost of reading the file once. Off by default; the command line tool turns it
    /// on for stores up to 256 MB, and `verify` always walks.
    public var checksPagesOnOpen = false
    /// Whether the store is opened without write access, as GRDB's `Configuration.readonly`:
    /// every write (apply, revert, rewind, migrate, compact) throws `LedgerError.readOnly`
    /// before any work, and a missing store is not created. It reads a store on a read-only
    /// file system (a snapshot, a read-only mount), where LMDB takes no locks: nothing may
    /// write the store while it is open there. Elsewhere the process still needs write
    /// access to `lock.mdb`, where every LMDB reader takes its slot. A process cannot have one
    /// store open both read-only and for writing.
    public var readOnly = false
    /// The defaults.
    public init() {}
  }

  init(path: String, versions: ModelVersions, environment: Environment, layout: StoreLayout, options: Options) {
    self.path = path
    // From the environment, which every way of making a `Ledger` shares (`reopened()` too).
    self.writer = WriteQueue(readOnlyPath: environment.options.readOnly ? path : nil)
    self.versions = versions
    self.openEnvironment = Mutex(environment)
    self.layout = layout
    self.transformers = options.transformers
    self.logger = options.logger
    self.batchOrigin = UInt64.random(in: 1...UInt64.max)
    self.recordGate = nil
    self.catchUp = nil
    self.mappers = Mapper.Cache(model: versions.model, transformers: options.transformers)
    logger.debug("opened store", metadata: ["store": "\(path)", "entities": "\(model.entities.count)"])
  }

  /// `base` for one write whose new record passes through `gate`: the same store, writer
  /// thread, subscribers and batch origin.
  private init(
    writingThrough gate: @escaping RecordGate, after catchUp: CatchUpRecords?, of base: Ledger,
    environment: Environment
  ) {
    self.path = base.path
    self.writer = base.writer
    self.versions = base.versions
    self.openEnvironment = Mutex(environment)
    self.layout = base.layout
    self.transformers = base.transformers
    self.logger = base.logger
    self.batchOrigin = base.batchOrigin
    self.recordGate = gate
    self.catchUp = catchUp
    self.mappers = base.mappers
  }

  /// This ledger for one write whose new record passes through `gate` before its transaction
  /// commits (a replica's remote append): a hook of that write, not of the ledger, so that
  /// another write of this process is never handed to it. `catchUp`: the records the store
  /// lacks before that write, which its transaction appends first, so that the store catches
  /// up and writes in one commit.
  func committing(through gate: @escaping RecordGate, after catchUp: CatchUpRecords? = nil) throws -> Ledger {
    Ledger(writingThrough: gate, after: catchUp, of: self, environment: try environment)
  }

  /// The environment, or `LedgerError.closed` after `close()`.
  var environment: Environment {
    get throws(LedgerError) {
      guard let environment = openEnvironment.withLock({ $0 }) else { throw .closed(path: path) }
      return environment
    }
  }

  /// Whether the store was opened read-only (`Options.readOnly`).
  public var isReadOnly: Bool { writer.isReadOnly }

  /// Lets go of the store: every later access of this `Ledger` throws `LedgerError.closed`.
  /// The LMDB environment closes once no other `Ledger` of the same path in this process, and
  /// no read or write still running, holds it. Calling it again does nothing.
  public func close() {
    openEnvironment.withLock { $0 = nil }
  }

  /// Whether `close()` was called.
  public var isClosed: Bool { openEnvironment.withLock { $0 == nil } }

  /// A new, empty batch to stage changes in.
  public func makeBatch() -> ChangeBatch {
    ChangeBatch(mapper: mappers.mapper, origin: batchOrigin) { identities in
      // A store that cannot be read now holds nothing to skip: every object is mapped.
      try? self.registrations(of: identities)
    }
  }

  /// The object id and payload fingerprint the store holds for each identity (0 and 0:
  /// none), and the head they are as of, read in one read transaction: what staging from
  /// JSON text compares each object's text with.
  private func registrations(of identities: [(root: UInt32, identity: [AttributeValue])]) throws
    -> ChangeBatch.StoredRegistrations
  {
    try readTransaction { txn in
      try checkModelVersion(txn)
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      var key: [UInt8] = []
      let found = try identities.map { entry in
        OrderedEncoding.encodeIdentity(root: entry.root, entry.identity, into: &key)
        guard let registration = try store.registration(encodedIdentity: key) else { return (UInt64(0), UInt64(0)) }
        return (registration.id, registration.payloadFingerprint)
      }
      return (try store.head(), found)
    }
  }

  /// The id of the last applied batch (0 when the log is empty).
  public var head: UInt64 {
    get throws {
      try readTransaction { txn in try ProjectionStore(transaction: txn, layout: layout, model: model).head() }
    }
  }

  // MARK: - Writing

  /// Applies a batch: appends one change record and updates the projections, in one LMDB
  /// write transaction on the ledger's writer thread. All of it is durable, or none.
  ///
  /// - Parameters:
  ///   - batch: the staged batch.
  ///   - message: why, kept in the record.
  ///   - author: who, kept in the record.
  ///   - source: where the data came from (a file name, a URL).
  ///   - idempotencyKey: a batch already applied with this key makes this call a no-op that
  ///     answers the first batch's summary (`wasAlreadyApplied`).
  ///   - expectedHead: fail with `LedgerError.headMoved` unless the log head is this batch id.
  ///   - localValues: local values (`setLocalValues(_:)`) kept in the batch's transaction:
  ///     with the batch, and also when it writes no record (already applied, or nothing
  ///     changed); not when it fails. What a sync job asks with next time (a `since` value,
  ///     ETags) is so never ahead of the data, nor behind it.
  public func apply(
    _ batch: ChangeBatch, message: String? = nil, author: String? = nil, source: String? = nil,
    idempotencyKey: String? = nil, expectedHead: UInt64? = nil,
    keeping localValues: [(key: String, value: [UInt8]?)] = []
  ) async throws -> BatchSummary {
    let metadata = ChangeRecord.Metadata(
      message: message, author: author, source: source, idempotencyKey: idempotencyKey)
    let stored = try Self.localValuesStored(localValues)
    // Applies waiting together commit together (`perform(joiningOthers:)`).
    return try await perform(joiningOthers: true) {
      try self.applying(batch, metadata: metadata, expectedHead: expectedHead, keeping: stored)
    }
  }

  /// `apply`, blocking the calling thread until the batch is committed.
  public func applySynchronously(
    _ batch: ChangeBatch, message: String? = nil, author: String? = nil, source: String? = nil,
    idempotencyKey: String? = nil, expectedHead: UInt64? = nil,
    keeping localValues: [(key: String, value: [UInt8]?)] = []
  ) throws -> BatchSummary {
    let metadata = ChangeRecord.Metadata(
      message: message, author: author, source: source, idempotencyKey: idempotencyKey)
    let stored = try Self.localValuesStored(localValues)
    return try perform(joiningOthers: true) {
      try applying(batch, metadata: metadata, expectedHead: expectedHead, keeping: stored)
    }
  }

  /// The write that applies `batch`: its record, unless the store already holds all of it.
  func applying(
    _ batch: ChangeBatch, metadata given: ChangeRecord.Metadata, expectedHead: UInt64?,
    keeping localValues: [(key: [UInt8], value: [UInt8]?)]
  ) throws -> Write<BatchSummary> {
    var metadata = given
    metadata.envelope = batch.envelopeMetadata
    metadata.run = batch.run
    guard batch.mapper.model == model else {
      throw LedgerError.invalidBatch("the batch was made by a ledger with another model")
    }
    let onlyDeletions =
      !batch.steps.isEmpty && batch.steps.allSatisfy { if case .deletion = $0 { true } else { false } }
    var write = importing(
      metadata: metadata, expectedHead: expectedHead, estimatedObjects: batch.stagedObjectCount,
      kind: onlyDeletions ? .delete : .import
    ) { resolver in
      try resolver.resolve(batch)
    }
    write.localValues = localValues
    return write
  }

  // MARK: - Reading

  /// Throws `LedgerError.modelChanged` when the store was migrated since this `Ledger` opened
  /// it: its model no longer reads the store's states, nor writes records the store can read.
  func checkModelVersion(_ txn: Transaction, _ versions: ModelVersions? = nil) throws {
    let expected = (versions ?? self.versions).current
    let stored = try txn.bigEndianNumber(forKey: MetaKey.modelVersion, in: layout.meta, as: UInt32.self) ?? 1
    guard stored == expected else {
      throw LedgerError.modelChanged(path: path, storeVersion: stored, openedVersion: expected)
    }
  }

  /// `body` in a read transaction of the store, a storage engine failure said as a ledger
  /// error: what the public reads of the log and the head go through.
  func readTransaction<R>(_ body: (Transaction) throws -> R) throws -> R {
    try LedgerError.wrappingStorageErrors { try environment.read(body) }
  }

  /// Runs `body` with a view of the current state.
  public func read<R>(_ body: (borrowing View) throws -> R) throws -> R {
    try LedgerError.wrappingStorageErrors {
      try environment.read { txn in
        try checkModelVersion(txn)
        return try body(View(transaction: txn, layout: layout, model: model, transformers: transformers, asOf: nil))
      }
    }
  }

  /// Runs `body` with a view of the state right after batch `batchID`.
  public func read<R>(asOf batchID: UInt64, _ body: (borrowing View) throws -> R) throws -> R {
    try LedgerError.wrappingStorageErrors {
      try environment.read { txn in
        try checkModelVersion(txn)
        return try body(View(transaction: txn, layout: layout, model: model, transformers: transformers, asOf: batchID))
      }
    }
  }

  /// Runs `body` with a view of the current state, off the caller's executor.
  public func read<R: Sendable>(_ body: @escaping @Sendable (borrowing View) throws -> R) async throws -> R {
    try await runBriefly { try self.read(body) }
  }

  /// Runs `body` with a view of the state after batch `batchID`, off the caller's executor.
  public func read<R: Sendable>(asOf batchID: UInt64, _ body: @escaping @Sendable (borrowing View) throws -> R)
    async throws -> R
  {
    try await runBriefly { try self.read(asOf: batchID, body) }
  }

  /// `changes`: which of its changes are built (`RecordCoding.decode(_:model:changes:)`).
  func readRecord(_ batchID: UInt64, _ txn: Transaction, changes: RecordCoding.ChangesRead = .all) throws
    -> ChangeRecord
  {
    let bytes = try recordBytes(batchID, txn)
    do {
      return try Self.decodeRecord(
        bytes, batchID: batchID, versions: versions, identities: identities(txn), changes: changes)
    } catch {
      // A record that does not read may be one written after another ledger migrated the store.
      try checkModelVersion(txn)
      throw error
    }
  }

  /// The outline of batch `batchID`'s record (`RecordOutline`), or nil when the record was
  /// written under an earlier model version (or in format 3) and must be read whole to be
  /// told in the current model's terms.
  func readOutline(_ batchID: UInt64, _ txn: Transaction) throws -> RecordOutline? {
    let bytes = try recordBytes(batchID, txn)
    do {
      guard let outline = try RecordCoding.outline(bytes, model: versions.model) else { return nil }
      guard outline.header.batchID == batchID else {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "it claims to be batch \(outline.header.batchID)")
      }
      guard outline.header.modelVersion == versions.current else {
        // Refuses a version newer than this ledger knows, as a whole read does.
        _ = try versions.translate(outline.header)
        return nil
      }
      return outline
    } catch {
      try checkModelVersion(txn)
      throw Self.recordError(error, batchID: batchID)
    }
  }

  /// The stored bytes of batch `batchID`'s record; a batch the log does not hold is an error
  /// saying whether it was archived or never written.
  private func recordBytes(_ batchID: UInt64, _ txn: Transaction) throws -> [UInt8] {
    guard let bytes = try txn.value(forKey: StoreKeys.batch(batchID), in: layout.log) else {
      try ProjectionStore(transaction: txn, layout: layout, model: model).extent().checkRecord(batchID)
      throw LedgerError.corruptRecord(batchID: batchID, reason: "it is missing from the log")
    }
    return bytes
  }

  /// Objects' identities as the projections `txn` sees hold them, encoded under `model` (the
  /// store's own by default): what telling an older record needs when an identity changed.
  func identities(_ txn: Transaction, model: Model? = nil) -> RecordTranslation.IdentityLookup {
    let store = ProjectionStore(transaction: txn, layout: layout, model: model ?? self.model)
    return { objectID in try store.header(of: objectID)?.identity }
  }

  /// The record stored as `bytes` for batch `batchID`, in the current model's terms
  /// (`identities`: see `RecordTranslation.IdentityLookup`).
  static func decodeRecord(
    _ bytes: consuming [UInt8], batchID: UInt64, versions: ModelVersions,
    identities: RecordTranslation.IdentityLookup? = nil, changes: RecordCoding.ChangesRead = .all
  ) throws -> ChangeRecord {
    do {
      let record = try RecordCoding.decode(bytes, model: versions.model, changes: changes)
      guard record.batchID == batchID else {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "it claims to be batch \(record.batchID)")
      }
      // A header's changes are none: translating it costs nothing, and still refuses a record
      // of a model version this ledger does not know (the store was migrated since).
      return try versions.translate(consume record, identities: identities)
    } catch {
      throw recordError(error, batchID: batchID)
    }
  }

  /// A failure to read batch `batchID`'s record as the error the library names it by.
  private static func recordError(_ error: any Error, batchID: UInt64) -> any Error {
    switch error {
    case let failure as TranslationFailure:
      return LedgerError.corruptRecord(
        batchID: batchID, reason: "it does not read under the current model (\(failure.place): \(failure.reason))")
    case let failure as RecordCoding.Failure:
      switch failure {
      case .checksum(let stored, let computed):
        return LedgerError.corruptRecord(
          batchID: batchID,
          reason: "checksum mismatch (stored \(String(stored, radix: 16)), computed \(String(computed, radix: 16)))")
      case .unsupportedFormat(let version):
        return LedgerError.corruptRecord(
          batchID: batchID,
          reason: "record format \(version) is not the one this library reads (\(ChangeRecord.formatVersion))")
      case .malformed(let reason):
        return LedgerError.corruptRecord(batchID: batchID, reason: reason)
      }
    default:
      return error
    }
  }

  /// The record of batch `batchID`.
  public func record(_ batchID: UInt64) throws -> ChangeRecord {
    try readTransaction { txn in try readRecord(batchID, txn) }
  }

  /// `record(_:)`, off the caller's executor.
  public func record(_ batchID: UInt64) async throws -> ChangeRecord {
    try await runBriefly { try self.record(batchID) }
  }
}
