import Foundation

/// What is at a store path, found without writing anything.
enum StoreDirectory {
  enum State {
    case missing
    case empty
    case store
  }

  static func inspect(_ path: String) throws(LedgerError) -> State {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
    guard isDirectory.boolValue else { throw .notAStore(path: path, reason: "it is a file, not a directory") }
    let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    if contents.isEmpty { return .empty }
    let data = path + "/data.mdb"
    guard contents.contains("data.mdb") else {
      throw .notAStore(path: path, reason: "it holds other files and no data.mdb")
    }
    // LMDB's first page: a 16-byte page header, then the meta page's magic 0xBEEFC0DE.
    guard let handle = FileHandle(forReadingAtPath: data) else {
      throw .notAStore(path: path, reason: "data.mdb cannot be read")
    }
    defer { try? handle.close() }
    let header = (try? handle.read(upToCount: 20)) ?? Data()
    // An empty data.mdb beside at most its lock file: LMDB made the file and the process
    // died before LMDB wrote its first page. Nothing was ever stored; start afresh.
    if header.isEmpty, Set(contents).isSubset(of: ["data.mdb", "lock.mdb"]) { return .empty }
    let magic = header.count == 20 ? header.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
    guard magic == 0xBEEF_C0DE else { throw .notAStore(path: path, reason: "data.mdb is not an LMDB data file") }
    return .store
  }
}
