internal import CLMDB
import Glibc

/// An LMDB transaction, handed to the closure of `Environment.read` or `Environment.write`.
///
/// It is not `Sendable` and must not be kept after the closure returns: once the closure ends
/// the transaction is finished, and any further use throws instead of touching freed memory.
public final class Transaction {
  private let rawHandle: OpaquePointer
  let environment: Environment
  let readOnly: Bool
  private(set) var finished = false
  /// The write transaction this one is nested in (`nested(_:)`), or nil for one of its own,
  /// which holds the environment's resize lock until it ends.
  private let parent: Transaction?
  /// Set when a put met `MDB_MAP_FULL`, even if the caller wrapped or swallowed the error,
  /// so that `Environment.write` knows to grow the map and retry; a nested transaction's sets
  /// its parent's too.
  var sawMapFull = false {
    didSet { if sawMapFull { parent?.sawMapFull = true } }
  }

  init(handle: OpaquePointer, environment: Environment, readOnly: Bool, parent: Transaction? = nil) {
    self.rawHandle = handle
    self.environment = environment
    self.readOnly = readOnly
    self.parent = parent
  }

  deinit { abort() }

  /// The C handle, or an error once the transaction is finished.
  var handle: OpaquePointer {
    get throws(LMDBError) {
      if finished { throw LMDBError(code: EINVAL, operation: "use a transaction after its closure ended") }
      return rawHandle
    }
  }

  /// Whether this transaction can only read.
  public var isReadOnly: Bool { readOnly }

  /// Throws `MDB_MAP_FULL` when a write of this transaction, or of one nested in it, met a
  /// full map, whatever became of that error: `Environment.write` then grows the map and runs
  /// the transaction again. For a step that must not run in a transaction that will run again
  /// (one that tells another system what the transaction holds).
  public func checkMapWasNeverFull() throws(LMDBError) {
    if sawMapFull { throw LMDBError(code: MDB_MAP_FULL, operation: "write") }
  }

  func commit() throws(LMDBError) {
    guard !finished else { return }
    finished = true
    let code = mdb_txn_commit(rawHandle)
    if parent == nil { environment.resizeLock.unlock() }
    if code == MDB_MAP_FULL { sawMapFull = true }
    try check(code, parent == nil ? "commit" : "commit a nested transaction")
  }

  func abort() {
    guard !finished else { return }
    finished = true
    mdb_txn_abort(rawHandle)
    if parent == nil { environment.resizeLock.unlock() }
  }

  /// Runs `body` in a transaction nested in this write transaction (LMDB's nested
  /// transactions): what `body` writes becomes part of this transaction when it returns, and
  /// is undone alone when it throws, this transaction going on as it was before. This
  /// transaction is not to be used until `body` ends; the nested one not after.
  public func nested<R>(_ body: (Transaction) throws -> R) throws -> R {
    guard !readOnly else { throw LMDBError(code: EINVAL, operation: "nest a transaction in a read-only one") }
    let parentHandle = try handle
    var child: OpaquePointer?
    let code = mdb_txn_begin(environment.handle, parentHandle, 0, &child)
    guard code == MDB_SUCCESS, let child else { throw LMDBError(code: code, operation: "begin a nested transaction") }
    let txn = Transaction(handle: child, environment: environment, readOnly: false, parent: self)
    do {
      let result = try body(txn)
      try txn.commit()
      return result
    } catch {
      txn.abort()
      throw error
    }
  }

  /// The names of the named databases: the keys of the environment's main database.
  public func databaseNames() throws -> [String] {
    let txn = try handle
    var dbi: MDB_dbi = 0
    try check(mdb_dbi_open(txn, nil, 0, &dbi), "open the main database")
    var names: [String] = []
    try forEach(in: Database(handle: dbi, name: ""), prefix: []) { entry in
      names.append(String(decoding: entry.key, as: UTF8.self))
      return true
    }
    return names
  }

  public func openDatabase(named name: String, create: Bool) throws(LMDBError) -> Database {
    let txn = try handle
    var dbi: MDB_dbi = 0
    try check(
      mdb_dbi_open(txn, name, create ? UInt32(MDB_CREATE) : 0, &dbi),
      "open database \(name)")
    return Database(handle: dbi, name: name)
  }

  /// Calls `body` with the bytes stored under `key`, without copying them, or returns nil
  /// when the key is absent. The bytes are valid only inside `body`.
  @inlinable func withValue<R>(
    forKey key: [UInt8], in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    guard let bytes = try key.withUnsafeBytes({ try lookUp($0, in: database) }) else { return nil }
    return try body(bytes)
  }

  /// Calls `body` with the bytes stored under `key`, read in place (no copy; the span cannot
  /// outlive the call), or returns nil when the key is absent.
  ///
  /// ```swift
  /// let length = try txn.withValue(forKey: key, in: database) { value in value.count }  // nil: absent
  /// ```
  ///
  /// Inlinable over a non-generic lookup, as `withBorrowedValue` is: a caller's `body` is
  /// specialised, not called through the generic's witnesses (every view reads numbers from
  /// its store's meta this way).
  @inlinable public func withValue<R>(forKey key: [UInt8], in database: Database, _ body: (Span<UInt8>) throws -> R)
    throws -> R?
  {
    // The span borrows LMDB's page for this call only; the transaction keeps it valid.
    try withValue(forKey: key, in: database) { (bytes: UnsafeRawBufferPointer) in try body(Span(_unsafeBytes: bytes)) }
  }

  /// The bytes stored under `key`, or nil.
  public func value(forKey key: [UInt8], in database: Database) throws -> [UInt8]? {
    try withValue(forKey: key, in: database) { Array($0) }
  }

  /// Stores `value` under `key`.
  public func put(_ value: [UInt8], forKey key: [UInt8], in database: Database, flags: PutFlags = []) throws(LMDBError)
  {
    let txn = try handle
    let code = key.withUnsafeBytes { keyBytes in
      value.withUnsafeBytes { valueBytes in
        var keyValue = MDB_val(
          mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
        var dataValue = MDB_val(
          mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
        return mdb_put(txn, database.handle, &keyValue, &dataValue, flags.rawValue)
      }
    }
    if code == MDB_MAP_FULL { sawMapFull = true }
    try check(code, "put into \(database.name) (key of \(key.count) bytes)")
  }

  /// Stores a value of `count` bytes under `key`, written by `fill` straight into the room
  /// LMDB makes for it in the transaction's pages (`MDB_RESERVE`): a large value is then not
  /// held twice, once by the caller and once by LMDB. `fill` must write every byte of the
  /// buffer it is given, and keep nothing of it.
  public func put(
    reserving count: Int, forKey key: [UInt8], in database: Database, flags: PutFlags = [],
    _ fill: (UnsafeMutableRawBufferPointer) -> Void
  ) throws(LMDBError) {
    let txn = try handle
    var reserved: UnsafeMutableRawBufferPointer?
    let code = key.withUnsafeBytes { keyBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
      var dataValue = MDB_val(mv_size: count, mv_data: nil)
      let code = mdb_put(txn, database.handle, &keyValue, &dataValue, flags.rawValue | UInt32(MDB_RESERVE))
      if code == MDB_SUCCESS { reserved = UnsafeMutableRawBufferPointer(start: dataValue.mv_data, count: count) }
      return code
    }
    if code == MDB_MAP_FULL { sawMapFull = true }
    try check(code, "put into \(database.name) (key of \(key.count) bytes)")
    // The room stays valid until the next write in this transaction, and nothing else runs
    // in it meanwhile: `fill` is called before this method returns.
    if let reserved { fill(reserved) }
  }

  /// Deletes `key`; returns whether it was there.
  @discardableResult
  public func delete(_ key: [UInt8], in database: Database) throws(LMDBError) -> Bool {
    let txn = try handle
    let code = key.withUnsafeBytes { keyBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
      return mdb_del(txn, database.handle, &keyValue, nil)
    }
    if code == MDB_NOTFOUND { return false }
    try check(code, "delete from \(database.name)")
    return true
  }

  /// Removes every entry of `database` (the database itself stays).
  public func removeAll(in database: Database) throws(LMDBError) {
    let txn = try handle
    try check(mdb_drop(txn, database.handle, 0), "empty \(database.name)")
  }

  /// Counts LMDB keeps for `database`.
  public func statistics(of database: Database) throws(LMDBError) -> DatabaseStatistics {
    let txn = try handle
    var stat = MDB_stat()
    try check(mdb_stat(txn, database.handle, &stat), "stat \(database.name)")
    return DatabaseStatistics(
      entries: stat.ms_entries, depth: Int(stat.ms_depth),
      pages: stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages,
      pageSize: Int(stat.ms_psize))
  }

  /// Runs `body` with a cursor over `database`; the cursor closes when `body` returns.
  public func withCursor<R>(on database: Database, _ body: (borrowing Cursor) throws -> R) throws -> R {
    let txn = try handle
    var cursor: OpaquePointer?
    try check(mdb_cursor_open(txn, database.handle, &cursor), "open cursor on \(database.name)")
    guard let cursor else { throw LMDBError(code: MDB_BAD_TXN, operation: "open cursor") }
    let wrapped = Cursor(handle: cursor, transaction: self, database: database)
    return try body(wrapped)
  }

  /// Runs `body` with a write cursor on each of `databases` (see `WriteCursors`); they close
  /// when `body` returns.
  public func withWriteCursors<R>(on databases: [Database], _ body: (borrowing WriteCursors) throws -> R) throws -> R {
    let cursors = try WriteCursors(transaction: self, databases: databases)
    return try body(cursors)
  }

  /// Calls `body` for each entry whose key starts with `prefix`, in key order, starting at
  /// `start` (default: the prefix itself). `body` returns false to stop. Each entry is a copy
  /// of the stored bytes, so nothing that points into the map leaves this module.
  public func forEach(
    in database: Database, prefix: [UInt8], from start: [UInt8]? = nil, _ body: (Entry) throws -> Bool
  ) throws {
    try withCursor(on: database) { cursor in
      try Self.walk(cursor, from: try cursor.rawSeek(atOrAfter: start ?? prefix), forward: true, prefix: prefix, body)
    }
  }

  /// Calls `body` with the key and value of each entry whose key starts with `prefix`, in key
  /// order, read in place: no copy is made, and the spans cannot outlive the call. `body`
  /// returns false to stop.
  ///
  /// ```swift
  /// var total = 0
  /// try txn.forEachInPlace(in: log, prefix: []) { _, value in
  ///   total += value.count  // read what is needed; the bytes stay in the map
  ///   return true
  /// }
  /// ```
  public func forEachInPlace(
    in database: Database, prefix: [UInt8], _ body: (_ key: Span<UInt8>, _ value: Span<UInt8>) throws -> Bool
  ) throws {
    // The spans borrow LMDB's pages for this call only; the transaction keeps them valid.
    try forEachRaw(in: database, prefix: prefix) { key, value in
      try body(Span(_unsafeBytes: key), Span(_unsafeBytes: value))
    }
  }

  /// The walk behind `forEachInPlace` and `forEachBorrowed`: each entry under `prefix`, in key
  /// order, as LMDB's own bytes, until `body` returns false.
  func forEachRaw(
    in database: Database, prefix: [UInt8], _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    try withCursor(on: database) { cursor in
      var more = try cursor.rawSeek(atOrAfter: prefix)
      while more {
        let goOn = try cursor.rawCurrent { key, value in
          guard key.count >= prefix.count, key.starts(with: prefix) else { return false }
          return try body(key, value)
        }
        guard goOn else { return }
        more = try cursor.rawMove(next: true)
      }
    }
  }

  /// Moves `cursor` one way while its keys start with `prefix` and `body` returns true;
  /// `positioned` says whether the cursor starts on an entry.
  private static func walk(
    _ cursor: borrowing Cursor, from positioned: Bool, forward: Bool, prefix: [UInt8], _ body: (Entry) throws -> Bool
  ) throws {
    var more = positioned
    while more {
      let entry: Entry? = try cursor.rawCurrent { key, value in
        guard key.count >= prefix.count, key.starts(with: prefix) else { return nil }
        return Entry(key: Array(key), value: Array(value))
      }
      guard let entry, try body(entry) else { return }
      more = try cursor.rawMove(next: forward)
    }
  }

  /// The entries whose key starts with `prefix`, in key order.
  public func entries(in database: Database, prefix: [UInt8]) throws -> [Entry] {
    var result: [Entry] = []
    try forEach(in: database, prefix: prefix) { entry in
      result.append(entry)
      return true
    }
    return result
  }

  /// The sum of the sizes of the values in `database` (read in place, not copied).
  public func valueBytes(in database: Database) throws -> Int {
    try withCursor(on: database) { cursor in
      var total = 0
      var more = try cursor.rawSeek(atOrAfter: [])
      while more {
        total += try cursor.rawCurrent { _, value in value.count }
        more = try cursor.rawMove(next: true)
      }
      return total
    }
  }

  /// The last entry whose key starts with `prefix` and sorts at or before `key`, or nil.
  public func lastEntry(in database: Database, prefix: [UInt8], atOrBefore key: [UInt8]) throws -> Entry? {
    try withCursor(on: database) { cursor in
      guard try Self.position(cursor, atOrBefore: key) else { return nil }
      return try cursor.rawCurrent { found, value in
        found.starts(with: prefix) ? Entry(key: Array(found), value: Array(value)) : nil
      }
    }
  }

  /// Calls `body` for each entry whose key starts with `prefix` and sorts at or before
  /// `key`, in reverse key order. `body` returns false to stop.
  public func forEachBackward(
    in database: Database, prefix: [UInt8], atOrBefore key: [UInt8], _ body: (Entry) throws -> Bool
  ) throws {
    try withCursor(on: database) { cursor in
      try Self.walk(cursor, from: try Self.position(cursor, atOrBefore: key), forward: false, prefix: prefix, body)
    }
  }

  /// Moves `cursor` to the last entry at or before `key`; false when there is none.
  private static func position(_ cursor: borrowing Cursor, atOrBefore key: [UInt8]) throws -> Bool {
    guard try cursor.rawSeek(atOrAfter: key) else { return try cursor.rawMoveToLast() }
    // Landed on the key itself, or on the first one after it: step back from the latter.
    return try cursor.rawCurrent { found, _ in found.elementsEqual(key) } ? true : try cursor.rawMove(next: false)
  }
}

@available(*, unavailable, message: "a transaction belongs to the closure it was given to")
extension Transaction: Sendable {}
