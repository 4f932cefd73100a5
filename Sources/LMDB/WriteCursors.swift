internal import CLMDB

/// Cursors over several databases of one write transaction, valid only inside
/// `Transaction.withWriteCursors(on:_:)`.
///
/// `Transaction.put` finds its place by descending the tree from the root each time. A put
/// through one of these cursors starts where the previous put into the same database landed:
/// when the new key falls on that leaf page (keys written in ascending order mostly do), LMDB
/// searches that page alone.
///
/// ```swift
/// try env.write { txn in
///   try txn.withWriteCursors(on: [views, history]) { cursors in
///     for (key, value) in sortedEntries { try cursors.put(value, forKey: key, in: views) }
///   }
/// }
/// ```
public struct WriteCursors: ~Copyable {
  private let handles: [OpaquePointer]
  private let databases: [Database]
  private let transaction: Transaction

  /// Opens one cursor per database; if one fails, those already open are closed.
  init(transaction: Transaction, databases: [Database]) throws(LMDBError) {
    let txn = try transaction.handle
    var handles: [OpaquePointer] = []
    for database in databases {
      var cursor: OpaquePointer?
      let code = mdb_cursor_open(txn, database.handle, &cursor)
      guard code == MDB_SUCCESS, let cursor else {
        for handle in handles { mdb_cursor_close(handle) }
        throw LMDBError(code: code == MDB_SUCCESS ? MDB_BAD_TXN : code, operation: "open cursor on \(database.name)")
      }
      handles.append(cursor)
    }
    self.handles = handles
    self.databases = databases
    self.transaction = transaction
  }

  deinit { for handle in handles { mdb_cursor_close(handle) } }

  /// Stores `value` under `key` in `database` (one of those the cursors were opened on; any
  /// other database takes the plain `Transaction.put` path).
  public func put(_ value: [UInt8], forKey key: [UInt8], in database: Database, flags: PutFlags = []) throws(LMDBError)
  {
    guard let index = databases.firstIndex(where: { $0.handle == database.handle }) else {
      try transaction.put(value, forKey: key, in: database, flags: flags)
      return
    }
    let code = cursorPut(handles[index], value[...], forKey: key[...], flags: flags)
    if code == MDB_MAP_FULL { transaction.sawMapFull = true }
    try check(code, "put through cursor into \(database.name) (key of \(key.count) bytes)")
  }
}

extension WriteCursors {
  /// Stores `value` under `key` like `put`, for a key expected to sort after every key of
  /// `database`: LMDB then adds it to the last leaf page without searching the page or the
  /// tree (`MDB_APPEND`), and leaves a full last page full when it starts the next one. A key
  /// that does not sort last (LMDB refuses the append without changing anything) is put the
  /// usual way, so the expectation is a hint, never a condition: the result is always that
  /// of `put`.
  public func append(_ value: [UInt8], forKey key: [UInt8], in database: Database) throws(LMDBError) {
    try append(value[...], forKey: key[...], in: database)
  }

  /// `append(_:forKey:in:)` of parts of larger buffers, which are not copied.
  public func append(_ value: ArraySlice<UInt8>, forKey key: ArraySlice<UInt8>, in database: Database)
    throws(LMDBError)
  {
    guard let index = databases.firstIndex(where: { $0.handle == database.handle }) else {
      try transaction.put(Array(value), forKey: Array(key), in: database)
      return
    }
    var code = cursorPut(handles[index], value, forKey: key, flags: .append)
    if code == MDB_KEYEXIST { code = cursorPut(handles[index], value, forKey: key, flags: []) }
    if code == MDB_MAP_FULL { transaction.sawMapFull = true }
    try check(code, "append through cursor into \(database.name) (key of \(key.count) bytes)")
  }

  /// Deletes `key` from `database`; returns whether it was there. Like `put`, the search
  /// starts on the leaf page where this database's cursor last was (LMDB looks there first),
  /// so deletes in ascending key order spare most descents from the root. Any database the
  /// cursors were not opened on takes `Transaction.delete`.
  @discardableResult
  public func delete(_ key: [UInt8], in database: Database) throws(LMDBError) -> Bool {
    guard let index = databases.firstIndex(where: { $0.handle == database.handle }) else {
      return try transaction.delete(key, in: database)
    }
    let cursor = handles[index]
    let code = key.withUnsafeBytes { keyBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
      var dataValue = MDB_val()
      return mdb_cursor_get(cursor, &keyValue, &dataValue, MDB_SET)
    }
    if code == MDB_NOTFOUND { return false }
    try check(code, "find a key of \(key.count) bytes in \(database.name)")
    try check(mdb_cursor_del(cursor, 0), "delete through cursor from \(database.name)")
    return true
  }
}

@available(*, unavailable, message: "cursors belong to the closure they were given to")
extension WriteCursors: Sendable {}

/// `mdb_cursor_put` of one key and value; returns LMDB's code.
func cursorPut(_ cursor: OpaquePointer, _ value: ArraySlice<UInt8>, forKey key: ArraySlice<UInt8>, flags: PutFlags)
  -> Int32
{
  key.withUnsafeBytes { keyBytes in
    value.withUnsafeBytes { valueBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
      var dataValue = MDB_val(
        mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
      return mdb_cursor_put(cursor, &keyValue, &dataValue, flags.rawValue)
    }
  }
}
