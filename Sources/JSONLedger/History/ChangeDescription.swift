/// One object change in the user's terms: the object's key, and its relationships by name with
/// the keys of the objects linked and unlinked (a record itself holds internal ids).
///
/// ```swift
/// for change in try ledger.record(2).changes {
///   let described = try ledger.describe(change)
///   print(described.key, described.attributes.map(\.name), described.links.map(\.relationship))
/// }
/// ```
public struct ChangeDescription: Sendable, Equatable {
  /// A relationship's change: what the batch linked and unlinked, and an ordered
  /// relationship's whole list after it when only its order changed.
  public struct Link: Sendable, Equatable {
    /// `Entity.relationship`; `Entity.relationship (reverse)` for the hidden reverse list of
    /// a relationship without an inverse.
    public var relationship: String
    /// The objects linked.
    public var added: [ObjectKey]
    /// The objects unlinked.
    public var removed: [ObjectKey]
    /// For an ordered relationship, the list after the batch (nil otherwise).
    public var order: [ObjectKey]?
  }

  /// The object.
  public var key: ObjectKey
  /// Created, updated or deleted.
  public var kind: ObjectChange.Kind
  /// The attributes changed, old → new.
  public var attributes: [AttributeChange]
  /// The relationships changed.
  public var links: [Link]
}

extension Ledger {
  /// A change of a record, or of a diff, in the user's terms: keys and relationship names
  /// instead of internal ids. A linked object deleted since keeps its last key.
  public func describe(_ change: ObjectChange) throws -> ChangeDescription {
    try readTransaction { txn in
      let store = ProjectionStore(transaction: txn, layout: layout, model: model)
      func key(_ id: UInt64) throws -> ObjectKey {
        guard let header = try store.header(of: id) else {
          return ObjectKey(entity: "?", identity: [.integer(Int64(id))])
        }
        return ObjectKey(entity: header.entity, identity: header.identity)
      }
      return ChangeDescription(
        key: ObjectKey(entity: change.entity, identity: change.identity), kind: change.kind,
        attributes: change.attributes,
        links: try change.links.map { link in
          ChangeDescription.Link(
            relationship: relationshipName(forID: link.relationshipID), added: try link.added.map(key),
            removed: try link.removed.map(key), order: try link.order.map { try $0.new.map(key) })
        })
    }
  }

  /// `describe(_:)`, off the caller's executor.
  public func describe(_ change: ObjectChange) async throws -> ChangeDescription {
    try await offTheCaller { try self.describe(change) }
  }
}
