import Foundation
@_spi(Replication) public import JSONLedger
import JSONLedgerSupport
public import Logging
import PostgresNIO
import Synchronization

extension Replica {
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
    if wasMarked == nil {
      try await runBlocking("JSONLedgerPostgres.store") { try ledger.setReplicaSource(remote.remembered) }
    }
    // Whether the remote is known to hold no log of this store, so that the mark may go.
    let unpublished = Mutex(wasMarked == nil)
    do {
      // The session on `RemoteExecutor`, as every other one: it reads the store between calls.
      try await onRemoteExecutor {
        let connection = try await RemoteConnection.open(remote, logger: logger)
        defer { connection.close() }
        if wasMarked != nil {
          switch try await publishedLog(of: ledger, head: head, model: model, on: connection) {
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
        try await connection.commit("the publish's commit")
      }
    } catch {
      if unpublished.withLock({ $0 }) {
        _ = try? await runBlocking("JSONLedgerPostgres.store") { try ledger.setReplicaSource(nil) }
      }
      throw error
    }
    return Replica(ledger: ledger, remote: remote, logger: logger)
  }

  /// What the remote's ledger of a store's name holds of that store's log (up to `head`).
  private enum PublishedLog {
    /// Its log, perhaps with batches after it.
    case ours
    /// No ledger of that name.
    case none
    /// The log of another store.
    case another
    /// A log that starts after `head` (compacted): which store's it is cannot be told.
    case unknown(start: UInt64)
  }

  private static func publishedLog(
    of ledger: Ledger, head: UInt64, model: String, on connection: RemoteConnection
  ) async throws -> PublishedLog {
    guard try await connection.schemaVersion() != nil else { return .none }
    let row: LedgerRow
    do { row = try await connection.ledgerRow() } catch RemoteError.Code.ledgerNotFound { return .none }
    // A replica's store is never ahead of its remote.
    guard row.head >= head else { return .another }
    // An empty log is every log's start: the one the publish began is the one with no batch
    // yet and this store's model.
    guard head > 0 else { return row.head == 0 && row.model == model ? .ours : .another }
    guard let checksum = try await connection.checksum(of: head) else { return .unknown(start: row.firstBatch) }
    return checksum == RecordDigest.of(try ledger.encodedRecord(head)) ? .ours : .another
  }

  /// Creates the tables when the database has none, then the ledger's row and its log,
  /// batches 1 to `head` of `ledger` as they are, in a transaction on `connection` that the
  /// caller commits.
  private static func upload(
    _ ledger: Ledger, head: UInt64, model: String, to connection: RemoteConnection, as name: String
  ) async throws {
    try await connection.begin()
    try await connection.createLedger(name, model: model)
    var previous = RecordDigest.genesis
    let writer = ReplicaCore<PostgresLog>.thisWriter
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
}
