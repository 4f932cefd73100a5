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
