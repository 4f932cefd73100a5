import Foundation

/// What is at a store path, found without writing anything: a store's files are checked
/// before LMDB maps them, so that a file that would crash the process (a truncated map) or
/// write elsewhere (a symbolic link) is refused with an error naming it.
enum StoreDirectory {
  enum State {
    case missing
    case empty
    case store
  }

  static func inspect(_ path: String) throws(LedgerError) -> State {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      if isSymbolicLink(path) { throw .notAStore(path: path, reason: "it is a symbolic link to nothing") }
      return .missing
    }
    guard isDirectory.boolValue else { throw .notAStore(path: path, reason: "it is a file, not a directory") }
    guard access(path, R_OK | X_OK) == 0 else {
      throw .fileSystem(
        "the store directory \(path) cannot be read (\(String(cString: strerror(errno))))", path: path)
    }
    let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    for name in ["data.mdb", "lock.mdb"] where isSymbolicLink(path + "/" + name) {
      throw .notAStore(path: path, reason: "\(name) is a symbolic link; a store's files must be the files themselves")
    }
    if contents.isEmpty { return .empty }
    let data = path + "/data.mdb"
    // LMDB makes its lock file before its data file: a process killed between the two leaves
    // lock.mdb alone. Nothing was ever stored; start afresh.
    if contents == ["lock.mdb"] { return .empty }
    guard contents.contains("data.mdb") else {
      throw .notAStore(path: path, reason: "it holds other files and no data.mdb")
    }
    guard let handle = FileHandle(forReadingAtPath: data) else {
      throw .fileSystem("\(data) cannot be read (\(String(cString: strerror(errno))))", path: path)
    }
    defer { try? handle.close() }
    let first = (try? handle.read(upToCount: MetaPage.length)) ?? Data()
    // An empty data.mdb beside at most its lock file: LMDB made the file and the process
    // died before LMDB wrote its first page. Nothing was ever stored; start afresh.
    if first.isEmpty, Set(contents).isSubset(of: ["data.mdb", "lock.mdb"]) { return .empty }
    guard let meta = MetaPage(first) else {
      throw .notAStore(path: path, reason: "data.mdb is not an LMDB data file")
    }
    // LMDB keeps two meta pages and uses the one with the newer transaction.
    var newest = meta
    if (try? handle.seek(toOffset: UInt64(meta.pageSize))) != nil,
      let second = MetaPage((try? handle.read(upToCount: MetaPage.length)) ?? Data()),
      second.transaction > meta.transaction
    {
      newest = second
    }
    let size = (try? handle.seekToEnd()) ?? 0
    let needed = (newest.lastPage &+ 1).multipliedReportingOverflow(by: UInt64(meta.pageSize))
    guard !needed.overflow, size >= needed.partialValue else {
      throw .notAStore(
        path: path,
        reason: "data.mdb is \(size) bytes, shorter than its last page needs (\(needed.partialValue) bytes): "
          + "the file was truncated; restore it from a backup")
    }
    return .store
  }

  private static func isSymbolicLink(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
  }

  /// The fields of an LMDB meta page this check reads (64-bit layout, little-endian): the
  /// magic, the page size (kept in the free list's `md_pad`), the last page and the
  /// transaction id.
  private struct MetaPage {
    static let length = 16 + 136
    let pageSize: UInt32
    let lastPage: UInt64
    let transaction: UInt64

    init?(_ bytes: Data) {
      guard bytes.count >= Self.length else { return nil }
      let bytes = [UInt8](bytes)
      func little<Integer: FixedWidthInteger & UnsignedInteger>(_ offset: Int, _: Integer.Type) -> Integer {
        bytes[offset..<offset + Integer.bitWidth / 8].reversed().reduce(0) { $0 &<< 8 | Integer($1) }
      }
      guard little(16, UInt32.self) == 0xBEEF_C0DE else { return nil }
      pageSize = little(40, UInt32.self)
      lastPage = little(136, UInt64.self)
      transaction = little(144, UInt64.self)
      guard pageSize >= 512, pageSize.nonzeroBitCount == 1 else { return nil }
    }
  }
}
