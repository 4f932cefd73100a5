import Foundation
import GRDB
import JSONLedger

/// What a careful GRDB user would write: WAL, one transaction, prepared statements,
/// `INSERT … ON CONFLICT DO UPDATE`, foreign keys by key, the same fields.
struct GRDBContender {
  let pool: DatabasePool

  let path: String

  static let schema = """
    CREATE TABLE band (name TEXT PRIMARY KEY NOT NULL, formed INTEGER, description TEXT) WITHOUT ROWID;
    CREATE TABLE musician (name TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
    CREATE TABLE band_member (band TEXT NOT NULL REFERENCES band(name), musician TEXT NOT NULL REFERENCES musician(name),
      PRIMARY KEY (band, musician)) WITHOUT ROWID;
    CREATE TABLE producer (name TEXT PRIMARY KEY NOT NULL, country TEXT) WITHOUT ROWID;
    CREATE TABLE album (name TEXT PRIMARY KEY NOT NULL, band TEXT REFERENCES band(name),
      producer TEXT REFERENCES producer(name), released TEXT, label TEXT, sales INTEGER) WITHOUT ROWID;
    CREATE INDEX album_band ON album(band);
    """

  /// `flushingEachCommit`: `PRAGMA synchronous = FULL`, so that a commit survives a machine
  /// crash as JSONLedger's default does; otherwise SQLite's default in WAL mode here, which
  /// flushes at checkpoints only (GRDB's `synchronous = NORMAL`: a machine crash may roll
  /// recent commits back).
  init(flushingEachCommit: Bool = false) throws {
    var configuration = Configuration()
    configuration.foreignKeysEnabled = true
    path = try scratchDirectory("grdb") + "/db.sqlite"
    pool = try DatabasePool(path: path, configuration: configuration)
    // On the pool's one writer connection, after the pool has set WAL mode and its own
    // `synchronous = NORMAL`, which a `prepareDatabase` setting would not outlast.
    if flushingEachCommit {
      try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    }
    try pool.write { db in try db.execute(sql: Self.schema) }
  }

  /// What a GRDB migrator's three steps would run for the benchmark's model versions: a
  /// column added in place, then a rename and a type change, which SQLite does by copying
  /// the table (its documented way to change a column's type), then a column dropped.
  func migrate() throws -> (added: Double, rebuilt: Double, dropped: Double) {
    let added = try seconds { try addAnAttribute() }
    let rebuilt = try seconds { try renameAndRetype() }
    let dropped = try seconds { try dropAnAttribute() }
    return (added, rebuilt, dropped)
  }

  /// `ALTER TABLE … DROP COLUMN`: SQLite writes each row again without it.
  func dropAnAttribute() throws {
    try pool.write { db in try db.execute(sql: "ALTER TABLE album DROP COLUMN released") }
  }

  /// The first step: `ALTER TABLE … ADD COLUMN`.
  func addAnAttribute() throws {
    try pool.write { db in try db.execute(sql: "ALTER TABLE album ADD COLUMN catalog TEXT") }
  }

  /// The second step: the album table copied into one with the renamed and retyped columns.
  func renameAndRetype() throws {
    try pool.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA foreign_keys = OFF")
      try db.inTransaction {
        try db.execute(
          sql: """
            CREATE TABLE album_new (name TEXT PRIMARY KEY NOT NULL, band TEXT REFERENCES band(name),
              producer TEXT REFERENCES producer(name), released TEXT, imprint TEXT, sales TEXT, catalog TEXT)
              WITHOUT ROWID;
            INSERT INTO album_new SELECT name, band, producer, released, label, CAST(sales AS TEXT), catalog FROM album;
            DROP TABLE album;
            ALTER TABLE album_new RENAME TO album;
            CREATE INDEX album_band ON album(band);
            """)
        return .commit
      }
      try db.execute(sql: "PRAGMA foreign_keys = ON")
    }
  }

  func importDocument(_ bytes: [UInt8]) throws {
    let document = try JSONParser.parse(bytes)
    try pool.write { db in try Self.upsert(document, in: db, skippingUnchanged: false) }
  }

  /// Bytes of the database files after a checkpoint that empties the WAL.
  func storeBytes() throws -> Int {
    _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    return fileBytes([path, path + "-wal", path + "-shm"])
  }

  /// The upserts of one document. `skippingUnchanged`: an upsert whose values are already
  /// stored writes nothing (what an audit trail needs, so that it records real changes).
  static func upsert(_ document: JSONValue, in db: Database, skippingUnchanged: Bool) throws {
    func unless(_ columns: [String]) -> String {
      guard skippingUnchanged else { return "" }
      return " WHERE " + columns.map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR ")
    }
    let band = try db.makeStatement(
      sql: """
        INSERT INTO band (name, formed, description) VALUES (?, ?, ?)
        ON CONFLICT(name) DO UPDATE SET formed = excluded.formed, description = excluded.description
        """ + unless(["formed", "description"]))
    let musician = try db.makeStatement(sql: "INSERT INTO musician (name) VALUES (?) ON CONFLICT DO NOTHING")
    let member = try db.makeStatement(
      sql: "INSERT INTO band_member (band, musician) VALUES (?, ?) ON CONFLICT DO NOTHING")
    let producer = try db.makeStatement(
      sql: """
        INSERT INTO producer (name, country) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET country = excluded.country
        """ + unless(["country"]))
    let album = try db.makeStatement(
      sql: """
        INSERT INTO album (name, band, producer, released, label, sales) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(name) DO UPDATE SET band = excluded.band, producer = excluded.producer,
          released = excluded.released, label = excluded.label, sales = excluded.sales
        """ + unless(["band", "producer", "released", "label", "sales"]))
    // A document of albums alone names its bands by key only: they get stub rows first, as
    // JSONLedger makes stubs.
    let stubBand = try db.makeStatement(sql: "INSERT INTO band (name) VALUES (?) ON CONFLICT DO NOTHING")
    let stubsBands = document["bands"] == nil
    for object in document["bands"]?.arrayValue ?? [] {
      let name = object["name"]?.stringValue
      try band.execute(arguments: [name, Self.int(object["formed"]), object["description"]?.stringValue])
      for musicianName in object["members"]?.arrayValue ?? [] {
        try musician.execute(arguments: [musicianName.stringValue])
        try member.execute(arguments: [name, musicianName.stringValue])
      }
    }
    for object in document["albums"]?.arrayValue ?? [] {
      let producerObject = object["producer"]
      if let producerName = producerObject?["name"]?.stringValue {
        try producer.execute(arguments: [producerName, producerObject?["country"]?.stringValue])
      }
      if stubsBands, let bandName = object["band"]?.stringValue { try stubBand.execute(arguments: [bandName]) }
      try album.execute(arguments: [
        object["name"]?.stringValue, object["band"]?.stringValue, producerObject?["name"]?.stringValue,
        object["released"]?.stringValue, object["label"]?.stringValue, Self.int(object["sales"]),
      ])
    }
  }

  static func int(_ value: JSONValue?) -> Int64? {
    if case .number(let number)? = value { return number.int64Value }
    return nil
  }

  func readByKey(_ keys: [String]) throws {
    for chunk in stride(from: 0, to: keys.count, by: 1000) {
      try pool.read { db in
        let statement = try db.cachedStatement(sql: "SELECT * FROM album WHERE name = ?")
        for key in keys[chunk..<min(chunk + 1000, keys.count)] {
          guard let row = try Row.fetchOne(statement, arguments: [key]), (row["label"] as String?) != nil else {
            throw LedgerError.invalidArgument("missing \(key)")
          }
        }
      }
    }
  }

  func readAllAlbumsWithBand() throws -> Int {
    try pool.read { db in
      var count = 0
      let rows = try Row.fetchCursor(
        db, sql: "SELECT album.*, band.name AS band_name FROM album LEFT JOIN band ON band.name = album.band")
      while let row = try rows.next() {
        if (row["band_name"] as String?) != nil { count += 1 }
      }
      return count
    }
  }

  /// The bands and albums as JSON text, key-sorted, written row by row as the rows are read
  /// (as `View.writeJSON` writes): to-many lists grouped first, nothing else held.
  func exportAll() throws -> Int {
    try pool.read { db in
      let members = Dictionary(
        grouping: try Row.fetchAll(db, sql: "SELECT band, musician FROM band_member"), by: { $0["band"] as String })
      let albumsByBand = Dictionary(
        grouping: try Row.fetchAll(db, sql: "SELECT name, band FROM album"), by: { ($0["band"] as String?) ?? "" })
      var output = JSONOutput()
      var written = 0
      func flush() {
        guard output.bytes.count >= 64 << 10 else { return }
        written += output.bytes.count
        output.removeAll()
      }
      func optional(_ text: String?) {
        if let text { output.string(text) } else { output.null() }
      }
      output.beginObject()
      output.key("albums")
      output.beginArray()
      let albums = try Row.fetchCursor(db, sql: "SELECT * FROM album ORDER BY name")
      while let row = try albums.next() {
        output.beginObject()
        output.key("band")
        optional(row["band"])
        output.key("label")
        optional(row["label"])
        output.key("name")
        output.string(row["name"])
        output.key("producer")
        optional(row["producer"])
        output.key("released")
        optional(row["released"])
        output.key("sales")
        output.value((row["sales"] as Int64?).map { .number(JSONNumber($0)) } ?? .null)
        output.endObject()
        flush()
      }
      output.endArray()
      output.key("bands")
      output.beginArray()
      let bands = try Row.fetchCursor(db, sql: "SELECT * FROM band ORDER BY name")
      while let row = try bands.next() {
        let name: String = row["name"]
        output.beginObject()
        output.key("albums")
        output.beginArray()
        for album in albumsByBand[name] ?? [] { output.string(album["name"]) }
        output.endArray()
        output.key("description")
        optional(row["description"])
        output.key("formed")
        output.value((row["formed"] as Int64?).map { .number(JSONNumber($0)) } ?? .null)
        output.key("members")
        output.beginArray()
        for member in members[name] ?? [] { output.string(member["musician"]) }
        output.endArray()
        output.key("name")
        output.string(name)
        output.endObject()
        flush()
      }
      output.endArray()
      output.endObject()
      return written + output.bytes.count
    }
  }
}
