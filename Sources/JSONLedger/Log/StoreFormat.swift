/// The version of the store format: written in the `meta` database when a store is made. A
/// store of another version is refused with a message naming both versions.
///
/// Format 6: the databases of format 4, plus `reverts`, which answers "was this batch
/// reverted?" with one seek. Formats 4 and 5 (format 4 once migrated) have the same records
/// and projections less `reverts`: `Ledger.upgrade(at:)` adds it in place, in one write
/// transaction. Format 3 (the state after each batch in `history`, plus `views`, `objects`
/// and `rels`) is upgraded by replaying its records into a new store.
enum StoreFormat {
  static let version: UInt16 = 6
  /// The formats `Ledger.upgrade(at:)` completes in place by adding `reverts`: 4, and 5
  /// (format 4 once migrated, which said it was newer than libraries older than migrations;
  /// format 6 holds either).
  static let upgradedInPlace: ClosedRange<Int> = 4...5
  /// Whether this library reads a store of format `version` as it is.
  static func isCurrent(_ version: Int) -> Bool { version == Int(Self.version) }
  /// The oldest format `Ledger.upgrade(at:)` reads.
  static let oldestUpgradable: UInt16 = 3
}

/// The version of the change record encoding, at the head of every record. It changes only
/// when a record's bytes do, so that records move verbatim between stores of one record
/// format (archives, replicas) whatever their store format.
enum RecordFormat {
  /// Records of store formats 4 to 6.
  static let version: UInt16 = 4
  /// Version 4 with one more header field, a JSON object of what newer metadata a record has:
  /// `envelope` (`ChangeRecord.Metadata.envelope`), `run` (`ChangeRecord.Metadata.run`),
  /// `idempotencyKeys` (a checkpoint's
  /// `archivedIdempotencyKeys`). Written only for a record that has some, so that a record
  /// without keeps the bytes (and checksum) older releases wrote and read.
  static let version5: UInt16 = 5
  /// Records of store format 3, which `upgrade` reads.
  static let version3: UInt16 = 3
}
