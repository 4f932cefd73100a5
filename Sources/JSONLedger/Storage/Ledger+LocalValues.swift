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
    let stored = try Self.localValuesStored(values)
    try perform {
      var write = Write(room: .bytes(0), checksModelVersion: false) { _ in }
      write.localValues = stored
      return write
    }
  }

  /// `values` under the keys they are stored by; an invalid key is an error.
  static func localValuesStored(_ values: [(key: String, value: [UInt8]?)]) throws(LedgerError) -> [(
    key: [UInt8], value: [UInt8]?
  )] {
    try values.map { entry throws(LedgerError) in (try localKey(entry.key), entry.value) }
  }

  /// The map room keeping `values` takes, with room to spare.
  static func localValuesRoom(_ values: [[UInt8]?]) -> Int {
    values.isEmpty ? 0 : values.reduce(4096) { $0 + ($1?.count ?? 0) * 2 + 512 }
  }

  /// Keeps each of `values` (a nil value removes its key) in `txn`.
  func putLocalValues(_ values: [(key: [UInt8], value: [UInt8]?)], _ txn: Transaction) throws {
    for (key, value) in values {
      if let value {
        try txn.put(value, forKey: key, in: layout.meta)
      } else {
        _ = try txn.delete(key, in: layout.meta)
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
