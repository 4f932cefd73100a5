/// A stored record read past once without building its changes: its header, and each
/// change's object, entity, kind and place in the bytes. A page of a 100,000-change batch
/// counts and chooses from the outline and builds only the changes it shows (`change(_:)`).
struct RecordOutline {
  /// One change, as far as choosing it needs.
  struct Entry {
    var objectID: UInt64
    /// The entity's position in `entityNames`.
    var entity: Int
    var kind: ObjectChange.Kind
    /// Where the change starts in the record's bytes, after its object id.
    var offset: Int
  }

  /// The record without its changes.
  var header: ChangeRecord
  /// Its changes, in their order.
  let entries: [Entry]
  private let names: RecordCoding.NameTables
  private let bytes: [UInt8]

  init(header: ChangeRecord, entries: [Entry], names: RecordCoding.NameTables, bytes: [UInt8]) {
    (self.header, self.entries, self.names, self.bytes) = (header, entries, names, bytes)
  }

  /// The name of `entry`'s entity.
  func entityName(_ entry: Entry) -> String { names.entities[entry.entity] }

  /// `entry`'s change, built.
  func change(_ entry: Entry) throws(DecodingFailure) -> ObjectChange {
    var reader = BinaryReader(bytes, position: entry.offset)
    return try RecordCoding.readChange(&reader, objectID: entry.objectID, names: names)
  }
}
