import JSONLedgerSupport

/// How JSON keys are cased when the model's names are written out (and read in).
public enum KeyCase: String, Sendable, Hashable, CaseIterable {
  /// `first_name`, `list_image_url`.
  case snakeCase = "snake_case"
  /// `firstName`, `listImageURL` (the model's own names).
  case camelCase = "camelCase"
}

/// How dates are written on export.
public enum DateFormat: String, Sendable, Hashable, CaseIterable {
  /// `2014-01-02T12:40:08Z`, with a fraction when there is one.
  case iso8601
  /// `20140102T124008Z`.
  case iso8601Basic = "iso8601-basic"
  /// Seconds since 1970 as a number.
  case unix
}

/// A validated model: entities with attributes, relationships, identity and inheritance.
///
/// Create it from a model file (`Model(jsonFile:)`, `Model(json:)`), an Xcode Core Data
/// model, or in Swift:
///
/// ```swift
/// let model = try Model(keyCase: .snakeCase) {
///   Entity("Band", identity: ["name"]) {
///     Attribute("name", .string)
///     Relationship("albums", to: "Album", many: true, inverse: "band")
///   }
///   Entity("Album", identity: ["name"]) {
///     Attribute("name", .string)
///     Relationship("band", to: "Band", inverse: "albums")
///   }
/// }
/// ```
///
/// Validation happens here, once: an inverse that does not point back, an identity naming no
/// attribute or an unknown destination is a `ModelError` naming the place.
public struct Model: Sendable {
  /// What a model is, resolved once and shared: copying a model (every view, store and
  /// mapper holds one) retains this one object, not each of its tables.
  private final class Storage: Sendable {
    let keyCase: KeyCase
    let dateFormat: DateFormat
    let entities: [Entity]
    let resolvedEntities: NameTable<ResolvedEntity>
    let relationshipsByID: RelationshipTable
    let entityNames: [(name: String, utf8: [UInt8])]
    let resolvedInOrder: [ResolvedEntity]
    let resolvedByNumber: [ResolvedEntity?]
    let numbering: ModelNumbering

    init(keyCase: KeyCase, dateFormat: DateFormat, entities: [Entity], numbering: ModelNumbering, isStored: Bool)
      throws(ModelError)
    {
      self.keyCase = keyCase
      self.dateFormat = dateFormat
      self.entities = entities
      self.numbering = numbering
      let (resolved, relationships) = try ModelResolver(entities: entities, numbering: numbering, isStored: isStored)
        .resolve()
      (resolvedEntities, relationshipsByID) = (NameTable(resolved), relationships)
      resolvedInOrder = entities.compactMap { resolved[$0.name] }
      var byNumber = [ResolvedEntity?](repeating: nil, count: Int(resolvedInOrder.map(\.id).max() ?? 0))
      for entity in resolvedInOrder { byNumber[Int(entity.id) - 1] = entity }
      resolvedByNumber = byNumber
      // Built from the resolved list, so that an index into one is an index into the other.
      entityNames = resolvedInOrder.map { ($0.name, Array($0.name.utf8)) }
    }
  }

  private let storage: Storage

  /// A model held with no reference counted, for a value that only lives inside a call that
  /// holds the model itself (`StoredObject`).
  struct Unretained {
    private unowned(unsafe) let storage: Storage
    init(_ model: Model) { storage = model.storage }
    /// The model (retained again).
    var model: Model { Model(storage: storage) }
  }

  private init(storage: Storage) { self.storage = storage }

  /// The key case of the JSON this model reads and writes.
  public var keyCase: KeyCase { storage.keyCase }
  /// The date format of exported JSON.
  public var dateFormat: DateFormat { storage.dateFormat }
  /// The entities, in declaration order.
  public var entities: [Entity] { storage.entities }
  /// What loading the model read but ignores (an `ordered` flag on a Core Data to-one, say).
  /// Not part of the model: two models that differ only here are equal.
  public internal(set) var warnings: [String] = []
  /// For a property renamed in this version (`renamedFrom`, no `jsonKey`), by
  /// `Entity.property`: the name whose JSON key it keeps, when the previous versions give it
  /// one other than `renamedFrom` (renamed back and forth, `label` → `publisher` → `label`,
  /// it keeps `label`, the key the backend sends). Set from the store's earlier versions
  /// (`keepingNames(after:)`); not part of the model's equality.
  private(set) var keptNames: [String: String] = [:]

  /// The name whose JSON key the renamed property `property` of `entity` keeps
  /// (`keptNames`, else its `renamedFrom`).
  func keptName(of property: String, renamedFrom: String?, in entity: String) -> String? {
    keptNames["\(entity).\(property)"] ?? renamedFrom
  }

  /// This model as the version after `previous`: each renamed property keeps the JSON key its
  /// predecessor had, through every earlier rename.
  func keepingNames(after previous: Model) -> Model {
    var copy = self
    copy.keptNames = [:]
    for entity in resolvedInOrder {
      let before = entity.declaration.renamedFrom ?? entity.name
      for (name, renamedFrom, custom) in entity.attributes.map({ ($0.name, $0.renamedFrom, $0.jsonKey) })
        + entity.relationships.map({ ($0.name, $0.declaration.renamedFrom, $0.declaration.jsonKey) })
      {
        guard custom == nil, let old = renamedFrom, old != name else { continue }
        let kept = previous.keptName(of: old, renamedFrom: previous.renamedFrom(of: old, in: before), in: before) ?? old
        copy.keptNames["\(entity.name).\(name)"] = kept
      }
    }
    return copy
  }

  /// The `renamedFrom` of the property `name` of `entity`, when it has one and no custom key.
  private func renamedFrom(of name: String, in entity: String) -> String? {
    guard let resolved = resolved(entity) else { return nil }
    if let attribute = resolved.attributeIndex[name] { return attribute.jsonKey == nil ? attribute.renamedFrom : nil }
    if let relationship = resolved.relationshipIndex[name] {
      return relationship.declaration.jsonKey == nil ? relationship.declaration.renamedFrom : nil
    }
    return nil
  }

  /// The entities with no identity, whose objects are only ever inserted: payloads for them
  /// never update anything (abstract ones, and ones a relationship owns, left out).
  public var insertOnlyEntities: [String] {
    resolvedInOrder.filter { $0.isInsertOnly && !$0.declaration.isAbstract && !$0.isOwned }.map(\.name)
  }

  /// The entities whose objects a relationship owns (`Relationship.owns`): they arrive nested
  /// in their owner and are exported inline in it, never as a collection of their own.
  public var ownedEntities: [String] { resolvedInOrder.filter(\.isOwned).map(\.name) }

  var resolvedEntities: NameTable<ResolvedEntity> { storage.resolvedEntities }
  var relationshipsByID: RelationshipTable { storage.relationshipsByID }
  /// The entities' names with their UTF-8 bytes, in model order, and the resolved entities in
  /// the same order: decoding a record matches stored names against these.
  var entityNames: [(name: String, utf8: [UInt8])] { storage.entityNames }
  var resolvedInOrder: [ResolvedEntity] { storage.resolvedInOrder }
  /// The resolved entities by number (`numbering`), less one: stored states name their entity so.
  private var resolvedByNumber: [ResolvedEntity?] { storage.resolvedByNumber }
  /// The numbers stored data knows the entities and relationships by.
  var numbering: ModelNumbering { storage.numbering }

  /// Whether a relationship keeps its links in order (a hidden reverse link never does).
  func isOrdered(_ relationshipID: UInt32) -> Bool { relationshipsByID[relationshipID]?.isOrdered ?? false }

  /// The id a link stored under `relationshipID` is stored under on the other object: the
  /// inverse's id, the hidden reverse id of a relationship without an inverse, or, from a
  /// hidden reverse id, the relationship it reverses. The one home of that rule.
  func counterpart(of relationshipID: UInt32) -> UInt32 {
    if relationshipID & ResolvedRelationship.hiddenReverseBit != 0 {
      return relationshipID & ~ResolvedRelationship.hiddenReverseBit
    }
    return relationshipsByID[relationshipID]?.reverseID ?? relationshipID
  }

  /// A model of these entities, validated.
  public init(keyCase: KeyCase = .camelCase, dateFormat: DateFormat = .iso8601, entities: [Entity]) throws(ModelError) {
    try self.init(
      keyCase: keyCase, dateFormat: dateFormat, entities: entities, numbering: ModelNumbering(positionsOf: entities))
  }

  /// A model of these entities numbered as a store numbers them. `isStored`: the model a
  /// store keeps, read back (`ModelResolver.isStored`).
  init(
    keyCase: KeyCase, dateFormat: DateFormat, entities: [Entity], numbering: ModelNumbering, isStored: Bool = false
  ) throws(ModelError) {
    storage = try Storage(
      keyCase: keyCase, dateFormat: dateFormat, entities: entities, numbering: numbering, isStored: isStored)
  }

  /// A model whose entities are listed in a builder block.
  public init(
    keyCase: KeyCase = .camelCase, dateFormat: DateFormat = .iso8601,
    @ModelEntitiesBuilder entities: () -> [Entity]
  ) throws(ModelError) {
    try self.init(keyCase: keyCase, dateFormat: dateFormat, entities: entities())
  }

  /// The entity named `name`, if the model has it.
  public func entity(named name: String) -> Entity? { resolvedEntities[name]?.declaration }

  func resolved(_ name: String) -> ResolvedEntity? { resolvedEntities[name] }

  /// The entity a relationship points to, found by its number: as `resolved(_:)` with its
  /// destination's name, without hashing the name (the mapper asks for each value).
  func destination(of relationship: ResolvedRelationship) -> ResolvedEntity? {
    resolved(number: Int(relationship.destinationNumber))
  }

  /// The entity numbered `number`, if the model has it.
  func resolved(number: Int) -> ResolvedEntity? {
    number >= 1 && number <= resolvedByNumber.count ? resolvedByNumber[number - 1] : nil
  }

  /// This model with the entities and settings of `other`, numbered as the store would
  /// number them after this model: what continues an element of this one keeps its number.
  func followed(by other: Model) throws(ModelError) -> Model {
    // Which element continues which must be plain before numbers are given.
    let ambiguous = ModelLineage.problems(from: self, to: other)
    guard ambiguous.isEmpty else { throw ModelError(problems: ambiguous) }
    let lineage = ModelLineage(from: self, to: other.entities)
    var numbering = numbering.continued(to: other.entities, lineage: lineage)
    // Attributes are numbered over each entity's resolved attributes (inherited ones too): a
    // first resolution gives them, a second takes their numbers.
    let draft = try Model(
      keyCase: other.keyCase, dateFormat: other.dateFormat, entities: other.entities, numbering: numbering)
    numbering.continueAttributes(from: self, to: draft, lineage: lineage)
    let next = try Model(
      keyCase: other.keyCase, dateFormat: other.dateFormat, entities: other.entities, numbering: numbering)
    next.numbering.checkUniqueness()
    return next.keepingNames(after: self)
  }
}

extension Model: Equatable {
  /// Equal key case, date format and entities (in order).
  public static func == (lhs: Model, rhs: Model) -> Bool {
    lhs.keyCase == rhs.keyCase && lhs.dateFormat == rhs.dateFormat && lhs.entities == rhs.entities
  }
}

/// An entity with everything inheritance gives it, and the numeric ids the store uses.
/// A class, so that looking one up on a hot path shares it instead of copying its tables.
final class ResolvedEntity: Sendable {
  let declaration: Entity
  var name: String { declaration.name }
  /// The entity's number (`ModelNumbering`): used in stored keys and object ids.
  let id: UInt32
  /// The top of its inheritance chain; identity is unique per root.
  let rootName: String
  /// The id of `rootName`.
  let rootID: UInt32
  /// Itself and every entity that inherits from it, in model order.
  let family: [String]
  /// Inherited attributes first, then its own.
  let attributes: [Attribute]
  let attributeIndex: NameTable<Attribute>
  let relationships: [ResolvedRelationship]
  let relationshipIndex: NameTable<ResolvedRelationship>
  /// The identity's parts after the default rule (attribute and to-one relationship names);
  /// empty for an insert-only entity and for owned rows identified by their owner.
  let identity: [String]
  /// The same parts, each an attribute or a to-one relationship (whose target's key is the
  /// part's value).
  let identityParts: [IdentityPart]
  /// Whether any part of the identity is a relationship.
  let hasRelationshipInIdentity: Bool
  /// The identity's one attribute, which a reference by key is read as (nil for a composite
  /// identity, one through a relationship, or none).
  let keyAttribute: Attribute?
  /// The owning relationships (`Entity.relationship`) whose targets are objects of this entity.
  let owners: [String]
  /// Whether a relationship owns the objects of this entity.
  var isOwned: Bool { !owners.isEmpty }
  let subentityKey: String?
  /// Whether any attribute is `indexed` (the projector skips index upkeep otherwise).
  let hasIndexedAttributes: Bool
  /// The non-optional attributes outside the identity: an object a batch creates from a
  /// payload must carry each of them.
  let requiredAttributes: [String]
  /// The attribute names in the order stored states list them (sorted), with their UTF-8
  /// bytes: decoding a state matches the stored bytes against these and reuses the name,
  /// instead of making a new string for each attribute of each object read.
  let storedAttributeNames: [(name: String, utf8: [UInt8])]
  /// Each attribute name's position in `storedAttributeNames`, and each relationship name's
  /// position in `relationships`. A snapshot's dictionaries are these with `mapValues` (which
  /// keeps their hash layout), so reading an object hashes none of its names.
  let storedAttributePositions: [String: Int]
  let relationshipPositions: [String: Int]
  /// The number a stored state names each attribute by (`ModelNumbering`), in the order of
  /// `storedAttributeNames`.
  let storedAttributeNumbers: [UInt32]
  /// The position in `storedAttributeNames` of each attribute number (-1: none).
  let positionsByNumber: [Int]
  /// The number the entity's next new attribute takes.
  let nextAttributeNumber: UInt32

  var isInsertOnly: Bool { identity.isEmpty }

  /// One part of an identity.
  enum IdentityPart {
    case attribute(Attribute)
    case relationship(ResolvedRelationship)

    var relationship: ResolvedRelationship? {
      if case .relationship(let relationship) = self { relationship } else { nil }
    }
  }

  init(
    declaration: Entity, id: UInt32, rootName: String, rootID: UInt32, family: [String], attributes: [Attribute],
    attributeIndex: [String: Attribute], relationships: [ResolvedRelationship],
    relationshipIndex: [String: ResolvedRelationship], identity: [String], owners: [String] = [], subentityKey: String?,
    attributeNumbers: [String: UInt32]? = nil, nextAttributeNumber: UInt32? = nil
  ) {
    self.declaration = declaration
    self.id = id
    self.rootName = rootName
    self.rootID = rootID
    self.family = family
    self.attributes = attributes
    self.attributeIndex = NameTable(attributeIndex)
    self.relationships = relationships
    self.relationshipIndex = NameTable(relationshipIndex)
    self.identity = identity
    self.identityParts = identity.compactMap { name in
      attributeIndex[name].map(IdentityPart.attribute) ?? relationshipIndex[name].map(IdentityPart.relationship)
    }
    self.hasRelationshipInIdentity = identityParts.contains { $0.relationship != nil }
    self.owners = owners
    self.keyAttribute = identity.count == 1 ? attributeIndex[identity[0]] : nil
    self.subentityKey = subentityKey
    // Under Groot's only-annotated rule an attribute without a custom key is never mapped,
    // so it cannot be required.
    self.requiredAttributes = attributes.filter { attribute in
      !attribute.isOptional && !identity.contains(attribute.name)
        && declaration.mapsProperty(withCustomKey: attribute.jsonKey)
    }.map(\.name)
    self.hasIndexedAttributes = attributes.contains { $0.isIndexed }
    self.storedAttributeNames = attributes.map(\.name).sorted().map { ($0, Array($0.utf8)) }
    self.storedAttributePositions = Dictionary(
      uniqueKeysWithValues: storedAttributeNames.enumerated().map { ($0.element.name, $0.offset) })
    self.relationshipPositions = Dictionary(
      uniqueKeysWithValues: relationships.enumerated().map { ($0.element.name, $0.offset) })
    // Without numbers of its own, an entity's attributes are numbered by position.
    let numbers = storedAttributeNames.enumerated().map { position, name in
      attributeNumbers?[name.name] ?? UInt32(position + 1)
    }
    self.storedAttributeNumbers = numbers
    var positions = [Int](repeating: -1, count: Int(numbers.max() ?? 0) + 1)
    for (position, number) in numbers.enumerated() { positions[Int(number)] = position }
    self.positionsByNumber = positions
    self.nextAttributeNumber = nextAttributeNumber ?? UInt32(numbers.count + 1)
  }

  /// The number a stored state names attribute `name` by.
  func attributeNumber(of name: String) -> UInt32? {
    // Most entities have a few attributes: comparing names (a short name compares as two
    // words) costs less than hashing one.
    guard storedAttributeNames.count > 16 else {
      for position in storedAttributeNames.indices where storedAttributeNames[position].name == name {
        return storedAttributeNumbers[position]
      }
      return nil
    }
    return storedAttributePositions[name].map { storedAttributeNumbers[$0] }
  }

  /// The position in `storedAttributeNames` of the attribute numbered `number`.
  func position(ofAttributeNumber number: Int) -> Int? {
    number >= 0 && number < positionsByNumber.count && positionsByNumber[number] >= 0 ? positionsByNumber[number] : nil
  }
}

/// A relationship with its numeric id and that of its inverse.
final class ResolvedRelationship: Sendable {
  let declaration: Relationship
  var name: String { declaration.name }
  /// The relationship's number (`ModelNumbering`); a link is stored under it.
  let id: UInt32
  /// The entity that declares it.
  let owner: String
  /// The id the link is stored under on the destination's side: the inverse's id, or this
  /// id with the high bit set (a hidden reverse link) when there is no inverse.
  let reverseID: UInt32
  /// The destination entity's number (`Model.destination(of:)`; 0 in a model that failed to
  /// resolve).
  let destinationNumber: UInt32
  var isToMany: Bool { declaration.isToMany }
  var isOrdered: Bool { declaration.isOrdered }

  static let hiddenReverseBit: UInt32 = 0x8000_0000

  init(declaration: Relationship, id: UInt32, owner: String, reverseID: UInt32, destinationNumber: UInt32) {
    self.declaration = declaration
    self.id = id
    self.owner = owner
    self.reverseID = reverseID
    self.destinationNumber = destinationNumber
  }
}
