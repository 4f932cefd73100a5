public import Foundation

/// One applied batch, as the log keeps it forever: every value a batch changed, before and
/// after, and the links it added and removed, so that replay needs no mapping and a revert
/// needs no search.
public struct ChangeRecord: Sendable, Equatable {
  /// The version of the record encoding every record carries (4 since store format 4; it
  /// stays when only the store's projections change, as in format 6).
  public static var formatVersion: UInt16 { RecordFormat.version }

  /// The format version this record is written in: `formatVersion`, or the next one for a
  /// record with an envelope (`Metadata.envelope`).
  var encodedFormatVersion: UInt16 {
    metadata.envelope == nil && metadata.run == nil && metadata.archivedIdempotencyKeys.isEmpty
      ? RecordFormat.version : RecordFormat.version5
  }

  /// What produced the batch.
  ///
  /// A struct with static values rather than an enum, so that a kind added later is not a
  /// source break for every `switch` over kinds (give it a `default`). The raw value is the
  /// byte stored in the record.
  public struct Kind: RawRepresentable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A batch of imported objects.
    public static let `import` = Kind(rawValue: 1)
    /// A batch that deleted objects by key.
    public static let delete = Kind(rawValue: 2)
    /// The inverse of an earlier batch (`Ledger.revert`).
    public static let revert = Kind(rawValue: 3)
    /// The state set back to an earlier batch (`Ledger.rewind`).
    public static let rewind = Kind(rawValue: 4)
    /// The store's model changed (`Ledger.migrate`); the record's `modelVersion` is the new one.
    public static let migration = Kind(rawValue: 5)
    /// The whole state after a batch, in place of the batches `compact` archived: the log's first batch.
    public static let checkpoint = Kind(rawValue: 6)

    /// Every kind this library writes and reads.
    public static let allCases: [Kind] = [.import, .delete, .revert, .rewind, .migration, .checkpoint]

    /// Whether this library knows the kind (a record of another kind is from a newer one).
    public var isKnown: Bool { Self.allCases.contains(self) }

    public var description: String {
      switch self {
      case .import: "import"
      case .delete: "delete"
      case .revert: "revert"
      case .rewind: "rewind"
      case .migration: "migration"
      case .checkpoint: "checkpoint"
      default: "kind \(rawValue)"
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
    /// The other members of the envelopes the payloads came in (`count`, `next` of a
    /// `{"count": …, "next": …, "results": […]}` page; `StagingOptions.itemsAt`), an object, or
    /// an array of them for several pages.
    public var envelope: JSONValue?
    /// How the batch's payloads were fetched (`ChangeBatch.run`): for a pull, each page's
    /// URL (its secrets redacted), status, ETag and bytes, and the run's duration.
    public var run: JSONValue?
    /// For a checkpoint (`compact`): the idempotency keys of the batches it stands for, with
    /// their batch ids, so that a retry of an archived batch is still known as applied.
    public var archivedIdempotencyKeys: [String: UInt64] = [:]
    /// Metadata with these values.
    public init(
      message: String? = nil, author: String? = nil, source: String? = nil, idempotencyKey: String? = nil,
      revertedBatchID: UInt64? = nil, envelope: JSONValue? = nil
    ) {
      self.message = message
      self.author = author
      self.source = source
      self.idempotencyKey = idempotencyKey
      self.revertedBatchID = revertedBatchID
      self.envelope = envelope
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
  /// The version of the store's model the batch was written under (1: the model the store was
  /// created with). A record read back is told in the current version's terms whatever this
  /// says (`Ledger.migrate(at:to:)`).
  public var modelVersion: UInt32 = 1
}

/// What one batch did to one object.
public struct ObjectChange: Sendable {
  /// What happened to the object.
  public enum Kind: UInt8, Sendable, CustomStringConvertible {
    case created = 1
    case updated = 2
    case deleted = 3
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
  public var identity: [AttributeValue] {
    get {
      if changedAttributes.isPacked, case .packed(let state) = changedAttributes {
        state.identity
      } else {
        heldIdentity
      }
    }
    set {
      unpack()
      heldIdentity = newValue
    }
  }
  /// What kind of record, or change, this is.
  public var kind: Kind
  /// Changed attributes, by name.
  public var attributes: [AttributeChange] {
    get { changedAttributes.changes }
    set {
      unpack()
      changedAttributes = .listed(newValue)
    }
  }
  /// Changed link lists, by relationship id.
  public var links: [LinkChange] {
    get { changedLinks.changes }
    set {
      unpack()
      changedLinks = .listed(newValue)
    }
  }
  /// The identity values, unless the change is a packed creation (`identity` reads them
  /// from its state then; this is empty).
  private(set) var heldIdentity: [AttributeValue]
  /// The fingerprint of the payload whose application alone made this change
  /// (`PayloadFingerprint`), or 0: kept in `keys` so that a re-import of the same payload
  /// can skip the object.
  var payloadFingerprint: UInt64 = 0
  /// The attribute changes as they are held (`attributes` lists them).
  var changedAttributes: ChangedAttributes
  /// The link changes as they are held (`links` lists them).
  var changedLinks: ChangedLinks

  init(
    objectID: UInt64, entity: String, identity: [AttributeValue], kind: Kind, attributes: [AttributeChange],
    links: [LinkChange], payloadFingerprint: UInt64 = 0
  ) {
    self.init(
      objectID: objectID, entity: entity, identity: identity, kind: kind, changedAttributes: .listed(attributes),
      changedLinks: .listed(links), payloadFingerprint: payloadFingerprint)
  }

  init(
    objectID: UInt64, entity: String, identity: [AttributeValue], kind: Kind, changedAttributes: ChangedAttributes,
    changedLinks: ChangedLinks, payloadFingerprint: UInt64 = 0
  ) {
    self.objectID = objectID
    self.entity = entity
    heldIdentity = identity
    self.kind = kind
    self.changedAttributes = changedAttributes
    self.changedLinks = changedLinks
    self.payloadFingerprint = payloadFingerprint
  }

  /// The creation of an object whose state the resolver packed: every value and link of it.
  init(objectID: UInt64, created state: PackedState, payloadFingerprint: UInt64 = 0) {
    self.init(
      objectID: objectID, entity: state.entity.name, identity: [], kind: .created,
      changedAttributes: .packed(state), changedLinks: .packed(state), payloadFingerprint: payloadFingerprint)
  }

  /// A packed creation held as its state's lists again, before any part of it changes.
  private mutating func unpack() {
    guard case .packed(let packed) = changedAttributes else { return }
    let state = packed.state
    heldIdentity = state.identity
    changedAttributes = .whole(state.attributes, isNew: true)
    changedLinks = ChangedLinks(whole: state.links, isNew: true, isOrdered: packed.isOrdered)
  }
}

extension ObjectChange: Equatable {
  /// Whether two changes say the same, however each holds its attribute and link changes.
  public static func == (lhs: ObjectChange, rhs: ObjectChange) -> Bool {
    lhs.objectID == rhs.objectID && lhs.entity == rhs.entity && lhs.identity == rhs.identity && lhs.kind == rhs.kind
      && lhs.payloadFingerprint == rhs.payloadFingerprint && lhs.changedLinks.isEqual(to: rhs.changedLinks)
      && lhs.changedAttributes.isEqual(to: rhs.changedAttributes)
  }
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

extension ObjectChange {
  /// The creation or deletion of an object in `state`: every value and link is a change, no
  /// comparison needed, and the change holds the state's lists as they are (attributes in
  /// name order, links by relationship id, as the state keeps them).
  private init(objectID: UInt64, wholly state: borrowing ObjectState, kind: Kind, model: borrowing Model) {
    let creates = kind == .created
    self.init(
      objectID: objectID, entity: state.entity, identity: state.identity, kind: kind,
      changedAttributes: .whole(state.attributes, isNew: creates),
      changedLinks: ChangedLinks(whole: state.links, isNew: creates) { model.isOrdered($0) })
  }

  /// The creation of an object whose state after the batch is `state`, which the change
  /// takes: its lists move in, not retained a second time and released with the state.
  init(objectID: UInt64, creating state: consuming ObjectState, model: borrowing Model) {
    let links = ChangedLinks(whole: state.links, isNew: true) { model.isOrdered($0) }
    self.init(
      objectID: objectID, entity: state.entity, identity: state.identity, kind: .created,
      changedAttributes: .whole(state.attributes, isNew: true), changedLinks: links)
  }

  /// The change between two states of one object, or nil when they are equal. Attributes
  /// come sorted by name and links by relationship id, so equal changes encode equally.
  /// `model` tells which relationships are ordered. `after` and `model` are borrowed: the
  /// caller keeps both, and a copy would retain each of their fields.
  init?(objectID: UInt64, before: ObjectState?, after: borrowing ObjectState?, model: borrowing Model) {
    switch after {
    case .none:
      guard let deleted = before else { return nil }
      self.init(objectID: objectID, wholly: deleted, kind: .deleted, model: model)
    case .some(let new):
      guard let old = before else {
        self.init(objectID: objectID, wholly: new, kind: .created, model: model)
        return
      }
      // Equal lists that share storage (an object the batch did not change) compare in one
      // step; the walks below run only when something differs.
      var attributes: [AttributeChange] = []
      if old.attributes != new.attributes {
        attributes = AttributeList.differences(from: old.attributes, to: new.attributes).map {
          AttributeChange(name: $0.name, old: $0.old, new: $0.new)
        }
      }
      var links: [LinkChange] = []
      if old.links != new.links {
        for (id, list) in new.links where (old.links[id] ?? []) != list {
          links.append(
            LinkChange(
              relationshipID: id, from: old.links[id]?.array ?? [], to: list.array, isOrdered: model.isOrdered(id)))
        }
        for (id, list) in old.links where new.links[id] == nil && !list.isEmpty {
          links.append(LinkChange(relationshipID: id, from: list.array, to: [], isOrdered: model.isOrdered(id)))
        }
      }
      if attributes.isEmpty, links.isEmpty, old.entity == new.entity { return nil }
      links.sort { $0.relationshipID < $1.relationshipID }
      self.init(
        objectID: objectID, entity: new.entity, identity: new.identity, kind: .updated, attributes: attributes,
        links: links)
    }
  }
}

extension ObjectChange {
  /// The change that undoes this one: a creation becomes a deletion and back, and every old
  /// and new value trade places.
  var inverted: ObjectChange {
    let kind: Kind =
      switch self.kind {
      case .created: .deleted
      case .deleted: .created
      case .updated: .updated
      }
    return ObjectChange(
      objectID: objectID, entity: entity, identity: identity, kind: kind, changedAttributes: changedAttributes.inverted,
      changedLinks: changedLinks.inverted)
  }

  /// For a creation: the whole state the object was created with (a creation lists every
  /// attribute and link); nil for any other kind.
  var createdState: ObjectState? {
    guard kind == .created else { return nil }
    var state = ObjectState(entity: entity, identity: identity)
    state.apply(self)
    return state
  }
}
