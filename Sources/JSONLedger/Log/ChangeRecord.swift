public import Foundation

/// One applied batch, as the log keeps it forever: what every object looked like before and
/// after, so that replay needs no mapping and a revert needs no search.
public struct ChangeRecord: Sendable, Equatable {
  /// The version of the record encoding this library writes.
  public static let formatVersion: UInt16 = 1

  /// What produced the batch.
  public enum Kind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case `import` = 1, delete = 2, revert = 3, rewind = 4
    public var description: String {
      switch self {
      case .import: "import"
      case .delete: "delete"
      case .revert: "revert"
      case .rewind: "rewind"
      }
    }
  }

  /// Who and why.
  public struct Metadata: Sendable, Equatable {
    /// Why the batch was applied.
    public var message: String?
    /// Who applied it.
    public var author: String?
    /// Where the data came from (a file name, a URL).
    public var source: String?
    /// A key that makes applying the same batch twice a no-op.
    public var idempotencyKey: String?
    /// For a revert: the batch it undoes.
    public var revertedBatchID: UInt64?
    /// Metadata with these values.
    public init(message: String? = nil, author: String? = nil, source: String? = nil, idempotencyKey: String? = nil, revertedBatchID: UInt64? = nil) {
      self.message = message
      self.author = author
      self.source = source
      self.idempotencyKey = idempotencyKey
      self.revertedBatchID = revertedBatchID
    }
  }

  /// Counts of what the batch did.
  public struct Statistics: Sendable, Equatable {
    /// Objects created.
    public var created = 0
    /// Objects updated.
    public var updated = 0
    /// Objects deleted.
    public var deleted = 0
    /// Objects the payload named whose values were already as given.
    public var unchanged = 0
    /// `Entity.key` for JSON keys that matched nothing in the model.
    public var ignoredKeys: [String] = []
    /// The defaults.
    public init() {}
  }

  /// The batch id: 1, 2, 3, … with no gaps.
  public var batchID: UInt64
  /// When it was applied (UTC).
  public var time: Date
  /// What kind of record, or change, this is.
  public var kind: Kind
  /// Who and why.
  public var metadata: Metadata
  /// Counts of what the batch did.
  public var statistics: Statistics
  /// Each object the batch changed, in the order it was first touched.
  public var changes: [ObjectChange]
}

/// What one batch did to one object.
public struct ObjectChange: Sendable, Equatable {
  /// What happened to the object.
  public enum Kind: UInt8, Sendable, CustomStringConvertible {
    case created = 1, updated = 2, deleted = 3
    public var description: String {
      switch self {
      case .created: "created"
      case .updated: "updated"
      case .deleted: "deleted"
      }
    }
  }

  /// The store's internal id of the object (stable for its key, never reused).
  public var objectID: UInt64
  /// The concrete entity after the change (before it, for a deletion).
  public var entity: String
  /// The identity values.
  public var identity: [AttributeValue]
  /// What kind of record, or change, this is.
  public var kind: Kind
  /// Changed attributes, by name.
  public var attributes: [AttributeChange]
  /// Changed link lists, by relationship id.
  public var links: [LinkChange]
}

/// An attribute's value before and after a batch (nil: no value).
public struct AttributeChange: Sendable, Equatable {
  /// The attribute's name.
  public var name: String
  /// The value before the batch (nil: none).
  public var old: AttributeValue?
  /// The value after the batch (nil: none).
  public var new: AttributeValue?
}

/// A relationship's links before and after a batch, as object ids.
public struct LinkChange: Sendable, Equatable {
  /// The relationship id (a hidden reverse link has the high bit set).
  public var relationshipID: UInt32
  /// The linked object ids before the batch.
  public var old: [UInt64]
  /// The linked object ids after the batch.
  public var new: [UInt64]

  /// Targets linked by the batch.
  public var added: [UInt64] { new.filter { !old.contains($0) } }
  /// Targets unlinked by the batch.
  public var removed: [UInt64] { old.filter { !new.contains($0) } }
}

extension ObjectChange {
  /// The change between two states of one object, or nil when they are equal.
  init?(objectID: UInt64, before: ObjectState?, after: ObjectState?) {
    guard before != after, let reference = after ?? before else { return nil }
    let kind: Kind = before == nil ? .created : after == nil ? .deleted : .updated
    let oldAttributes = before?.attributes ?? [:]
    let newAttributes = after?.attributes ?? [:]
    let names = Set(oldAttributes.keys).union(newAttributes.keys).sorted()
    let attributes = names.compactMap { name -> AttributeChange? in
      oldAttributes[name] == newAttributes[name] ? nil : AttributeChange(name: name, old: oldAttributes[name], new: newAttributes[name])
    }
    let oldLinks = before?.links ?? [:]
    let newLinks = after?.links ?? [:]
    let ids = Set(oldLinks.keys).union(newLinks.keys).sorted()
    let links = ids.compactMap { id -> LinkChange? in
      let old = oldLinks[id] ?? [], new = newLinks[id] ?? []
      return old == new ? nil : LinkChange(relationshipID: id, old: old, new: new)
    }
    if kind == .updated, attributes.isEmpty, links.isEmpty, before?.entity == after?.entity { return nil }
    self.init(objectID: objectID, entity: reference.entity, identity: reference.identity, kind: kind, attributes: attributes, links: links)
  }
}
