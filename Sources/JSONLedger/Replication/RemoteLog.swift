public import Foundation

/// A log of records kept elsewhere that the replicas of one ledger share: what a transport
/// (`JSONLedgerPostgres`, an in-process log in the tests) provides for `ReplicaCore`, which
/// holds every rule of replication (the chain, the catch-up, the gated write, clone and
/// snapshots).
///
/// The log is a chain: each record names its batch (the head's + 1) and the digest of the
/// record before it (``genesisDigest`` before batch 1). A head says where the chain ends and
/// which model version it is under; a write takes the head's lock first, so that writers of
/// every machine append in turn.
@_spi(Replication) public protocol RemoteLog: Sendable, CustomStringConvertible {
  associatedtype Session: RemoteLogSession

  /// The ledger's name on the remote, for messages.
  var ledgerName: String { get }

  /// How a replica's store remembers the log (without secrets): `Ledger.replicaSource`.
  var remembered: String { get }

  /// Where the log's calls run (nil: wherever the caller runs). A write's append is made from
  /// a store's writer thread, which blocks until it answers: a transport whose calls must not
  /// share the cooperative pool with blocking work names its executor here.
  var executor: (any TaskExecutor)? { get }

  /// The digest of a record's bytes: the link of the chain.
  func digest(of record: [UInt8]) -> [UInt8]

  /// The digest the chain starts from: what batch 1's record names as the one before it.
  var genesisDigest: [UInt8] { get }

  /// Runs `body` with a session, which the log may keep for the next call; a session whose
  /// body threw is not kept.
  func withSession<R: Sendable>(_ body: (Session) async throws -> R) async throws -> R

  /// Runs `body` with a session of its own and a signal the log rings whenever its head may
  /// have moved: how a follower hears of new records without asking all the time. A lost or
  /// repeated ring costs nothing (the follower reads by batch id).
  func withWatchedSession<R: Sendable>(_ body: (Session, HeadSignal) async throws -> R) async throws -> R
}

/// One session with a remote log (a connection): the calls a replica makes, each under a
/// deadline of the transport's (one that does not answer throws `RemoteError.timedOut`).
@_spi(Replication) public protocol RemoteLogSession: Sendable {
  /// Whether the session is known to be over (the other side closed it): a follower starts
  /// another at once rather than waiting for a call's deadline.
  var isClosed: Bool { get }

  /// Checks that the remote holds a log in a form this library reads (`RemoteError.schema`).
  func checkFormat() async throws

  /// The head as it is now.
  func head() async throws -> RemoteHead

  /// Takes the head's lock (waiting for another writer's) and reads it: held until `append`
  /// commits a record or `releaseHead` lets it go. A session cut off while it holds the lock
  /// loses it.
  func lockHead() async throws -> RemoteHead

  /// Appends `record` after the locked head, moving the log's model to `model` (every version
  /// of it, as text) when the record is a migration, and commits: the head's lock is let go.
  func append(_ record: RemoteRecord, movingModelTo model: String?) async throws

  /// Appends `records`, in order, after the locked head, none of them a migration, and
  /// commits: all of them or none. The head's lock is let go. The path of a replica's writes
  /// that waited for the lock together.
  func append(contentsOf records: [RemoteRecord]) async throws

  /// Lets the head's lock go without appending.
  func releaseHead() async throws

  /// Up to `limit` records after batch `batch`, in order.
  func records(after batch: UInt64, limit: Int) async throws -> [RemoteRecord]

  /// The digest of the record of `batch`, or nil when the log has none.
  func digest(ofBatch batch: UInt64) async throws -> [UInt8]?

  /// The newest snapshot at or before `batch`, checked whole, or nil.
  func newestSnapshot(atOrBefore batch: UInt64) async throws -> RemoteSnapshot?

  /// Keeps `snapshot`; one already kept for its batch stays.
  func publish(_ snapshot: RemoteSnapshot) async throws

  /// Notes where the follower `follower` is (for the remote's operators; best effort).
  func recordPosition(follower: String, head: UInt64) async throws

  /// The bytes the ledger's log takes on the remote.
  func storedBytes() async throws -> Int64
}

/// Where a remote log's chain ends.
@_spi(Replication) public struct RemoteHead: Sendable, Equatable {
  /// The newest batch (0: none yet).
  public var batchID: UInt64
  /// The digest of the newest batch's record (the genesis digest when there is none).
  public var digest: [UInt8]
  /// The first batch the log holds.
  public var firstBatch: UInt64
  /// The model version the newest record is under.
  public var modelVersion: UInt32
  /// Every version of the ledger's model, as text (`Ledger.modelDefinition`).
  public var model: String
  /// When the head last moved.
  public var updatedAt: Date

  public init(
    batchID: UInt64, digest: [UInt8], firstBatch: UInt64, modelVersion: UInt32, model: String, updatedAt: Date
  ) {
    self.batchID = batchID
    self.digest = digest
    self.firstBatch = firstBatch
    self.modelVersion = modelVersion
    self.model = model
    self.updatedAt = updatedAt
  }
}

/// One record of a remote log, with what the log says of it.
@_spi(Replication) public struct RemoteRecord: Sendable, Equatable {
  public var batchID: UInt64
  /// Its kind's name (`ChangeRecord.Kind.description`).
  public var kind: String
  public var modelVersion: UInt32
  public var idempotencyKey: String?
  /// The digest of the record before it.
  public var previousDigest: [UInt8]
  /// The digest of its bytes.
  public var digest: [UInt8]
  /// Who appended it (host and process), when the log says.
  public var writer: String?
  /// The record's bytes, as a store's log holds them.
  public var bytes: [UInt8]

  public init(
    batchID: UInt64, kind: String, modelVersion: UInt32, idempotencyKey: String? = nil, previousDigest: [UInt8],
    digest: [UInt8], writer: String? = nil, bytes: [UInt8]
  ) {
    self.batchID = batchID
    self.kind = kind
    self.modelVersion = modelVersion
    self.idempotencyKey = idempotencyKey
    self.previousDigest = previousDigest
    self.digest = digest
    self.writer = writer
    self.bytes = bytes
  }
}

/// A checkpoint standing for a remote log up to its batch: where a new replica may start.
@_spi(Replication) public struct RemoteSnapshot: Sendable, Equatable {
  public var batchID: UInt64
  public var modelVersion: UInt32
  /// The digest of the log's record of `batchID`, which the checkpoint stands for.
  public var logDigest: [UInt8]
  /// The checkpoint record's bytes.
  public var bytes: [UInt8]
  /// Who published it.
  public var writer: String?

  public init(batchID: UInt64, modelVersion: UInt32, logDigest: [UInt8], bytes: [UInt8], writer: String? = nil) {
    self.batchID = batchID
    self.modelVersion = modelVersion
    self.logDigest = logDigest
    self.bytes = bytes
    self.writer = writer
  }
}
