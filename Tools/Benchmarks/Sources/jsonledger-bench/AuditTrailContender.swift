import Foundation
import GRDB
import JSONLedger

/// What a user who needs history builds on SQLite: the same tables and upserts as
/// `GRDBContender` (an upsert that changes nothing writes nothing), plus a `batch` table and
/// triggers that write each row's old and new values, as JSON, to an `audit` table under the
/// batch that changed it; and the rollback of one batch from that table.
struct AuditTrailContender {
  let pool: DatabasePool
  let path: String

  /// Tables, their key column and their other columns.
  static let tables: [(name: String, key: [String], columns: [String])] = [
    ("band", ["name"], ["formed", "description"]),
    ("musician", ["name"], []),
    ("band_member", ["band", "musician"], []),
    ("producer", ["name"], ["country"]),
    ("album", ["name"], ["band", "producer", "released", "label", "sales"]),
  ]

  init() throws {
    var configuration = Configuration()
    configuration.foreignKeysEnabled = true
    path = try scratchDirectory("grdb-audit") + "/db.sqlite"
    pool = try DatabasePool(path: path, configuration: configuration)
    try pool.write { db in
      try db.execute(sql: GRDBContender.schema)
      try db.execute(
        sql: """
          CREATE TABLE batch (id INTEGER PRIMARY KEY, time TEXT NOT NULL);
          CREATE TABLE audit (id INTEGER PRIMARY KEY, batch INTEGER NOT NULL REFERENCES batch(id),
            tbl TEXT NOT NULL, old TEXT, new TEXT);
          CREATE INDEX audit_batch ON audit(batch);
          """)
      for table in Self.tables {
        let all = table.key + table.columns
        func json(_ row: String) -> String {
          "json_object(" + all.map { "'\($0)', \(row).\($0)" }.joined(separator: ", ") + ")"
        }
        let batch = "(SELECT max(id) FROM batch)"
        try db.execute(
          sql: """
            CREATE TRIGGER \(table.name)_insert AFTER INSERT ON \(table.name) BEGIN
              INSERT INTO audit (batch, tbl, old, new) VALUES (\(batch), '\(table.name)', NULL, \(json("NEW")));
            END;
            CREATE TRIGGER \(table.name)_update AFTER UPDATE ON \(table.name) BEGIN
              INSERT INTO audit (batch, tbl, old, new) VALUES (\(batch), '\(table.name)', \(json("OLD")), \(json("NEW")));
            END;
            CREATE TRIGGER \(table.name)_delete AFTER DELETE ON \(table.name) BEGIN
              INSERT INTO audit (batch, tbl, old, new) VALUES (\(batch), '\(table.name)', \(json("OLD")), NULL);
            END;
            """)
      }
    }
  }

  /// Imports the document as one batch; returns its id.
  @discardableResult
  func importDocument(_ bytes: [UInt8]) throws -> Int64 {
    let document = try JSONParser.parse(bytes)
    return try pool.write { db in
      try db.execute(sql: "INSERT INTO batch (time) VALUES (datetime('now'))")
      try GRDBContender.upsert(document, in: db, skippingUnchanged: true)
      return db.lastInsertedRowID
    }
  }

  /// Undoes one batch from the audit table: its rows newest first, each inserted row
  /// deleted and each updated or deleted row put back, in a new batch (so that the rollback
  /// is audited too).
  func rollback(_ batch: Int64) throws {
    try pool.write { db in
      let rows = try Row.fetchAll(
        db, sql: "SELECT tbl, old, new FROM audit WHERE batch = ? ORDER BY id DESC", arguments: [batch])
      try db.execute(sql: "INSERT INTO batch (time) VALUES (datetime('now'))")
      for row in rows {
        let name: String = row["tbl"]
        guard let table = Self.tables.first(where: { $0.name == name }) else { continue }
        let all = table.key + table.columns
        let keyMatch = table.key.map { "\($0) = json_extract(?, '$.\($0)')" }.joined(separator: " AND ")
        if let old: String = row["old"] {
          let values = all.map { "json_extract(?1, '$.\($0)')" }.joined(separator: ", ")
          try db.execute(
            sql: "INSERT OR REPLACE INTO \(name) (\(all.joined(separator: ", "))) VALUES (\(values))",
            arguments: [old])
        } else if let new: String = row["new"] {
          try db.execute(
            sql: "DELETE FROM \(name) WHERE \(keyMatch)", arguments: StatementArguments(table.key.map { _ in new }))
        }
      }
    }
  }

  /// Bytes of the database files after a checkpoint that empties the WAL.
  func storeBytes() throws -> Int {
    _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    return fileBytes([path, path + "-wal", path + "-shm"])
  }
}

/// Bytes the files take on disk (allocated blocks; missing files count 0).
func fileBytes(_ paths: [String]) -> Int {
  paths.reduce(0) { total, path in
    var info = stat()
    return total + (stat(path, &info) == 0 ? Int(info.st_blocks) * 512 : 0)
  }
}
