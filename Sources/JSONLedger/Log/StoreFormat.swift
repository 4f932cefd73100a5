/// The version of the store format: written in the `meta` database when a store is made and
/// at the head of every change record. A store or record of another version is refused with
/// a message naming both versions.
///
/// Format 3: link changes kept as what was added and removed, long link lists in history as
/// deltas, and payload fingerprints beside each identity in `keys`.
enum StoreFormat {
  static let version: UInt16 = 3
}
