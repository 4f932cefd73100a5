import LMDB

/// The named databases of a store and what each holds. Keys are big-endian so that LMDB's
/// byte order is numeric order.
///
/// | database      | key                                        | value                                   |
/// |---------------|--------------------------------------------|-----------------------------------------|
/// | `log`         | batch id (8)                               | encoded `ChangeRecord` (never changed)  |
/// | `meta`        | name                                       | format version, model, head, next id    |
/// | `keys`        | root entity id (4) + identity encoding     | object id (8) + payload fingerprint (8) + full identity encoding (long keys) |
/// | `objects`     | object id (8)                              | entity name + identity                  |
/// | `views`       | object id (8)                              | attributes (live objects only)          |
/// | `rels`        | object id (8) + relationship id (4) + position (4) or target id (8) | target id (8) |
/// | `history`     | object id (8) + batch id (8)               | whole state after the batch, or empty (deleted) |
/// | `idempotency` | idempotency key (hashed past 400 bytes)    | batch id (8), the whole key if hashed   |
/// | `indexes`     | root entity id (4) + attribute name + 0 + value (≤ 400, ordered) + object id (8) | empty |
///
/// Everything but `log` and `meta` is a projection: `verify` rebuilds it from the log and
/// compares byte for byte.
struct StoreLayout: Sendable {
  let log: Database
  let meta: Database
  let keys: Database
  let objects: Database
  let views: Database
  let rels: Database
  let history: Database
  let idempotency: Database
  let indexes: Database

  /// The names of the store's databases.
  static let names: Set<String> = [
    "log", "meta", "keys", "objects", "views", "rels", "history", "idempotency", "indexes",
  ]

  /// What an opened LMDB environment holds, found in a read transaction (nothing written).
  enum Contents {
    /// Nothing committed yet: its creation was cut short before the first commit.
    case nothing
    /// This store's databases.
    case store
    /// Databases of another program.
    case foreign([String])
  }

  static func contents(of environment: Environment) throws -> Contents {
    let names = try environment.read { txn in try txn.databaseNames() }
    if names.isEmpty { return .nothing }
    let foreign = names.filter { !Self.names.contains($0) }
    guard foreign.isEmpty, names.contains("meta") else { return .foreign(foreign.isEmpty ? names : foreign) }
    return .store
  }

  /// Creates every database in the transaction of a new store's first commit.
  init(creatingIn txn: Transaction) throws {
    log = try txn.openDatabase(named: "log", create: true)
    meta = try txn.openDatabase(named: "meta", create: true)
    keys = try txn.openDatabase(named: "keys", create: true)
    objects = try txn.openDatabase(named: "objects", create: true)
    views = try txn.openDatabase(named: "views", create: true)
    rels = try txn.openDatabase(named: "rels", create: true)
    history = try txn.openDatabase(named: "history", create: true)
    idempotency = try txn.openDatabase(named: "idempotency", create: true)
    indexes = try txn.openDatabase(named: "indexes", create: true)
  }

  /// Opens the databases of an existing store.
  init(environment: Environment) throws {
    log = try environment.database(named: "log")
    meta = try environment.database(named: "meta")
    keys = try environment.database(named: "keys")
    objects = try environment.database(named: "objects")
    views = try environment.database(named: "views")
    rels = try environment.database(named: "rels")
    history = try environment.database(named: "history")
    idempotency = try environment.database(named: "idempotency")
    indexes = try environment.database(named: "indexes")
  }

  var projections: [Database] { [keys, objects, views, rels, history, idempotency, indexes] }
}
