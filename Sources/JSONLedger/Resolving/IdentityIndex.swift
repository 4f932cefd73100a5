/// Identities → object ids for one batch: a cache in front of the store's `keys` database
/// holding the identities found there and those the batch creates, and the allocation of
/// new object ids.
///
/// An object named many times in a batch (a band referred to by each of its albums) is
/// looked up in the store once. An identity's id never changes, so the cache cannot go stale
/// within the batch.
struct IdentityIndex {
  private var table = IdentityTable()
  /// The identity being looked up, encoded (`OrderedEncoding`); reused, and left holding the
  /// last identity looked up for `register` to file.
  private(set) var encodedKey: [UInt8] = []
  /// Where `encodedKey` would go in the cache, when it was last looked up and not found there.
  private var lastMiss: IdentityTable.Miss?
  /// By root entity id: whether the store held any identity of it when asked (nil: not asked
  /// yet), and how many of its identities were looked up in the store before that. The store
  /// does not change while a batch is resolved, so once it is known to hold none of a root,
  /// none is looked up there. It is asked only when a batch has looked up more than
  /// `lookupsBeforeAsking` of a root's identities: a small batch looks its few up, each for
  /// what asking once costs.
  private var rootsHeld: [RootLookups] = []
  private struct RootLookups {
    var held: Bool?
    var lookups = 0
  }
  /// The next unused sequence number (`ObjectIDs`).
  private var nextSequence: UInt64

  init(source: any StateSource) throws {
    nextSequence = try source.nextObjectSequence()
  }

  mutating func reserveCapacity(_ count: Int) { table.reserveCapacity(count) }

  /// The id of an identity and the payload fingerprint the store holds for it (the object
  /// may have been deleted, or changed in this batch since).
  mutating func registration(
    root: UInt32, identity: some Collection<AttributeValue>, source: any StateSource
  ) throws -> (id: UInt64, payloadFingerprint: UInt64)? {
    OrderedEncoding.encodeIdentity(root: root, identity, into: &encodedKey)
    let (entry, miss) = table.lookUp(encodedKey)
    if let entry {
      lastMiss = nil
      return (entry.id, entry.payloadFingerprint)
    }
    lastMiss = miss
    guard try storeHolds(root, source), let registration = try source.registration(encodedIdentity: encodedKey) else {
      return nil
    }
    try table.set(
      registration.id, forKey: encodedKey, isNew: false, payloadFingerprint: registration.payloadFingerprint,
      at: miss)
    lastMiss = nil
    return registration
  }

  /// Whether an identity of `root` may be in the store: false only once the store was asked
  /// and holds none of them.
  private mutating func storeHolds(_ root: UInt32, _ source: any StateSource) throws -> Bool {
    let index = Int(root)
    if index >= rootsHeld.count {
      rootsHeld.append(contentsOf: repeatElement(RootLookups(), count: index + 1 - rootsHeld.count))
    }
    if let held = rootsHeld[index].held { return held }
    rootsHeld[index].lookups += 1
    guard rootsHeld[index].lookups > Self.lookupsBeforeAsking else { return true }
    let held = try source.holdsIdentities(root: root)
    rootsHeld[index].held = held
    return held
  }

  /// How many identities of a root a batch looks up in the store before asking whether it
  /// holds any.
  static let lookupsBeforeAsking = 16

  /// The next unused object id under `root`, taken.
  mutating func allocateID(root: UInt32) -> UInt64 {
    defer { nextSequence += 1 }
    return ObjectIDs.make(root: root, sequence: nextSequence)
  }

  /// Files a new object under the identity last looked up (a create always follows the
  /// lookup that found no live object).
  mutating func registerNew(_ id: UInt64, root: UInt32, identity: [AttributeValue]) throws(LedgerError) {
    assert(
      encodedKey
        == {
          var key: [UInt8] = []
          OrderedEncoding.encodeIdentity(root: root, identity, into: &key)
          return key
        }())
    try table.set(id, forKey: encodedKey, isNew: true, at: lastMiss)
    lastMiss = nil
  }

  /// The ids this batch created under `root`.
  func newIDs(root: UInt32) -> [UInt64] { table.newIDs(root: root) }

  /// Lets the cache go once the batch is resolved, before the changes are built: held
  /// through that, it was about a tenth of a large batch's peak memory.
  mutating func dropCache() {
    table = IdentityTable()
    encodedKey = []
    lastMiss = nil
  }
}
