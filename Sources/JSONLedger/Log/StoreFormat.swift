/// The version of the store format: written in the `meta` database when a store is made and
/// at the head of every change record. A store or record of another version is refused with
/// a message naming both versions.
///
/// Format 4: the current state once, in `state`, keyed by ids that cluster each entity;
/// undo images in `history`; records with a name table and no absent values. Format 3 (the
/// state after each batch in `history`, plus `views`, `objects` and `rels`) is upgraded by
/// `Ledger.upgrade(at:)`, which replays its records.
enum StoreFormat {
  static let version: UInt16 = 4
  /// Format 4 once its model was migrated (`Ledger.migrate(at:to:)`): the same databases and
  /// records, with the model's versions and numbering in `meta`. Libraries older than
  /// migrations would read it with the wrong numbering, so it says it is newer than they are.
  static let migrated: UInt16 = 5
  /// Whether this library reads a store of format `version` as it is.
  static func isCurrent(_ version: Int) -> Bool { version == Int(Self.version) || version == Int(migrated) }
  /// The oldest format `Ledger.upgrade(at:)` reads.
  static let oldestUpgradable: UInt16 = 3
}
