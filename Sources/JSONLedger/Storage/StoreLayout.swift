import LMDB

/// The named databases of a store and what each holds. Keys are big-endian so that LMDB's
/// byte order is numeric order.
///
/// | database      | key                                        | value                                   |
/// |---------------|--------------------------------------------|-----------------------------------------|
/// | `log`         | batch id (8)                               | encoded `ChangeRecord` (never changed)  |
/// | `meta`        | name                                       | format version, model versions and numbering, head, next sequence, first batch |
/// | `keys`        | root entity id (4) + identity encoding     | object id (8) + payload fingerprint (8) + full identity encoding (long keys) |
/// | `state`       | object id (8: root entity, sequence)       | current state of a live object (`StateCoding`) |
/// | `history`     | object id (8) + batch id (8)               | undo image: the state before the batch, empty when absent before |
/// | `idempotency` | idempotency key (hashed past 400 bytes)    | batch id (8), the whole key if hashed   |
/// | `indexes`     | root entity id (4) + attribute name + 0 + value (≤ 400, ordered) + object id (8) | empty |
/// | `reverts`     | reverted batch id (8) + reverting batch id (8) | empty                                   |
///
/// Each serves a read: `keys` finds an object by key; `state` answers reads by id, entity
/// scans (ids of one root entity are one range) and relationship traversal both ways (a
/// state holds its link lists and the hidden reverse lists); `history` answers as-of reads
/// and the batches that touched an object, with one seek; `indexes` answers queries on
/// indexed attributes; `reverts` answers whether a batch was reverted, and by which. The current state lives once: a batch writes an undo image only for
/// the objects it changes or deletes, and none for the objects it creates for the first time
/// (their state's `since` says when they began).
///
/// Everything but `log` and `meta` is a projection: `verify` rebuilds it from the log and
/// compares byte for byte.
///
/// A class: every `ProjectionStore` holds the layout, and an object read in place holds a
/// store, so that a copy of one is one reference, not eight handles and their names.
final class StoreLayout: Sendable {
  let log: Database
  let meta: Database
  let keys: Database
  let state: Database
  let history: Database
  let idempotency: Database
  let indexes: Database
  let reverts: Database

  /// The names of the store's databases.
  static let names: Set<String> = [
    "log", "meta", "keys", "state", "history", "idempotency", "indexes", "reverts",
  ]

  /// The names of the databases of format 3, which `upgrade` replaces.
  static let version3Names: Set<String> = [
    "log", "meta", "keys", "objects", "views", "rels", "history", "idempotency", "indexes",
  ]

  /// What an opened LMDB environment holds, found in a read transaction (nothing written).
  enum Contents {
    /// Nothing committed yet: its creation was cut short before the first commit.
    case nothing
    /// This store's databases.
    case store
    /// A store of format 3 (`Ledger.upgrade(at:)` turns it into the current format).
    case version3
    /// Databases of another program.
    case foreign([String])
  }

  static func contents(of environment: Environment) throws -> Contents {
    let names = try environment.read { txn in try txn.databaseNames() }
    if names.isEmpty { return .nothing }
    guard names.contains("meta") else { return .foreign(names) }
    if names.allSatisfy({ Self.names.contains($0) }) { return .store }
    if names.allSatisfy({ Self.version3Names.contains($0) }) { return .version3 }
    return .foreign(names.filter { !Self.names.contains($0) && !Self.version3Names.contains($0) })
  }

  /// Creates every database in the transaction of a new store's first commit.
  init(creatingIn txn: Transaction) throws {
    log = try txn.openDatabase(named: "log", create: true)
    meta = try txn.openDatabase(named: "meta", create: true)
    keys = try txn.openDatabase(named: "keys", create: true)
    state = try txn.openDatabase(named: "state", create: true)
    history = try txn.openDatabase(named: "history", create: true)
    idempotency = try txn.openDatabase(named: "idempotency", create: true)
    indexes = try txn.openDatabase(named: "indexes", create: true)
    reverts = try txn.openDatabase(named: "reverts", create: true)
  }

  /// Opens the databases of an existing store of the current format (one of format 4 or 5
  /// lacks `reverts`, which this would create: check the format first).
  init(environment: Environment) throws {
    log = try environment.database(named: "log")
    meta = try environment.database(named: "meta")
    keys = try environment.database(named: "keys")
    state = try environment.database(named: "state")
    history = try environment.database(named: "history")
    idempotency = try environment.database(named: "idempotency")
    indexes = try environment.database(named: "indexes")
    reverts = try environment.database(named: "reverts")
  }

  var projections: [Database] { [keys, state, history, idempotency, indexes, reverts] }
}
