import Foundation
@_spi(Replication) import JSONLedger
import Logging
import PostgresNIO
import Synchronization

/// A ledger's log in PostgreSQL (`RemoteSchema`'s tables), as `ReplicaCore` reads and appends
/// it: every session a dedicated connection whose calls run under deadlines on
/// `RemoteExecutor`.
final class PostgresLog: RemoteLog {
  let location: RemoteLocation
  let logger: Logger

  /// Connections kept open between calls (at most two), so that a write or a catch-up does not
  /// pay for a new one. A call that fails closes its connection instead of keeping it (the
  /// server then rolls back its transaction and lets its locks go).
  private let idleConnections = Mutex<[RemoteConnection]>([])

  init(location: RemoteLocation, logger: Logger) {
    self.location = location
    self.logger = logger
  }

  deinit {
    for connection in idleConnections.withLock({ $0 }) { connection.close() }
  }

  var description: String { location.description }
  var ledgerName: String { location.ledger }
  var remembered: String { location.remembered }
  var executor: (any TaskExecutor)? { RemoteExecutor.shared }
  func digest(of record: [UInt8]) -> [UInt8] { RecordDigest.of(record) }
  var genesisDigest: [UInt8] { RecordDigest.genesis }

  func withSession<R: Sendable>(_ body: (PostgresLogSession) async throws -> R) async throws -> R {
    try await onRemoteExecutor { try await withSessionHere(body) }
  }

  private func withSessionHere<R>(_ body: (PostgresLogSession) async throws -> R) async throws -> R {
    let kept = idleConnections.withLock { idle -> RemoteConnection? in
      while let connection = idle.popLast() {
        if !connection.connection.isClosed { return connection }
        connection.close()
      }
      return nil
    }
    let connection: RemoteConnection
    if let kept { connection = kept } else { connection = try await RemoteConnection.open(location, logger: logger) }
    do {
      let result = try await body(PostgresLogSession(connection: connection))
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

  /// A connection that reads and one that listens (PostgreSQL `LISTEN` on the ledger's
  /// channel, which every append notifies), both new. Listening starts before `body` reads:
  /// a batch committed between the two is read, not missed.
  func withWatchedSession<R: Sendable>(_ body: (PostgresLogSession, HeadSignal) async throws -> R) async throws -> R {
    try await onRemoteExecutor {
      let reader = try await RemoteConnection.open(location, logger: logger)
      defer { reader.close() }
      let listener = try await RemoteConnection.open(location, logger: logger)
      defer { listener.close() }
      let signal = HeadSignal()
      let (channel, location) = (location.channel, location)
      let listening = Task(executorPreference: RemoteExecutor.shared) {
        do {
          try await listener.connection.listen(on: channel) { notifications in
            for try await _ in notifications { signal.ring() }
          }
        } catch {}
        signal.end(RemoteError.unavailable("\(location): the server closed the session"))
      }
      defer { listening.cancel() }
      return try await body(PostgresLogSession(connection: reader, headTimeout: .seconds(10)), signal)
    }
  }
}

/// One connection's calls, as `RemoteLogSession` names them.
struct PostgresLogSession: RemoteLogSession {
  let connection: RemoteConnection
  /// How long a read of the head may take (a follower's is short: a stalled session is
  /// started again).
  var headTimeout: Duration = .seconds(30)

  var isClosed: Bool { connection.connection.isClosed }

  func checkFormat() async throws { try await connection.checkSchema() }

  func head() async throws -> RemoteHead {
    RemoteHead(try await connection.ledgerRow(timeout: headTimeout))
  }

  func lockHead() async throws -> RemoteHead { RemoteHead(try await connection.lockLedgerRow()) }

  func append(_ record: RemoteRecord, movingModelTo model: String?) async throws {
    if let model { try await connection.setModel(model, version: record.modelVersion) }
    try await connection.insert(
      batch: record.batchID, kind: record.kind, modelVersion: record.modelVersion,
      idempotencyKey: record.idempotencyKey, previous: record.previousDigest, sha: record.digest,
      writer: record.writer ?? ReplicaCore<PostgresLog>.thisWriter, record: record.bytes)
    try await connection.commit("the commit of batch \(record.batchID)")
  }

  func append(contentsOf records: [RemoteRecord]) async throws {
    guard let first = records.first, let last = records.last else { return try await releaseHead() }
    try await connection.insert(records, writer: ReplicaCore<PostgresLog>.thisWriter)
    try await connection.commit("the commit of batches \(first.batchID) to \(last.batchID)")
  }

  func releaseHead() async throws {
    try await connection.rollback()
  }

  func records(after batch: UInt64, limit: Int) async throws -> [RemoteRecord] {
    try await connection.logRows(after: batch, limit: limit).map { row in
      RemoteRecord(
        batchID: row.batch, kind: row.kind, modelVersion: row.modelVersion, previousDigest: row.previousSHA,
        digest: row.sha, bytes: row.record)
    }
  }

  func digest(ofBatch batch: UInt64) async throws -> [UInt8]? { try await connection.checksum(of: batch) }

  func newestSnapshot(atOrBefore batch: UInt64) async throws -> RemoteSnapshot? {
    try await connection.newestSnapshot(atOrBefore: batch).map { row in
      RemoteSnapshot(batchID: row.batch, modelVersion: row.modelVersion, logDigest: row.logSHA, bytes: row.record)
    }
  }

  func publish(_ snapshot: RemoteSnapshot) async throws {
    try await connection.begin()
    try await connection.upgradeSchema()
    try await connection.insertSnapshot(
      batch: snapshot.batchID, modelVersion: snapshot.modelVersion, logSHA: snapshot.logDigest,
      record: snapshot.bytes, writer: snapshot.writer ?? ReplicaCore<PostgresLog>.thisWriter)
    try await connection.commit("the snapshot's commit")
  }

  func recordPosition(follower: String, head: UInt64) async throws {
    try await connection.recordPosition(follower: follower, head: head)
  }

  func storedBytes() async throws -> Int64 { try await connection.logBytes() }
}

extension RemoteHead {
  init(_ row: LedgerRow) {
    self.init(
      batchID: row.head, digest: row.headSHA, firstBatch: row.firstBatch, modelVersion: row.modelVersion,
      model: row.model, updatedAt: row.updatedAt)
  }
}
