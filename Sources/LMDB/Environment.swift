internal import CLMDB
import Glibc
import Synchronization

/// An LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// Transactions are handed to closures and end with them:
///
/// ```swift
/// let env = try Environment(path: "/tmp/store")
/// let db = try env.database(named: "log")
/// try env.write { txn in try txn.put([1], forKey: [0, 0, 0, 1], in: db) }
/// let value = try env.read { txn in try txn.value(forKey: [0, 0, 0, 1], in: db) }
/// ```
///
/// Readers use `MDB_NOTLS`, so a read transaction is not tied to the thread's reader slot.
/// The map grows by itself: a write that meets `MDB_MAP_FULL` is aborted, the map doubled and
/// the closure run again. Stale reader slots left by dead processes are cleared on open.
public final class Environment: @unchecked Sendable {
  // Safety: `handle` is an MDB_env*, which LMDB allows to be shared between threads (each
  // transaction is used by one thread at a time, readers use MDB_NOTLS). The map size is
  // changed under `resizeLock` held exclusively, while every transaction of this process holds
  // it shared. The meta flush flag (`write(flushingMeta:)`) is changed only under
  // `commitLock`, which every commit of this process holds: no commit runs with a flag another
  // set, no two threads change flags at once (which LMDB leaves undefined), and read
  // transactions read no flag it changes.
  let handle: OpaquePointer
  let resizeLock = ReadersWriterLock()
  private let commitLock = Mutex(())
  /// The device and inode of `lock.mdb` when the environment was opened. A lock file deleted
  /// or replaced since would let a second writer in: every write transaction checks it.
  private let lockFileIdentity: (device: UInt64, inode: UInt64)?
  /// The directory the environment lives in.
  public let path: String
  /// The options it was opened with.
  public let options: Options

  /// How much a commit promises to have on disk.
  public enum Durability: String, Sendable, CaseIterable {
    /// Both fsyncs of every commit (LMDB's default): a committed transaction survives a crash
    /// of the process and of the machine.
    case full
    /// `MDB_NOMETASYNC`: integrity is kept, but a machine crash may undo the last commit.
    case noMetaSync
    /// `MDB_NOSYNC`: no flush at commit. A process crash loses nothing; a machine crash may
    /// lose recent commits, and on a file system that reorders writes may corrupt the store.
    case noSync
  }

  /// Settings for opening an environment.
  public struct Options: Sendable {
    /// The initial map size in bytes; it grows by itself when full.
    public var mapSize: Int = 64 << 20
    /// The most named databases that can be opened.
    public var maxDatabases: Int = 16
    /// The most concurrent read transactions across all processes.
    public var maxReaders: Int = 256
    /// What a commit guarantees.
    public var durability: Durability = .full
    /// Permission bits for new files: owner read/write only unless set otherwise.
    public var filePermissions: UInt32 = 0o600
    /// Open without write access (`MDB_RDONLY`): every write transaction is refused
    /// (`LMDBError.isReadOnly`). On a read-only file system LMDB takes no locks, so the
    /// environment must not be written by anyone while it is open (a read-only mount has no
    /// writers).
    public var readOnly: Bool = false
    /// The defaults.
    public init() {}
  }

  /// Opens (or creates) the environment in the directory at `path`, which must exist.
  public init(path: String, options: Options = Options()) throws(LMDBError) {
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "create environment")
    guard let env else { throw LMDBError(code: EINVAL, operation: "create environment") }
    do {
      try check(mdb_env_set_maxdbs(env, MDB_dbi(options.maxDatabases)), "set max databases")
      try check(mdb_env_set_maxreaders(env, UInt32(options.maxReaders)), "set max readers")
      try check(mdb_env_set_mapsize(env, options.mapSize), "set map size")
      var flags = UInt32(MDB_NOTLS)
      switch options.durability {
      case .full: break
      case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
      case .noSync: flags |= UInt32(MDB_NOSYNC)
      }
      if options.readOnly { flags |= UInt32(MDB_RDONLY) }
      try check(
        mdb_env_open(env, path, flags, mdb_mode_t(options.filePermissions)),
        "open environment at \(path)")
      var dead: Int32 = 0
      try check(mdb_reader_check(env, &dead), "check readers")
    } catch {
      mdb_env_close(env)
      throw error
    }
    self.handle = env
    self.path = path
    self.options = options
    lockFileIdentity = Self.identity(ofFileAt: path + "/lock.mdb")
  }

  /// The device and inode of the file at `path` (not following a symbolic link), or nil.
  static func identity(ofFileAt path: String) -> (device: UInt64, inode: UInt64)? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return (UInt64(status.st_dev), UInt64(status.st_ino))
  }

  /// A failed write with what the file system says: LMDB reports a full disk at commit as an
  /// I/O error, so the free space goes with it.
  private func explained(_ error: any Error) -> any Error {
    guard let error = error as? LMDBError, error.code == EIO || error.code == ENOSPC || error.code == EDQUOT else {
      return error
    }
    var status = statvfs()
    let free = statvfs(path, &status) == 0 ? "\(UInt64(status.f_bavail) * UInt64(status.f_frsize)) bytes" : "unknown"
    return LMDBError(
      code: error.code,
      operation: "\(error.operation) in \(path) (free space on its file system: \(free); a full disk shows as this)")
  }

  /// Refuses a write when `lock.mdb` is not the file the environment locks through.
  private func checkLockFile() throws(LMDBError) {
    guard let expected = lockFileIdentity else { return }
    let now = Self.identity(ofFileAt: path + "/lock.mdb")
    guard let now, now == expected else {
      throw LMDBError(
        code: ESTALE, operation: "begin write (lock.mdb was deleted or replaced while the store was open)")
    }
  }

  deinit { mdb_env_close(handle) }

  /// Opens a named database, creating it unless the environment is read-only.
  public func database(named name: String) throws -> Database {
    if options.readOnly {
      // A handle opened in a transaction that aborts is closed with it: the read is committed.
      let txn = try beginTransaction(readOnly: true)
      do {
        let database = try txn.openDatabase(named: name, create: false)
        try txn.commit()
        return database
      } catch {
        txn.abort()
        throw error
      }
    }
    return try write { txn in try txn.openDatabase(named: name, create: true) }
  }

  /// Runs `body` in a read-only transaction that sees one consistent snapshot.
  public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    let txn = try beginTransaction(readOnly: true)
    defer { txn.abort() }
    return try body(txn)
  }

  /// How many write transactions of this process met a full map and ran again after
  /// growing it: work done twice, which reserving room up front (`reserve(freeBytes:)`) avoids.
  public var writesRunAgain: Int { writesRunAgainCount.load(ordering: .relaxed) }
  private let writesRunAgainCount = Atomic<Int>(0)

  /// Runs `body` in the write transaction and commits it; a throw aborts everything.
  ///
  /// Only one write transaction runs at a time (other writers wait). If the map fills up,
  /// the transaction is aborted, the map grown, and `body` runs again from the start, so
  /// `body` must not have effects outside the transaction.
  ///
  /// `flushingMeta: false` commits as `noMetaSync` durability does, whatever the environment's
  /// (`MDB_NOMETASYNC`, set for this commit alone): the pages are flushed and the meta page is
  /// not, so a machine crash may undo the commit but never breaks the store. The next commit
  /// that flushes carries it to disk.
  public func write<R>(flushingMeta: Bool = true, _ body: (Transaction) throws -> R) throws -> R {
    while true {
      let txn = try beginTransaction(readOnly: false)
      let result: R
      do {
        // Checked holding the writer lock: from here no other writer can begin through it.
        try checkLockFile()
        result = try body(txn)
        // A nested transaction that met a full map was undone alone (`Transaction.nested`):
        // the whole transaction runs again too, with room for it.
        if txn.sawMapFull { throw LMDBError(code: MDB_MAP_FULL, operation: "write") }
        try commit(txn, flushingMeta: flushingMeta || options.durability != .full)
        return result
      } catch {
        let mapWasFull = txn.sawMapFull || (error as? LMDBError)?.isMapFull == true
        txn.abort()
        guard mapWasFull else { throw explained(error) }
      }
      writesRunAgainCount.add(1, ordering: .relaxed)
      try growMap()
    }
  }

  /// Whether a commit flushes the meta page unless told not to (`MDB_NOMETASYNC` and
  /// `MDB_NOSYNC` unset): what the durability the environment was opened with says. For tests.
  var commitsFlushMeta: Bool {
    commitLock.withLock { _ in
      var flags: UInt32 = 0
      mdb_env_get_flags(handle, &flags)
      return flags & UInt32(MDB_NOMETASYNC | MDB_NOSYNC) == 0
    }
  }

  /// Commits `txn`, with the meta page left unflushed for this commit alone unless
  /// `flushingMeta`.
  private func commit(_ txn: Transaction, flushingMeta: Bool) throws(LMDBError) {
    try commitLock.withLock { _ throws(LMDBError) in
      guard !flushingMeta else { return try txn.commit() }
      try check(mdb_env_set_flags(handle, UInt32(MDB_NOMETASYNC), 1), "set the meta flush flag")
      defer { mdb_env_set_flags(handle, UInt32(MDB_NOMETASYNC), 0) }
      try txn.commit()
    }
  }

  func beginTransaction(readOnly: Bool) throws(LMDBError) -> Transaction {
    // LMDB refuses it too (EACCES); this says why, in the caller's terms.
    if !readOnly, options.readOnly { throw LMDBError.readOnly(path: path) }
    while true {
      resizeLock.lockShared()
      var txn: OpaquePointer?
      let code = mdb_txn_begin(handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
      if code == 0, let txn {
        return Transaction(handle: txn, environment: self, readOnly: readOnly)
      }
      resizeLock.unlock()
      if code == MDB_MAP_RESIZED {
        // Another process grew the map: adopt its size, then try again.
        resizeLock.lockExclusive()
        let adopt = mdb_env_set_mapsize(handle, 0)
        resizeLock.unlock()
        try check(adopt, "adopt map size")
        continue
      }
      throw LMDBError(code: code, operation: readOnly ? "begin read" : "begin write")
    }
  }

  func growMap() throws(LMDBError) {
    try growMap { info in max(info.me_mapsize * 2, info.me_mapsize + (256 << 20)) }
  }

  /// Grows the map, if needed, so that at least `bytes` are free beyond what is in use.
  ///
  /// Call it before a large write: a write that fills the map is aborted and run again after
  /// growing, so reserving room up front saves repeating the work. It waits for this process's
  /// other transactions to end, so never call it from inside one.
  public func reserve(freeBytes bytes: Int) throws(LMDBError) {
    if options.readOnly { throw LMDBError.readOnly(path: path) }
    var info = MDB_envinfo()
    try check(mdb_env_info(handle, &info), "read environment info")
    var stat = MDB_stat()
    try check(mdb_env_stat(handle, &stat), "read environment statistics")
    let used = (info.me_last_pgno + 1) * Int(stat.ms_psize)
    guard info.me_mapsize - used < bytes else { return }
    try growMap { current in max(current.me_mapsize, used + bytes) }
  }

  private func growMap(to size: (MDB_envinfo) -> Int) throws(LMDBError) {
    resizeLock.lockExclusive()
    defer { resizeLock.unlock() }
    var info = MDB_envinfo()
    try check(mdb_env_info(handle, &info), "read environment info")
    let grown = size(info)
    guard grown > info.me_mapsize else { return }
    try check(mdb_env_set_mapsize(handle, grown), "grow map to \(grown) bytes")
  }

  /// Hands the pages of the memory map back to the kernel: they stay in the page cache (the
  /// file is unchanged) and fault back in on the next read, but stop counting toward this
  /// process's resident memory. A long streaming import calls it between batches, so its
  /// RSS does not grow with the store.
  public func releaseMappedPages() throws(LMDBError) {
    resizeLock.lockShared()
    defer { resizeLock.unlock() }
    var info = MDB_envinfo()
    try check(mdb_env_info(handle, &info), "read environment info")
    guard let address = info.me_mapaddr else { return }
    // The map is MAP_SHARED and read-only (no MDB_WRITEMAP): for such a mapping
    // MADV_DONTNEED only drops this process's page-table entries, and the next access reads
    // the file's current contents again, so readers running meanwhile still see valid data.
    guard madvise(address, info.me_mapsize, MADV_DONTNEED) == 0 else {
      throw LMDBError(code: errno, operation: "release mapped pages")
    }
  }

  /// Size and use of the environment.
  public func info() throws(LMDBError) -> EnvironmentInfo {
    var info = MDB_envinfo()
    try check(mdb_env_info(handle, &info), "read environment info")
    var stat = MDB_stat()
    try check(mdb_env_stat(handle, &stat), "read environment statistics")
    return EnvironmentInfo(
      mapSize: info.me_mapsize, usedBytes: (info.me_last_pgno + 1) * Int(stat.ms_psize),
      lastTransactionID: info.me_last_txnid, maxReaders: Int(info.me_maxreaders),
      readersInUse: Int(info.me_numreaders))
  }

  /// Clears reader slots left by processes that died; returns how many were cleared.
  @discardableResult
  public func clearStaleReaders() throws(LMDBError) -> Int {
    var dead: Int32 = 0
    try check(mdb_reader_check(handle, &dead), "check readers")
    return Int(dead)
  }

  /// Writes a consistent copy of the environment to `directory` (which must exist and hold no
  /// `data.mdb`), as of one read transaction: writers go on meanwhile. `compacting` leaves out
  /// free pages and renumbers the rest (`MDB_CP_COMPACT`).
  public func copy(to directory: String, compacting: Bool) throws(LMDBError) {
    try check(mdb_env_copy2(handle, directory, compacting ? UInt32(MDB_CP_COMPACT) : 0), "copy to \(directory)")
  }

  /// Flushes the data to disk (useful with `noSync` durability).
  public func sync() throws(LMDBError) {
    try check(mdb_env_sync(handle, 1), "sync")
  }
}

/// Size and use of an environment, from `Environment.info()`.
public struct EnvironmentInfo: Sendable, Equatable {
  /// The current map size: the most the data file may hold before it grows.
  public var mapSize: Int
  /// Bytes of the map in use (last page used × page size).
  public var usedBytes: Int
  /// The id of the last committed transaction.
  public var lastTransactionID: Int
  /// The size of the reader table.
  public var maxReaders: Int
  /// Reader slots in use, including stale ones not yet cleared.
  public var readersInUse: Int
}
