import LMDB

extension Ledger {
  /// The value an application keeps under `key` beside the store (`setLocalValue(_:forKey:)`),
  /// or nil.
  ///
  /// Local values are state of the process that keeps the store, not data: they are in no
  /// batch, no history and no export, a replica does not share them, and `verify` does not
  /// check them. A backup copies them. `jsonledger pull` keeps each page's ETag and body here.
  public func localValue(forKey key: String) throws -> [UInt8]? {
    let stored = try Self.localKey(key)
    return try readTransaction { txn in try txn.value(forKey: stored, in: layout.meta).map(Array.init) }
  }

  /// Keeps `value` under `key` beside the store (nil removes it), in a transaction of its own.
  /// A key is 1 to 400 bytes of UTF-8.
  public func setLocalValue(_ value: [UInt8]?, forKey key: String) throws {
    try setLocalValues([(key, value)])
  }

  /// Keeps each value under its key (nil removes it), all in one transaction: all are kept,
  /// or, on an error, none.
  public func setLocalValues(_ values: [(key: String, value: [UInt8]?)]) throws {
    guard !values.isEmpty else { return }
    let stored = try values.map { entry throws(LedgerError) in (try Self.localKey(entry.key), entry.value) }
    let room = values.reduce(4096) { $0 + ($1.value?.count ?? 0) * 2 + 512 }
    try perform {
      Write(room: .bytes(room), checksModelVersion: false) { [self] txn in
        for (key, value) in stored {
          if let value {
            try txn.put(value, forKey: key, in: layout.meta)
          } else {
            _ = try txn.delete(key, in: layout.meta)
          }
        }
      }
    }
  }

  /// `local.KEY`: a name none of the store's own meta keys has.
  private static func localKey(_ key: String) throws(LedgerError) -> [UInt8] {
    guard !key.isEmpty, key.utf8.count <= 400 else {
      throw LedgerError.invalidArgument("a local value's key is 1 to 400 bytes, not \(key.utf8.count)")
    }
    return Array("local.\(key)".utf8)
  }
}
