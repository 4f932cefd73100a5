internal import CLMDB

/// A position in a database, valid only inside `Transaction.withCursor`.
public struct Cursor: ~Copyable {
  let handle: OpaquePointer
  let transaction: Transaction
  let database: Database

  deinit { mdb_cursor_close(handle) }

  private func get(_ operation: MDB_cursor_op, key: [UInt8]? = nil) throws(LMDBError) -> Bool {
    var keyValue = MDB_val()
    var dataValue = MDB_val()
    let code: Int32
    if let key {
      code = key.withUnsafeBytes { keyBytes in
        keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
        return mdb_cursor_get(handle, &keyValue, &dataValue, operation)
      }
    } else {
      code = mdb_cursor_get(handle, &keyValue, &dataValue, operation)
    }
    if code == MDB_NOTFOUND { return false }
    try check(code, "move cursor on \(database.name)")
    return true
  }

  func rawSeek(atOrAfter key: [UInt8]) throws(LMDBError) -> Bool {
    if key.isEmpty { return try get(MDB_FIRST) }
    return try get(MDB_SET_RANGE, key: key)
  }

  func rawMove(next: Bool) throws(LMDBError) -> Bool { try get(next ? MDB_NEXT : MDB_PREV) }

  func rawMoveToLast() throws(LMDBError) -> Bool { try get(MDB_LAST) }

  func rawCurrent<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R {
    var keyValue = MDB_val()
    var dataValue = MDB_val()
    try check(mdb_cursor_get(handle, &keyValue, &dataValue, MDB_GET_CURRENT), "read cursor on \(database.name)")
    return try body(
      UnsafeRawBufferPointer(start: keyValue.mv_data, count: keyValue.mv_size),
      UnsafeRawBufferPointer(start: dataValue.mv_data, count: dataValue.mv_size))
  }

  /// The entry under the cursor.
  public func current() throws -> Entry {
    try rawCurrent { Entry(key: Array($0), value: Array($1)) }
  }

  private func moved(_ operation: MDB_cursor_op, key: [UInt8]? = nil) throws -> Entry? {
    try get(operation, key: key) ? try current() : nil
  }

  /// Moves to the first entry.
  public func first() throws -> Entry? { try moved(MDB_FIRST) }
  /// Moves to the last entry.
  public func last() throws -> Entry? { try moved(MDB_LAST) }
  /// Moves to the next entry.
  public func next() throws -> Entry? { try moved(MDB_NEXT) }
  /// Moves to the previous entry.
  public func previous() throws -> Entry? { try moved(MDB_PREV) }
  /// Moves to the first entry whose key is `key` or sorts after it.
  public func seek(atOrAfter key: [UInt8]) throws -> Entry? {
    try rawSeek(atOrAfter: key) ? try current() : nil
  }

  /// Stores `value` under `key` and leaves the cursor on it.
  public func put(_ value: [UInt8], forKey key: [UInt8], flags: PutFlags = []) throws(LMDBError) {
    let code = cursorPut(handle, value[...], forKey: key[...], flags: flags)
    if code == MDB_MAP_FULL { transaction.sawMapFull = true }
    try check(code, "put through cursor into \(database.name)")
  }

  /// Replaces the value of the entry under the cursor, whose key is `key` (`MDB_CURRENT`);
  /// the cursor stays on it.
  func replaceCurrent(with value: [UInt8], key: [UInt8]) throws(LMDBError) {
    let code = cursorPut(handle, value[...], forKey: key[...], flags: PutFlags(rawValue: UInt32(MDB_CURRENT)))
    if code == MDB_MAP_FULL { transaction.sawMapFull = true }
    try check(code, "replace through cursor in \(database.name)")
  }

  /// Deletes the entry under the cursor.
  public func deleteCurrent() throws(LMDBError) {
    try check(mdb_cursor_del(handle, 0), "delete through cursor from \(database.name)")
  }
}

@available(*, unavailable, message: "a cursor belongs to the closure it was given to")
extension Cursor: Sendable {}
