/// An entity of the model: its attributes, relationships and identity.
///
/// ```swift
/// Entity("Band", identity: ["name"], collectionKey: "bands") {
///   Attribute("name", .string)
///   Relationship("albums", to: "Album", many: true, inverse: "band")
/// }
/// ```
public struct Entity: Sendable, Hashable {
  /// The entity's name (`BandMember`).
  public var name: String
  /// Attributes declared on this entity (inherited ones are not repeated).
  public var attributes: [Attribute]
  /// Relationships declared on this entity.
  public var relationships: [Relationship]
  /// The identity: attributes, and to-one relationships whose target's key is part of it
  /// (`["item", "slot"]`). Empty means the default rule (`id`, else `remoteID`, else none:
  /// insert-only, unless a relationship owns the entity's objects).
  public var identity: [String]
  /// The top-level JSON key that holds a collection of this entity (`bands`).
  public var collectionKey: String?
  /// Where a payload of this entity keeps its array when it comes in an envelope
  /// (`results` of `{"count": …, "next": …, "results": […]}`): a dotted path.
  public var collectionPath: String?
  /// The parent entity, whose attributes, relationships and identity this one inherits.
  public var parent: String?
  /// The JSON key whose value names the sub-entity to create (`type`).
  public var subentityKey: String?
  /// Whether objects of exactly this entity cannot exist (only of its sub-entities).
  public var isAbstract: Bool
  /// Whether only attributes and relationships with a `jsonKey` are mapped (Groot's rule for
  /// entities that use `JSONKeyPath`).
  public var mapsOnlyCustomKeys: Bool
  /// A registered dictionary transformer that rewrites each JSON object of this entity before
  /// it is mapped (Groot's `JSONDictionaryTransformerName`).
  public var dictionaryTransformer: String?
  /// A registered entity mapper that names the sub-entity for each JSON object (Groot's
  /// `entityMapperName`).
  public var entityMapper: String?
  /// The name this entity had in the previous version of the model (Core Data's
  /// `renamingIdentifier`): migrating a store carries its objects over.
  public var renamedFrom: String?

  /// An entity with these members.
  public init(
    _ name: String, identity: [String] = [], collectionKey: String? = nil, parent: String? = nil,
    subentityKey: String? = nil, abstract: Bool = false, mapsOnlyCustomKeys: Bool = false,
    attributes: [Attribute] = [], relationships: [Relationship] = [], renamedFrom: String? = nil
  ) {
    self.name = name
    self.identity = identity
    self.collectionKey = collectionKey
    self.collectionPath = nil
    self.parent = parent
    self.subentityKey = subentityKey
    self.isAbstract = abstract
    self.mapsOnlyCustomKeys = mapsOnlyCustomKeys
    self.dictionaryTransformer = nil
    self.entityMapper = nil
    self.renamedFrom = renamedFrom
    self.attributes = attributes
    self.relationships = relationships
  }

  /// An entity whose members are listed in a builder block.
  public init(
    _ name: String, identity: [String] = [], collectionKey: String? = nil, parent: String? = nil,
    subentityKey: String? = nil, abstract: Bool = false, renamedFrom: String? = nil,
    @EntityMembersBuilder members: () -> [any EntityMember]
  ) {
    self.init(
      name, identity: identity, collectionKey: collectionKey, parent: parent,
      subentityKey: subentityKey, abstract: abstract, renamedFrom: renamedFrom)
    for member in members() {
      if let attribute = member as? Attribute { attributes.append(attribute) }
      if let relationship = member as? Relationship { relationships.append(relationship) }
    }
  }
}

/// An attribute or a relationship, as listed in an `Entity` builder block.
extension Entity {
  /// Whether a property with this custom key (nil: none) is mapped on import and written on
  /// export: under Groot's only-annotated rule (`mapsOnlyCustomKeys`) only annotated ones are.
  func mapsProperty(withCustomKey jsonKey: String?) -> Bool {
    !mapsOnlyCustomKeys || jsonKey != nil
  }
}

public protocol EntityMember: Sendable {}
extension Attribute: EntityMember {}
extension Relationship: EntityMember {}

/// Collects the attributes and relationships of an `Entity` builder block.
@resultBuilder
public enum EntityMembersBuilder {
  public static func buildExpression(_ member: some EntityMember) -> [any EntityMember] { [member] }
  public static func buildBlock(_ parts: [any EntityMember]...) -> [any EntityMember] { parts.flatMap { $0 } }
  public static func buildArray(_ parts: [[any EntityMember]]) -> [any EntityMember] { parts.flatMap { $0 } }
  public static func buildOptional(_ part: [any EntityMember]?) -> [any EntityMember] { part ?? [] }
  public static func buildEither(first: [any EntityMember]) -> [any EntityMember] { first }
  public static func buildEither(second: [any EntityMember]) -> [any EntityMember] { second }
}

/// Collects the entities of a `Model` builder block.
@resultBuilder
public enum ModelEntitiesBuilder {
  public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
  public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
  public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
  public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
}
