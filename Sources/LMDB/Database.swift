/// A named database inside an `Environment`, opened once with `Environment.database(named:)`.
///
/// The handle stays valid for the life of the environment and may be shared across threads.
public struct Database: Sendable, Hashable {
  let handle: UInt32
  /// The name it was opened with.
  public let name: String
}

/// Counts LMDB keeps for one database.
public struct DatabaseStatistics: Sendable, Equatable {
  /// The number of key/value pairs.
  public var entries: Int
  /// The depth of the B+tree.
  public var depth: Int
  /// Branch, leaf and overflow pages together.
  public var pages: Int
  /// The page size in bytes.
  public var pageSize: Int
}

/// Flags for `Transaction.put` and `Cursor.put`.
public struct PutFlags: OptionSet, Sendable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }
  /// Fail with `isKeyExists` when the key is present (`MDB_NOOVERWRITE`).
  public static let noOverwrite = PutFlags(rawValue: 0x10)
  /// The key sorts after every key in the database: a fast append (`MDB_APPEND`).
  /// A key out of order fails with `isKeyExists`.
  public static let append = PutFlags(rawValue: 0x20000)
}

/// One key/value pair read from a database, copied out of the map.
public struct Entry: Sendable, Equatable {
  /// The key bytes.
  public var key: [UInt8]
  /// The value bytes.
  public var value: [UInt8]
  /// An entry with these bytes.
  public init(key: [UInt8], value: [UInt8]) {
    self.key = key
    self.value = value
  }
}
