/// Checks a list of entities and resolves inheritance, identity and numeric ids.
struct ModelResolver {
  let entities: [Entity]
  let numbering: ModelNumbering
  /// Whether the entities are a store's model, read back: checks added since it was stored
  /// that refuse what it says do not apply to it (it keeps opening, and can be migrated).
  let isStored: Bool
  private var problems: [ModelError.Problem] = []

  init(entities: [Entity], numbering: ModelNumbering, isStored: Bool = false) {
    self.entities = entities
    self.numbering = numbering
    self.isStored = isStored
  }

  private mutating func problem(_ place: String, _ reason: String) {
    problems.append(ModelError.Problem(place: place, reason: reason))
  }

  consuming func resolve() throws(ModelError) -> ([String: ResolvedEntity], RelationshipTable) {
    if entities.isEmpty { problem("entities", "a model needs at least one entity") }
    var byName: [String: Entity] = [:]
    for entity in entities {
      if entity.name.isEmpty { problem("entities", "an entity has an empty name") }
      if byName[entity.name] != nil { problem("entities.\(entity.name)", "declared twice") }
      byName[entity.name] = entity
    }
    // Inheritance chains, parent first.
    var chains: [String: [Entity]] = [:]
    for entity in entities {
      var chain = [entity]
      var seen: Set<String> = [entity.name]
      var current = entity
      while let parentName = current.parent {
        guard let parent = byName[parentName] else {
          problem("entities.\(current.name).parent", "\"\(parentName)\" is not an entity of the model")
          break
        }
        guard seen.insert(parentName).inserted else {
          problem("entities.\(entity.name).parent", "inheritance cycle through \"\(parentName)\"")
          break
        }
        chain.insert(parent, at: 0)
        current = parent
      }
      chains[entity.name] = chain
    }
    let relationshipIDs = numbering.relationships
    // A store's numbering covers its model; a gap would make ids collide.
    for entity in entities {
      if numbering.entities[entity.name] == nil {
        problem("entities.\(entity.name)", "the store's numbering has no number for it")
      }
      for relationship in entity.relationships where relationshipIDs["\(entity.name).\(relationship.name)"] == nil {
        problem(
          "entities.\(entity.name).relationships.\(relationship.name)", "the store's numbering has no number for it")
      }
    }
    // Each entity's family (itself and every entity that inherits from it, in model
    // order), from the chains: linear in the entities, not quadratic.
    var families: [String: [String]] = [:]
    for entity in entities {
      for ancestor in chains[entity.name] ?? [entity] { families[ancestor.name, default: []].append(entity.name) }
    }
    // Each entity's owning relationships, by destination, once: looked up per entity below.
    var owningByDestination: [String: [String]] = [:]
    for owner in entities {
      for relationship in owner.relationships where relationship.owns {
        owningByDestination[relationship.destination, default: []].append("\(owner.name).\(relationship.name)")
      }
    }
    var resolved: [String: ResolvedEntity] = [:]
    var relationshipsByID = RelationshipTable()
    for entity in entities {
      let chain = chains[entity.name] ?? [entity]
      let place = "entities.\(entity.name)"
      var attributes: [Attribute] = []
      var attributeIndex: [String: Attribute] = [:]
      var relationships: [ResolvedRelationship] = []
      var relationshipIndex: [String: ResolvedRelationship] = [:]
      var explicitIdentity: [String] = []
      for ancestor in chain {
        for attribute in ancestor.attributes {
          if attribute.name.isEmpty { problem("\(place).attributes", "an attribute has an empty name") }
          if attributeIndex[attribute.name] != nil {
            if ancestor.name == entity.name { problem("\(place).attributes.\(attribute.name)", "declared twice") }
            continue
          }
          checkKey(attribute.jsonKey, place: "entities.\(ancestor.name).attributes.\(attribute.name).jsonKey")
          attributes.append(attribute)
          attributeIndex[attribute.name] = attribute
        }
        for relationship in ancestor.relationships {
          let relPlace = "entities.\(ancestor.name).relationships.\(relationship.name)"
          if attributeIndex[relationship.name] != nil || relationshipIndex[relationship.name] != nil {
            if ancestor.name == entity.name { problem(relPlace, "the name is already used by another property") }
            continue
          }
          checkKey(relationship.jsonKey, place: "\(relPlace).jsonKey")
          let id = relationshipIDs["\(ancestor.name).\(relationship.name)"] ?? 0
          var reverseID = id | ResolvedRelationship.hiddenReverseBit
          if let destination = byName[relationship.destination] {
            if let inverseName = relationship.inverse {
              let destinationChain = chains[destination.name] ?? [destination]
              if let (inverseOwner, inverse) = destinationChain.lazy.compactMap({ owner in
                owner.relationships.first(where: { $0.name == inverseName }).map { (owner, $0) }
              }).first {
                reverseID = relationshipIDs["\(inverseOwner.name).\(inverse.name)"] ?? 0
                let pointsBack =
                  (chains[ancestor.name] ?? []).contains { $0.name == inverse.destination }
                  || (chains[inverse.destination]?.contains { $0.name == ancestor.name } ?? false)
                if !pointsBack {
                  problem(
                    "\(relPlace).inverse",
                    "\(destination.name).\(inverseName) points to \(inverse.destination), not back to \(ancestor.name)")
                } else if let back = inverse.inverse, back != relationship.name {
                  problem(
                    "\(relPlace).inverse",
                    "\(destination.name).\(inverseName) names \"\(back)\" as its inverse, not \"\(relationship.name)\"")
                }
              } else {
                problem("\(relPlace).inverse", "\"\(inverseName)\" is not a relationship of \(destination.name)")
              }
            }
          } else {
            problem("\(relPlace).to", "\"\(relationship.destination)\" is not an entity of the model")
          }
          if relationship.isOrdered && !relationship.isToMany {
            problem("\(relPlace).ordered", "only a to-many relationship can be ordered")
          }
          let resolvedRelationship = ResolvedRelationship(
            declaration: relationship, id: id, owner: ancestor.name, reverseID: reverseID,
            destinationNumber: numbering.entities[relationship.destination] ?? 0)
          relationships.append(resolvedRelationship)
          relationshipIndex[relationship.name] = resolvedRelationship
          relationshipsByID[id] = resolvedRelationship
        }
        if !ancestor.identity.isEmpty { explicitIdentity = ancestor.identity }
      }
      var named: Set<String> = []
      for name in explicitIdentity {
        // A store made before this check keys its objects by the identity as listed, so its
        // model is read as it is (`isStored`); a new model lists each attribute once.
        if !named.insert(name).inserted, !isStored {
          problem("\(place).identity", "\"\(name)\" is listed twice: an identity names each attribute once")
        }
        if let relationship = relationshipIndex[name] {
          if relationship.isToMany {
            problem(
              "\(place).identity",
              "\"\(name)\" is a to-many relationship: an identity names attributes and to-one relationships")
          }
          continue
        }
        guard let attribute = attributeIndex[name] else {
          problem("\(place).identity", "\"\(name)\" is not an attribute of \(entity.name) (nor a to-one relationship)")
          continue
        }
        if attribute.type == .json || attribute.type == .binary {
          problem(
            "\(place).identity", "\"\(name)\" is of type \(attribute.type.rawValue), which cannot identify an object")
        }
      }
      var identity = explicitIdentity
      if identity.isEmpty {
        if attributeIndex["id"] != nil {
          identity = ["id"]
        } else if attributeIndex["remoteID"] != nil {
          identity = ["remoteID"]
        }
      }
      if let numbers = numbering.attributes[entity.name],
        let unnumbered = attributes.first(where: { numbers[$0.name] == nil })
      {
        problem("\(place).attributes.\(unnumbered.name)", "the store's numbering has no number for it")
      }
      let family = families[entity.name] ?? [entity.name]
      let rootName = chain.first?.name ?? entity.name
      let owners = owningByDestination.isEmpty ? [] : chain.flatMap { owningByDestination[$0.name] ?? [] }
      resolved[entity.name] = ResolvedEntity(
        declaration: entity, id: numbering.entities[entity.name] ?? 0, rootName: rootName,
        rootID: numbering.entities[rootName] ?? 0,
        family: family, attributes: attributes, attributeIndex: attributeIndex,
        relationships: relationships, relationshipIndex: relationshipIndex, identity: identity, owners: owners,
        subentityKey: chain.reversed().lazy.compactMap(\.subentityKey).first,
        attributeNumbers: numbering.attributes[entity.name], nextAttributeNumber: numbering.nextAttributes[entity.name])
    }
    checkOwnershipAndKeyCycles(resolved)
    if !problems.isEmpty { throw ModelError(problems: problems) }
    return (resolved, relationshipsByID)
  }

  /// An `owns` on both sides of one relationship, an owned entity with a relationship that
  /// names no inverse back to its owner, and identities that go round through relationships
  /// (A's key holds B's, whose key holds A's) are refused: each has no answer to "which
  /// object is this?".
  private mutating func checkOwnershipAndKeyCycles(_ resolved: [String: ResolvedEntity]) {
    for entity in entities {
      for relationship in entity.relationships where relationship.owns {
        let place = "entities.\(entity.name).relationships.\(relationship.name).owns"
        if let inverse = relationship.inverse,
          let back = resolved[relationship.destination]?.relationshipIndex[inverse], back.declaration.owns
        {
          problem(
            place, "\(relationship.destination).\(inverse) owns \(entity.name) too: only one side can own the other")
        }
        if resolved[relationship.destination]?.declaration.isAbstract == true,
          resolved[relationship.destination]?.family.count == 1
        {
          problem(place, "\(relationship.destination) is abstract and has no sub-entity to own")
        }
      }
    }
    for entity in entities {
      guard let start = resolved[entity.name] else { continue }
      // Follows the identity's relationships; a path back to the start is a cycle.
      var path = [entity.name]
      var current = start
      var seen: Set<String> = [entity.name]
      while let part = current.identityParts.lazy.compactMap(\.relationship).first,
        let next = resolved[part.declaration.destination]
      {
        path.append(next.name)
        if !seen.insert(next.name).inserted {
          if next.name == entity.name {
            problem(
              "entities.\(entity.name).identity",
              "the key goes round through relationships (\(path.joined(separator: " → "))): "
                + "an identity cannot hold its own entity's key")
          }
          break
        }
        if next.identity.isEmpty {
          problem(
            "entities.\(current.name).identity",
            "\"\(part.name)\" points to \(next.name), which has no identity to be part of \(current.name)'s")
          break
        }
        current = next
      }
    }
  }

  private mutating func checkKey(_ key: String?, place: String) {
    guard let key else { return }
    if key.isEmpty || key.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
      problem(place, "\"\(key)\" is not a valid JSON key or key path")
    }
  }
}
