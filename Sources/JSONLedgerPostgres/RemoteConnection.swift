import Foundation
@_spi(Replication) import JSONLedger
import Logging
import NIOCore
import PostgresNIO

/// One dedicated connection to the remote database, every call under a deadline. A call that
/// does not answer is abandoned and the connection closed without waiting: the server then
/// rolls back whatever transaction it held, and releases its locks.
final class RemoteConnection: Sendable {
  let connection: PostgresConnection
  let location: RemoteLocation
  let logger: Logger

  private init(connection: PostgresConnection, location: RemoteLocation, logger: Logger) {
    self.connection = connection
    self.location = location
    self.logger = logger
  }

  static func open(_ location: RemoteLocation, logger: Logger, timeout: Duration = .seconds(10)) async throws
    -> RemoteConnection
  {
    let configuration = try location.configuration()
    let connection = try await withDeadline(timeout, "a connection to \(location)") {
      do {
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
      } catch {
        throw RemoteConnection.describe(error, location)
      }
    }
    let opened = RemoteConnection(connection: connection, location: location, logger: logger)
    // For the connection's life rather than each transaction's, so that taking the head's lock
    // is two round trips, not four. A writer cut off while it holds the lock loses it when the
    // server notices: its transaction idles, and is ended after 20 s. A lock waited for longer
    // than 60 s is given up.
    do {
      try await opened.rows(
        """
        SELECT set_config('idle_in_transaction_session_timeout', '20s', false), set_config('lock_timeout', '60s', false)
        """, "the session's limits", timeout: timeout)
    } catch {
      opened.close()
      throw error
    }
    return opened
  }

  /// Closes the connection without waiting for the server. The connection is kept until its
  /// channel is closed (the driver requires it); one that never closes is let go with it.
  func close() {
    let connection = self.connection
    connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
  }

  /// Runs `query` and reads its rows, within `timeout`; on a timeout, closes the connection.
  @discardableResult
  func rows(_ query: PostgresQuery, _ what: String, timeout: Duration = .seconds(30)) async throws -> [PostgresRow] {
    let connection = self.connection
    let logger = self.logger
    let location = self.location
    let run: @Sendable () async throws -> [PostgresRow] = {
      do {
        return try await connection.query(query, logger: logger).collect()
      } catch {
        throw RemoteConnection.describe(error, location)
      }
    }
    return try await withDeadline(timeout, what, onTimeout: { [self] in close() }, run)
  }

  /// Begins a transaction: every statement until `commit` or `rollback` is one.
  func begin() async throws { try await rows("BEGIN", "BEGIN") }

  /// Commits the transaction; `what` names it in a timeout's message.
  func commit(_ what: String) async throws { try await rows("COMMIT", what) }

  /// Ends the transaction without its changes.
  func rollback() async throws { try await rows("ROLLBACK", "ROLLBACK", timeout: .seconds(5)) }

  /// A server's or driver's error in the remote's words: refusals with the server's message,
  /// everything else as the remote being unavailable.
  static func describe(_ error: any Error, _ location: RemoteLocation) -> any Error {
    if error is RemoteError { return error }
    guard let error = error as? PSQLError else { return RemoteError.unavailable("\(location): \(error)") }
    if let info = error.serverInfo {
      let message = info[.message] ?? "an error"
      let state = info[.sqlState] ?? ""
      if state == "42P01" {
        return RemoteError.schema("the JSONLedger tables are missing (run remote init): \(message)")
      }
      if state.hasPrefix("08") || state.hasPrefix("57") {
        return RemoteError.unavailable("\(location): \(message) (SQLSTATE \(state))")
      }
      if state == "28P01" || state == "28000" || state == "3D000" {
        return RemoteError.unavailable("\(location): \(message)")
      }
      return RemoteError.refused("\(message) (SQLSTATE \(state))")
    }
    if let underlying = error.underlying { return RemoteError.unavailable("\(location): \(underlying)") }
    return RemoteError.unavailable("\(location): \(error.code)")
  }
}

/// A ledger's row: its head and what a replica needs to start.
struct LedgerRow: Sendable {
  var head: UInt64
  var headSHA: [UInt8]
  /// The first batch the log holds (the `log_start` column).
  var firstBatch: UInt64
  var modelVersion: UInt32
  var model: String
  var updatedAt: Date
}

/// A snapshot: a checkpoint standing for the log up to `batch`.
struct SnapshotRow: Sendable {
  var batch: UInt64
  var modelVersion: UInt32
  /// The SHA-256 of the log's record of `batch`.
  var logSHA: [UInt8]
  var record: [UInt8]
}

/// One row of the log.
struct LogRow: Sendable {
  var batch: UInt64
  var kind: String
  var previousSHA: [UInt8]
  var sha: [UInt8]
  var modelVersion: UInt32
  var record: [UInt8]
}

extension RemoteConnection {
  /// The version of the JSONLedger tables (nil: there are none).
  func schemaVersion() async throws -> Int? {
    let exists = try await rows("SELECT to_regclass('jsonledger_schema') IS NOT NULL", "the schema check")
    guard try exists.first?.decode(Bool.self) == true else { return nil }
    let version = try await rows("SELECT max(version) FROM jsonledger_schema", "the schema version")
    return try version.first?.decode(Int?.self) ?? nil
  }

  /// Checks the tables are there in a version this library knows.
  func checkSchema() async throws {
    guard let version = try await schemaVersion() else {
      throw RemoteError.schema("\(location) has no JSONLedger tables: publish a store there first (remote init)")
    }
    guard version <= RemoteSchema.version else {
      throw RemoteError.schema(
        "\(location) holds JSONLedger tables of version \(version); this library knows \(RemoteSchema.version)")
    }
  }

  /// Brings the tables to this library's version, in the caller's transaction (each step is
  /// idempotent: two machines upgrading at once leave one result).
  func upgradeSchema() async throws {
    try await checkSchema()
    guard var version = try await schemaVersion() else { return }
    while version < RemoteSchema.version {
      for statement in RemoteSchema.upgrades[version] ?? [] {
        try await rows(PostgresQuery(unsafeSQL: statement), "the schema's upgrade to version \(version + 1)")
      }
      version += 1
    }
  }

  /// The newest snapshot at or before `head`, or nil (none, or tables of version 1). Its
  /// parts are read in order and checked whole: their count, length and SHA-256.
  func newestSnapshot(atOrBefore head: UInt64) async throws -> SnapshotRow? {
    guard let version = try await schemaVersion(), version >= 2 else { return nil }
    let ledger = location.ledger
    let found = try await rows(
      version >= 3
        ? """
        SELECT batch, model_version, log_sha256, record, chunks, record_bytes, record_sha256
        FROM jsonledger_snapshots WHERE ledger = \(ledger) AND batch <= \(Int64(head)) ORDER BY batch DESC LIMIT 1
        """
        : """
        SELECT batch, model_version, log_sha256, record, 0, NULL::bigint, NULL::bytea
        FROM jsonledger_snapshots WHERE ledger = \(ledger) AND batch <= \(Int64(head)) ORDER BY batch DESC LIMIT 1
        """, "the newest snapshot", timeout: .seconds(300))
    guard let row = found.first else { return nil }
    let (batch, modelVersion, sha, record, chunks, length, digest) = try row.decode(
      (Int64, Int32, Data, Data, Int32, Int64?, Data?).self)
    var snapshot = SnapshotRow(
      batch: UInt64(max(0, batch)), modelVersion: UInt32(max(0, modelVersion)), logSHA: Array(sha),
      record: Array(record))
    if chunks > 0 {
      snapshot.record = try await snapshotParts(
        of: snapshot.batch, count: Int(chunks), length: length, digest: digest.map(Array.init))
    }
    return snapshot
  }

  /// The checkpoint of the snapshot at `batch` from its `count` parts, read a few at a time;
  /// `length` and `digest` are its row's, which the parts must match.
  private func snapshotParts(of batch: UInt64, count: Int, length: Int64?, digest: [UInt8]?) async throws
    -> [UInt8]
  {
    func corrupt(_ reason: String) -> RemoteError {
      RemoteError.corruptRecord(batch: batch, reason: "its snapshot \(reason)")
    }
    guard let length, length >= 0, length <= Int64(count) * Int64(RemoteSchema.snapshotChunkBytes), let digest
    else {
      throw corrupt("says it has \(count) parts but not their length and checksum")
    }
    let ledger = location.ledger
    var record: [UInt8] = []
    // Reserved up to 64 MB: the length is the row's word, and a damaged row could claim any.
    record.reserveCapacity(Int(min(length, 1 << 26)))
    var next = 0
    while next < count {
      let page = try await rows(
        """
        SELECT chunk, bytes FROM jsonledger_snapshot_chunks
        WHERE ledger = \(ledger) AND batch = \(Int64(batch)) AND chunk >= \(Int32(next)) ORDER BY chunk LIMIT 16
        """, "part \(next + 1) of the snapshot at batch \(batch)", timeout: .seconds(300))
      guard !page.isEmpty else { throw corrupt("has \(next) of its \(count) parts") }
      for row in page {
        let (chunk, bytes) = try row.decode((Int32, Data).self)
        guard next < count else { throw corrupt("has more than its \(count) parts") }
        guard chunk == next else { throw corrupt("lacks part \(next + 1) of \(count)") }
        guard Int64(record.count + bytes.count) <= length else {
          throw corrupt("has more than its \(length) bytes in its parts")
        }
        record.append(contentsOf: bytes)
        next += 1
      }
    }
    guard record.count == Int(length) else {
      throw corrupt("has \(record.count) bytes in its parts where its row says \(length)")
    }
    guard RecordDigest.of(record) == digest else { throw corrupt("does not match its checksum") }
    return record
  }

  /// Keeps `record` (a checkpoint at `batch`, standing for the log's record whose SHA-256 is
  /// `logSHA`) as a snapshot, in parts; one already there for that batch stays. In the
  /// caller's transaction, so that the row and its parts appear together.
  func insertSnapshot(batch: UInt64, modelVersion: UInt32, logSHA: [UInt8], record: [UInt8], writer: String)
    async throws
  {
    let ledger = location.ledger
    let parts = stride(from: 0, to: record.count, by: RemoteSchema.snapshotChunkBytes).map {
      $0..<min($0 + RemoteSchema.snapshotChunkBytes, record.count)
    }
    let inserted = try await rows(
      """
      INSERT INTO jsonledger_snapshots
        (ledger, batch, model_version, log_sha256, record, writer, chunks, record_bytes, record_sha256)
      VALUES (\(ledger), \(Int64(batch)), \(Int32(modelVersion)), \(Data(logSHA)), \(Data()), \(writer),
        \(Int32(parts.count)), \(Int64(record.count)), \(Data(RecordDigest.of(record))))
      ON CONFLICT (ledger, batch) DO NOTHING RETURNING batch
      """, "the snapshot at batch \(batch)", timeout: .seconds(300))
    guard !inserted.isEmpty else { return }
    for (index, part) in parts.enumerated() {
      try await rows(
        """
        INSERT INTO jsonledger_snapshot_chunks (ledger, batch, chunk, bytes)
        VALUES (\(ledger), \(Int64(batch)), \(Int32(index)), \(Data(record[part])))
        """, "part \(index + 1) of the snapshot at batch \(batch)", timeout: .seconds(300))
    }
  }

  /// Begins a transaction and takes the lock on the ledger's row (the head), waiting for
  /// another writer's (within the session's `lock_timeout`, set by `open`): held until the
  /// transaction ends.
  func lockLedgerRow() async throws -> LedgerRow {
    try await begin()
    return try await ledgerRow(locking: true, timeout: .seconds(70))
  }

  /// The ledger's row, locked until the transaction ends when `locking` (the write queue).
  func ledgerRow(locking: Bool = false, timeout: Duration = .seconds(30)) async throws -> LedgerRow {
    let ledger = location.ledger
    let query: PostgresQuery =
      locking
      ? "SELECT head, head_sha256, log_start, model_version, model, updated_at FROM jsonledger_ledgers WHERE ledger = \(ledger) FOR UPDATE"
      : "SELECT head, head_sha256, log_start, model_version, model, updated_at FROM jsonledger_ledgers WHERE ledger = \(ledger)"
    let found = try await rows(query, locking ? "the lock on the ledger's head" : "the ledger's head", timeout: timeout)
    guard let row = found.first else { throw RemoteError.ledgerNotFound(ledger) }
    let (head, sha, start, version, model, updated) = try row.decode(
      (Int64, Data, Int64, Int32, String, Date).self)
    return LedgerRow(
      head: UInt64(max(0, head)), headSHA: Array(sha), firstBatch: UInt64(max(0, start)),
      modelVersion: UInt32(max(0, version)),
      model: model, updatedAt: updated)
  }

  /// Up to `limit` rows of the log after `batch`, in order.
  func logRows(after batch: UInt64, limit: Int) async throws -> [LogRow] {
    let ledger = location.ledger
    let found = try await rows(
      """
      SELECT batch, kind, prev_sha256, sha256, model_version, record FROM jsonledger_log
      WHERE ledger = \(ledger) AND batch > \(Int64(batch)) ORDER BY batch LIMIT \(limit)
      """, "the log after batch \(batch)", timeout: .seconds(60))
    return try found.map { row in
      let (id, kind, previous, sha, version, record) = try row.decode((Int64, String, Data, Data, Int32, Data).self)
      return LogRow(
        batch: UInt64(max(0, id)), kind: kind, previousSHA: Array(previous), sha: Array(sha),
        modelVersion: UInt32(max(0, version)), record: Array(record))
    }
  }

  /// The checksum of the remote's record of `batch`, or nil when it has none.
  func checksum(of batch: UInt64) async throws -> [UInt8]? {
    let ledger = location.ledger
    let found = try await rows(
      "SELECT sha256 FROM jsonledger_log WHERE ledger = \(ledger) AND batch = \(Int64(batch))",
      "the checksum of batch \(batch)")
    return try found.first.map { Array(try $0.decode(Data.self)) }
  }

  /// Moves the ledger's model to `version`, whose definition (every version) is `model`: in
  /// the transaction that inserts the migration record to it, under the head's lock.
  func setModel(_ model: String, version: UInt32) async throws {
    let ledger = location.ledger
    try await rows(
      "UPDATE jsonledger_ledgers SET model = \(model), model_version = \(Int32(version)) WHERE ledger = \(ledger)",
      "the ledger's model")
  }

  /// Inserts one record after `previous` (the trigger checks it follows the head).
  func insert(
    batch: UInt64, kind: String, modelVersion: UInt32, idempotencyKey: String?, previous: [UInt8], sha: [UInt8],
    writer: String, record: [UInt8]
  ) async throws {
    let ledger = location.ledger
    try await rows(
      """
      INSERT INTO jsonledger_log (ledger, batch, kind, model_version, idempotency_key, prev_sha256, sha256, writer, record)
      VALUES (\(ledger), \(Int64(batch)), \(kind), \(Int32(modelVersion)), \(idempotencyKey), \(Data(previous)), \(Data(sha)), \(writer), \(Data(record)))
      """, "the append of batch \(batch)")
  }

  /// Inserts `records` in one statement, in order: the trigger checks each follows the row
  /// before it (the first, the head). One round trip for a group's records.
  func insert(_ records: [RemoteRecord], writer: String) async throws {
    guard let first = records.first, let last = records.last else { return }
    let columns = 9
    var bindings = PostgresBindings(capacity: records.count * columns)
    var values: [String] = []
    for (index, record) in records.enumerated() {
      values.append("(" + (1...columns).map { "$\(index * columns + $0)" }.joined(separator: ", ") + ")")
      bindings.append(location.ledger)
      bindings.append(Int64(record.batchID))
      bindings.append(record.kind)
      bindings.append(Int32(record.modelVersion))
      bindings.append(record.idempotencyKey)
      try bindings.append(Data(record.previousDigest))
      try bindings.append(Data(record.digest))
      bindings.append(record.writer ?? writer)
      try bindings.append(Data(record.bytes))
    }
    let sql =
      "INSERT INTO jsonledger_log (ledger, batch, kind, model_version, idempotency_key, prev_sha256, sha256, writer, record) VALUES "
      + values.joined(separator: ", ")
    try await rows(
      PostgresQuery(unsafeSQL: sql, binds: bindings), "the append of batches \(first.batchID) to \(last.batchID)")
  }

  /// Creates the tables when the database has none (else checks them), then ledger `name`'s
  /// row, with no batch yet and `model`; `RemoteError.ledgerExists` when it has one.
  func createLedger(_ name: String, model: String) async throws {
    if try await schemaVersion() == nil {
      for statement in RemoteSchema.statements {
        try await rows(PostgresQuery(unsafeSQL: statement), "the schema")
      }
    } else {
      try await checkSchema()
    }
    let existing = try await rows("SELECT 1 FROM jsonledger_ledgers WHERE ledger = \(name)", "the ledger's row")
    guard existing.isEmpty else { throw RemoteError.ledgerExists(name) }
    try await rows(
      """
      INSERT INTO jsonledger_ledgers (ledger, head, head_sha256, model_version, model)
      VALUES (\(name), 0, \(Data(RecordDigest.genesis)), 1, \(model))
      """, "the ledger's row")
  }

  /// The bytes the ledger's rows take in the log table, as PostgreSQL stores them.
  func logBytes() async throws -> Int64 {
    let ledger = location.ledger
    let size = try await rows(
      "SELECT coalesce(sum(pg_column_size(l.*)), 0)::bigint FROM jsonledger_log l WHERE ledger = \(ledger)",
      "the log's size", timeout: .seconds(120))
    return try size.first?.decode(Int64.self) ?? 0
  }

  /// Records where a follower is.
  func recordPosition(follower: String, head: UInt64) async throws {
    let ledger = location.ledger
    try await rows(
      """
      INSERT INTO jsonledger_followers (ledger, follower, head) VALUES (\(ledger), \(follower), \(Int64(head)))
      ON CONFLICT (ledger, follower) DO UPDATE SET head = EXCLUDED.head, seen_at = now()
      """, "the follower's position", timeout: .seconds(10))
  }
}
