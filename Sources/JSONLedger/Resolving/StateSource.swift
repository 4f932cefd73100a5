/// What the resolver needs to know about the store as it is before the batch; the
/// projection store provides it inside the write transaction.
protocol StateSource {
  /// The object id registered for an identity (in `OrderedEncoding`, which starts with the
  /// root entity's id), if any (the object may have been deleted since: then `state(of:)`
  /// is nil), and the fingerprint of the payload that last made the object what it is (0:
  /// none, see `PayloadFingerprint`).
  func registration(encodedIdentity: [UInt8]) throws -> (id: UInt64, payloadFingerprint: UInt64)?
  /// Whether any identity of root entity `root` is registered: when none is, every lookup of
  /// one misses, and the resolver asks no more (a first import of an entity).
  func holdsIdentities(root: UInt32) throws -> Bool
  /// The current state of an object, or nil when it does not exist now.
  func state(of objectID: UInt64) throws -> ObjectState?
  /// Ids of the live objects whose entity is `root` or inherits from it.
  func objectIDs(root: String) throws -> [UInt64]
  /// The id of the last batch applied (0: none): the store is as that batch left it.
  func head() throws -> UInt64
  /// The next unused sequence number of object ids (`ObjectIDs`).
  func nextObjectSequence() throws -> UInt64
}
