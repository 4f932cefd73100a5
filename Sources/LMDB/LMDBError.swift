internal import CLMDB
import Glibc

/// An error reported by LMDB, with the return code and the operation that failed.
///
/// ```swift
/// do { try env.write { txn in try txn.put(value, forKey: key, in: db, flags: .noOverwrite) } }
/// catch let error as LMDBError where error.isKeyExists { … }
/// ```
public struct LMDBError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The LMDB return code (`MDB_NOTFOUND`, `MDB_MAP_FULL`, … or an `errno` value).
  public let code: Int32
  /// The wrapper operation that failed, such as `"open environment at /tmp/x"` or `"put"`.
  public let operation: String

  /// Creates an error for a return code and the operation that produced it.
  public init(code: Int32, operation: String) {
    self.code = code
    self.operation = operation
  }

  /// LMDB's own text for the code.
  public var message: String { String(cString: mdb_strerror(code)) }

  public var description: String { "LMDB: \(operation) failed: \(message) (code \(code))" }

  /// The key or data was not found.
  public var isNotFound: Bool { code == MDB_NOTFOUND }
  /// A put with `noOverwrite` (or an out-of-order `append`) met an existing key.
  public var isKeyExists: Bool { code == MDB_KEYEXIST }
  /// The environment's map is full. `Environment.write` handles this by growing the map.
  public var isMapFull: Bool { code == MDB_MAP_FULL }
  /// Every reader slot is taken.
  public var isReadersFull: Bool { code == MDB_READERS_FULL }
  /// The file at the path is not an LMDB environment, or is of another version.
  public var isInvalidEnvironment: Bool { code == MDB_INVALID || code == MDB_VERSION_MISMATCH }
  /// A write was asked of an environment opened read-only (`Environment.Options.readOnly`).
  public var isReadOnly: Bool { code == EACCES && operation.hasPrefix(Self.readOnlyOperation) }

  private static let readOnlyOperation = "write to an environment opened read-only"

  /// The process has the environment open the other way, read-only or for writing
  /// (`Environment.shared`): LMDB's locks belong to the process, so it cannot open it twice.
  public var isOpenTheOtherWay: Bool { code == EBUSY && operation.hasPrefix(Self.otherWayOperation) }

  private static let otherWayOperation = "open an environment this process has open"

  /// The error for opening `path` while the process has it open the other way (`readOnly`:
  /// how it is open).
  static func openTheOtherWay(path: String, readOnly: Bool) -> LMDBError {
    LMDBError(code: EBUSY, operation: "\(otherWayOperation) \(readOnly ? "read-only" : "for writing") (\(path))")
  }

  /// The error for a write asked of the read-only environment at `path`.
  static func readOnly(path: String) -> LMDBError {
    LMDBError(code: EACCES, operation: "\(readOnlyOperation) (\(path))")
  }
}

/// Throws an `LMDBError` for a non-zero LMDB return code.
@inline(__always)
func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
  if code != 0 { throw LMDBError(code: code, operation: operation()) }
}
