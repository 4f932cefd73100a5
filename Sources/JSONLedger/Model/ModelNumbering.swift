/// The numbers a store gives a model's entities and relationships: an object id carries its
/// root entity's number and a stored link its relationship's, so a number stays with its
/// entity or relationship through every version of the model (renames included), a new one
/// takes the next unused number, and a removed one's number is never given again.
///
/// A model made in Swift or read from a file is numbered by position (entities 1, 2, … in
/// declaration order; relationships 1, 2, … across the entities); a store keeps the
/// numbering of each version of its model beside it.
///
/// Attributes are numbered per concrete entity (inherited ones included): a stored state names
/// each attribute by its number. An entity this numbering has no attribute numbers for numbers
/// them by position among its sorted names (1, 2, …), as every store did before numbers were
/// kept; a later version (`continued`) keeps each continued attribute's number and gives a new
/// one the entity's next, so that adding an attribute changes no stored state.
struct ModelNumbering: Sendable, Equatable {
  /// Entity number by entity name.
  private(set) var entities: [String: UInt32]
  /// Relationship number by `Entity.relationship`, the entity that declares it.
  private(set) var relationships: [String: UInt32]
  /// The next unused numbers.
  private(set) var nextEntity: UInt32
  private(set) var nextRelationship: UInt32
  /// Attribute number by entity, then attribute name (absent entities: by position).
  private(set) var attributes: [String: [String: UInt32]] = [:]
  /// The next unused attribute number of each entity in `attributes`.
  private(set) var nextAttributes: [String: UInt32] = [:]

  /// Numbers by position.
  init(positionsOf entities: [Entity]) {
    self.entities = [:]
    self.relationships = [:]
    nextEntity = 1
    nextRelationship = 1
    for entity in entities { number(entity) }
  }

  /// The numbering of `entities`, a later version of `old` numbered `self`: what
  /// `lineage` says continues an old entity or relationship keeps its number.
  func continued(to entities: [Entity], lineage: ModelLineage) -> ModelNumbering {
    var next = ModelNumbering(
      entities: [:], relationships: [:], nextEntity: nextEntity, nextRelationship: nextRelationship)
    for entity in entities {
      let oldEntity = lineage.oldEntityName(of: entity.name)
      if let oldEntity, let number = self.entities[oldEntity] {
        next.entities[entity.name] = number
      } else {
        next.entities[entity.name] = next.nextEntity
        next.nextEntity += 1
      }
      for relationship in entity.relationships {
        let key = Self.key(entity.name, relationship.name)
        if let oldEntity, let oldName = lineage.oldRelationshipName(of: relationship, declaredBy: entity.name),
          let number = relationships[Self.key(oldEntity, oldName)]
        {
          next.relationships[key] = number
        } else {
          next.relationships[key] = next.nextRelationship
          next.nextRelationship += 1
        }
      }
    }
    return next
  }

  private init(
    entities: [String: UInt32], relationships: [String: UInt32], nextEntity: UInt32, nextRelationship: UInt32
  ) {
    self.entities = entities
    self.relationships = relationships
    self.nextEntity = nextEntity
    self.nextRelationship = nextRelationship
  }

  private mutating func number(_ entity: Entity) {
    entities[entity.name] = nextEntity
    nextEntity += 1
    for relationship in entity.relationships {
      relationships[Self.key(entity.name, relationship.name)] = nextRelationship
      nextRelationship += 1
    }
  }

  static func key(_ entity: String, _ relationship: String) -> String { "\(entity).\(relationship)" }

  /// The attribute numbers of the entities of `next`, a model numbered like this one but for
  /// its attributes, that follows `old`: what `lineage` says continues an old attribute keeps
  /// its number, a new one takes the entity's next; a new entity's are by position.
  mutating func continueAttributes(from old: Model, to next: Model, lineage: ModelLineage) {
    attributes = [:]
    nextAttributes = [:]
    for entity in next.resolvedInOrder {
      guard let oldName = lineage.oldEntityName(of: entity.name), let previous = old.resolved(oldName) else {
        continue
      }
      var numbers: [String: UInt32] = [:]
      var nextNumber = previous.nextAttributeNumber
      let predecessors = ModelLineage.oldAttributeNames(of: entity.attributes, among: previous.attributes)
      for (attribute, predecessor) in zip(entity.attributes, predecessors) {
        if let predecessor, let number = previous.attributeNumber(of: predecessor) {
          numbers[attribute.name] = number
        } else {
          numbers[attribute.name] = nextNumber
          nextNumber += 1
        }
      }
      attributes[entity.name] = numbers
      nextAttributes[entity.name] = nextNumber
    }
  }

  /// Checks (with `JSONLEDGER_INTERNAL_CHECKS`) that no two entities and no two
  /// relationships share a number, and that every number is below the next unused one.
  func checkUniqueness() {
    #if JSONLEDGER_INTERNAL_CHECKS
      precondition(Set(entities.values).count == entities.count, "two entities share a number: \(entities)")
      precondition(
        Set(relationships.values).count == relationships.count, "two relationships share a number: \(relationships)")
      precondition(
        entities.values.allSatisfy { $0 < nextEntity } && relationships.values.allSatisfy { $0 < nextRelationship })
      for (entity, numbers) in attributes {
        precondition(Set(numbers.values).count == numbers.count, "two attributes of \(entity) share a number")
        precondition(numbers.values.allSatisfy { $0 < nextAttributes[entity] ?? 0 })
      }
    #endif
  }

  /// The number of the relationship `name` declared by `entity`.
  func relationship(_ name: String, declaredBy entity: String) -> UInt32? {
    relationships[Self.key(entity, name)]
  }
}

extension ModelNumbering {
  /// `{"entities": {name: number}, "relationships": {"Entity.name": number}, "next": [e, r]}`,
  /// with `"attributes": {entity: {name: number}}` and `"nextAttributes": {entity: number}`
  /// when it numbers attributes.
  var jsonValue: JSONValue {
    var entityObject = JSONObject()
    for (name, number) in entities.sorted(by: { $0.value < $1.value }) {
      entityObject[name] = .number(JSONNumber(Int(number)))
    }
    var relationshipObject = JSONObject()
    for (name, number) in relationships.sorted(by: { $0.value < $1.value }) {
      relationshipObject[name] = .number(JSONNumber(Int(number)))
    }
    var object: JSONObject = [
      "entities": .object(entityObject), "relationships": .object(relationshipObject),
      "next": .array([.number(JSONNumber(Int(nextEntity))), .number(JSONNumber(Int(nextRelationship)))]),
    ]
    if !attributes.isEmpty {
      var attributeObject = JSONObject()
      for (entity, numbers) in attributes.sorted(by: { $0.key < $1.key }) {
        var entityNumbers = JSONObject()
        for (name, number) in numbers.sorted(by: { $0.value < $1.value }) {
          entityNumbers[name] = .number(JSONNumber(Int(number)))
        }
        attributeObject[entity] = .object(entityNumbers)
      }
      var nextObject = JSONObject()
      for (entity, number) in nextAttributes.sorted(by: { $0.key < $1.key }) {
        nextObject[entity] = .number(JSONNumber(Int(number)))
      }
      object["attributes"] = .object(attributeObject)
      object["nextAttributes"] = .object(nextObject)
    }
    return .object(object)
  }

  /// A numbering read back from `jsonValue`; nil when it is not one.
  init?(json: JSONValue) {
    guard case .object(let root) = json, case .object(let entityObject)? = root["entities"],
      case .object(let relationshipObject)? = root["relationships"], case .array(let next)? = root["next"],
      next.count == 2, let nextEntity = next[0].storedNumber, let nextRelationship = next[1].storedNumber
    else { return nil }
    var entities: [String: UInt32] = [:]
    for member in entityObject {
      guard let number = member.value.storedNumber else { return nil }
      entities[member.key] = number
    }
    var relationships: [String: UInt32] = [:]
    for member in relationshipObject {
      guard let number = member.value.storedNumber else { return nil }
      relationships[member.key] = number
    }
    self.init(
      entities: entities, relationships: relationships, nextEntity: nextEntity, nextRelationship: nextRelationship)
    // Absent in the numberings of stores made before attributes were numbered.
    guard let attributeValue = root["attributes"] else { return }
    guard case .object(let attributeObject) = attributeValue, case .object(let nextObject)? = root["nextAttributes"]
    else { return nil }
    for entity in attributeObject {
      guard case .object(let numbers) = entity.value, let next = nextObject[entity.key]?.storedNumber else {
        return nil
      }
      var entityNumbers: [String: UInt32] = [:]
      for member in numbers {
        guard let number = member.value.storedNumber, number < next else { return nil }
        entityNumbers[member.key] = number
      }
      attributes[entity.key] = entityNumbers
      nextAttributes[entity.key] = next
    }
  }
}

extension JSONValue {
  /// A number from 1 to `UInt32.max`, as numberings hold them; nil for anything else.
  fileprivate var storedNumber: UInt32? {
    guard case .number(let number) = self, let value = number.int64Value, value >= 1, value <= Int64(UInt32.max)
    else { return nil }
    return UInt32(value)
  }
}
