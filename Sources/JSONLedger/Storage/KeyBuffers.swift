/// Key and value buffers the projector reuses for every object of a record. LMDB copies what
/// is put, so one buffer of each shape serves every put, and a put allocates nothing: an
/// allocation here costs more than the encoding it holds.
///
/// A buffer is passed straight to a put and never kept in a local, so overwriting it in place
/// never copies it.
struct KeyBuffers {
  /// An object id: the key of `objects` and `views`, or a value naming one object.
  var objectID = [UInt8](repeating: 0, count: 8)
  /// Object id, batch id: a `history` key.
  var history = [UInt8](repeating: 0, count: 16)
  /// Object id, relationship id, target id: a `rels` key of an unordered list.
  var unorderedLink = [UInt8](repeating: 0, count: 20)
  /// Object id, relationship id, position: a `rels` key of an ordered list.
  var orderedLink = [UInt8](repeating: 0, count: 16)
  /// A target id: a `rels` value.
  var target = [UInt8](repeating: 0, count: 8)
  /// An object's header (`objects`), its attributes (`views`) and its history entry.
  var header = BinaryWriter(capacity: 256)
  var attributes = BinaryWriter(capacity: 1024)
  var entry = BinaryWriter(capacity: 2048)
  /// An identity in `OrderedEncoding` (a `keys` key), and a `keys` value: the object id and
  /// payload fingerprint, then the whole encoding when the key is a hashed long one.
  var identity: [UInt8] = []
  var identityValue: [UInt8] = []

  mutating func setObjectID(_ id: UInt64) {
    objectID.setBigEndian(id, at: 0)
  }

  mutating func setHistory(_ id: UInt64, batchID: UInt64) {
    history.setBigEndian(id, at: 0)
    history.setBigEndian(batchID, at: 8)
  }

  /// Sets the object and relationship ids that start both `rels` keys.
  mutating func setLinkOwner(_ id: UInt64, relationshipID: UInt32) {
    unorderedLink.setBigEndian(id, at: 0)
    orderedLink.setBigEndian(id, at: 0)
    unorderedLink.setBigEndian(relationshipID, at: 8)
    orderedLink.setBigEndian(relationshipID, at: 8)
  }
}
