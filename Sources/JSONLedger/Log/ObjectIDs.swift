/// How an object id is made: its root entity's id in the top 24 bits and a store-wide
/// sequence number below. Ids of one root entity sort together, so the current state, keyed
/// by id, keeps each entity family in one contiguous range: a scan is one cursor walk, in the
/// order the objects were first stored.
enum ObjectIDs {
  /// Bits of the sequence number: about 10^12 objects per store.
  static let sequenceBits: UInt64 = 40
  static let sequenceMask: UInt64 = (1 << sequenceBits) - 1

  /// The id of the object numbered `sequence` under `root`.
  static func make(root: UInt32, sequence: UInt64) -> UInt64 {
    UInt64(root) << sequenceBits | (sequence & sequenceMask)
  }

  /// The root entity id in `id`.
  static func root(of id: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: id >> sequenceBits) }

  /// The sequence number in `id`.
  static func sequence(of id: UInt64) -> UInt64 { id & sequenceMask }

  /// The first id under `root` (every id of the root starts with these 5 bytes, big-endian).
  static func firstID(root: UInt32) -> UInt64 { UInt64(root) << sequenceBits }
}
