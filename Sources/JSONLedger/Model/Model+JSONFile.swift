import Foundation

extension Model {
  /// Reads a JSON model file (see the README's "Model file" section).
  ///
  /// Unknown keys, wrong types and inconsistencies are reported together, each with its place:
  /// `entities.Band.attributes.founded.type: "datetime" is not an attribute type`.
  public init(jsonFile path: String) throws {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ModelError(
        source: path,
        problems: [.init(place: ModelError.filePlace, reason: "cannot be read (\(SystemError.reason(errno)))")])
    }
    let json: JSONValue
    do { json = try JSONParser.parse(data) } catch {
      throw ModelError(source: path, problems: [.init(place: "", reason: "\(error)")])
    }
    do { try self.init(json: json) } catch var error {
      error.source = path
      throw error
    }
  }

  /// Reads a model from the JSON of a model file.
  public init(json: JSONValue) throws(ModelError) {
    try self.init(json: json, numbering: nil)
  }

  /// Reads a model from the JSON of a model file, numbered as given (nil: by position).
  /// `isStored`: the model a store keeps, read back (`ModelResolver.isStored`).
  init(json: JSONValue, numbering: ModelNumbering?, isStored: Bool = false) throws(ModelError) {
    var reader = ModelFileReader()
    let (keyCase, dateFormat, entities) = reader.read(json)
    if !reader.problems.isEmpty {
      // Every problem in one pass: the model's own checks too, when the reading is whole.
      var problems = reader.problems
      if reader.isComplete {
        do throws(ModelError) {
          _ = try Model(
            keyCase: keyCase, dateFormat: dateFormat, entities: entities,
            numbering: numbering ?? ModelNumbering(positionsOf: entities), isStored: isStored)
        } catch {
          problems += error.problems
        }
      }
      throw ModelError(problems: problems)
    }
    try self.init(
      keyCase: keyCase, dateFormat: dateFormat, entities: entities,
      numbering: numbering ?? ModelNumbering(positionsOf: entities), isStored: isStored)
  }

  /// The model as the JSON of a model file; reading it back gives an equal model.
  public var jsonValue: JSONValue {
    var root = JSONObject()
    root["keyCase"] = .string(keyCase.rawValue)
    root["dateFormat"] = .string(dateFormat.rawValue)
    var entityObjects = JSONObject()
    for entity in entities {
      var object = JSONObject()
      if entity.identity.count == 1 { object["identity"] = .string(entity.identity[0]) }
      if entity.identity.count > 1 { object["identity"] = .array(entity.identity.map { .string($0) }) }
      if let key = entity.collectionKey { object["collectionKey"] = .string(key) }
      if let path = entity.collectionPath { object["collectionPath"] = .string(path) }
      if let parent = entity.parent { object["parent"] = .string(parent) }
      if let key = entity.subentityKey { object["subentityKey"] = .string(key) }
      if entity.isAbstract { object["abstract"] = true }
      if entity.mapsOnlyCustomKeys { object["mapsOnlyCustomKeys"] = true }
      if let name = entity.dictionaryTransformer { object["dictionaryTransformer"] = .string(name) }
      if let name = entity.entityMapper { object["entityMapper"] = .string(name) }
      if let name = entity.renamedFrom { object["renamedFrom"] = .string(name) }
      var attributes = JSONObject()
      for attribute in entity.attributes {
        let plain =
          attribute.jsonKey == nil && attribute.transformer == nil && attribute.isExported
          && attribute.isOptional && !attribute.isIndexed && attribute.renamedFrom == nil
        if plain {
          attributes[attribute.name] = .string(attribute.type.rawValue)
          continue
        }
        var spec: JSONObject = ["type": .string(attribute.type.rawValue)]
        if let key = attribute.jsonKey { spec["jsonKey"] = .string(key) }
        if let name = attribute.transformer { spec["transformer"] = .string(name) }
        if !attribute.isExported { spec["export"] = false }
        if !attribute.isOptional { spec["optional"] = false }
        if attribute.isIndexed { spec["indexed"] = true }
        if let name = attribute.renamedFrom { spec["renamedFrom"] = .string(name) }
        attributes[attribute.name] = .object(spec)
      }
      object["attributes"] = .object(attributes)
      var relationships = JSONObject()
      for relationship in entity.relationships {
        var spec: JSONObject = ["to": .string(relationship.destination)]
        if relationship.isToMany { spec["many"] = true }
        if let inverse = relationship.inverse { spec["inverse"] = .string(inverse) }
        if relationship.isOrdered { spec["ordered"] = true }
        if let key = relationship.jsonKey { spec["jsonKey"] = .string(key) }
        if !relationship.isExported { spec["export"] = false }
        if relationship.deletesOrphans { spec["deleteOrphans"] = true }
        if relationship.deletionRule != .nullify { spec["deletionRule"] = .string(relationship.deletionRule.rawValue) }
        if relationship.owns { spec["owns"] = true }
        if let name = relationship.renamedFrom { spec["renamedFrom"] = .string(name) }
        relationships[relationship.name] = .object(spec)
      }
      if !relationships.isEmpty { object["relationships"] = .object(relationships) }
      entityObjects[entity.name] = .object(object)
    }
    root["entities"] = .object(entityObjects)
    return .object(root)
  }
}

/// Walks the JSON of a model file, collecting every problem with its place.
struct ModelFileReader {
  var problems: [ModelError.Problem] = []
  /// Whether what was read stands for the whole file: false once an element was left out or
  /// a value replaced by a default. Only a complete reading is checked as a model too, so
  /// that no problem is reported for an element that is only missing because it was bad.
  private(set) var isComplete = true

  /// A problem; `keepsModel`: the reading still stands for the file (an unknown key, a type
  /// name read as a placeholder type).
  private mutating func problem(_ place: String, _ reason: String, keepsModel: Bool = false) {
    problems.append(ModelError.Problem(place: place, reason: reason))
    if !keepsModel { isComplete = false }
  }

  private mutating func object(_ value: JSONValue, _ place: String, allowed: Set<String>) -> JSONObject? {
    guard case .object(let object) = value else {
      problem(place, "expected an object, found \(value.kindDescription)")
      return nil
    }
    for key in object.keys where !allowed.contains(key) {
      problem(
        place.isEmpty ? key : "\(place).\(key)",
        "unknown key (expected one of: \(allowed.sorted().joined(separator: ", ")))", keepsModel: true)
    }
    return object
  }

  private mutating func string(_ value: JSONValue?, _ place: String) -> String? {
    guard let value else { return nil }
    guard case .string(let string) = value else {
      problem(place, "expected a string, found \(value.kindDescription)")
      return nil
    }
    return string
  }

  private mutating func bool(_ value: JSONValue?, _ place: String, default fallback: Bool) -> Bool {
    guard let value else { return fallback }
    guard case .bool(let flag) = value else {
      problem(place, "expected true or false, found \(value.kindDescription)")
      return fallback
    }
    return flag
  }

  private mutating func choice<T: RawRepresentable<String> & CaseIterable>(
    _ value: JSONValue?, _ place: String, default fallback: T
  ) -> T {
    guard let text = string(value, place) else { return fallback }
    guard let parsed = T(rawValue: text) else {
      problem(place, "\"\(text)\" is not one of: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
      return fallback
    }
    return parsed
  }

  mutating func read(_ json: JSONValue) -> (KeyCase, DateFormat, [Entity]) {
    guard let root = object(json, "", allowed: ["keyCase", "dateFormat", "entities"]) else {
      return (.camelCase, .iso8601, [])
    }
    let keyCase: KeyCase = choice(root["keyCase"], "keyCase", default: .camelCase)
    let dateFormat: DateFormat = choice(root["dateFormat"], "dateFormat", default: .iso8601)
    guard let entitiesValue = root["entities"] else {
      problem("entities", "missing: a model needs at least one entity")
      return (keyCase, dateFormat, [])
    }
    guard case .object(let entityObjects) = entitiesValue else {
      problem("entities", "expected an object keyed by entity name, found \(entitiesValue.kindDescription)")
      return (keyCase, dateFormat, [])
    }
    var entities: [Entity] = []
    for member in entityObjects {
      if let entity = readEntity(member.key, member.value) { entities.append(entity) }
    }
    return (keyCase, dateFormat, entities)
  }

  private mutating func readEntity(_ name: String, _ value: JSONValue) -> Entity? {
    let place = "entities.\(name)"
    let allowed: Set<String> = [
      "identity", "collectionKey", "collectionPath", "parent", "subentityKey", "attributes", "relationships",
      "abstract",
      "mapsOnlyCustomKeys", "dictionaryTransformer", "entityMapper", "renamedFrom",
    ]
    guard let spec = object(value, place, allowed: allowed) else { return nil }
    var entity = Entity(name)
    switch spec["identity"] {
    case nil: break
    case .string(let one)?: entity.identity = [one]
    case .array(let many)?:
      entity.identity = many.enumerated().compactMap { string($0.element, "\(place).identity[\($0.offset)]") }
    case let other?:
      problem(
        "\(place).identity",
        "expected an attribute or relationship name or an array of them, found \(other.kindDescription)")
    }
    entity.collectionKey = string(spec["collectionKey"], "\(place).collectionKey")
    entity.collectionPath = string(spec["collectionPath"], "\(place).collectionPath")
    entity.parent = string(spec["parent"], "\(place).parent")
    entity.subentityKey = string(spec["subentityKey"], "\(place).subentityKey")
    entity.isAbstract = bool(spec["abstract"], "\(place).abstract", default: false)
    entity.mapsOnlyCustomKeys = bool(spec["mapsOnlyCustomKeys"], "\(place).mapsOnlyCustomKeys", default: false)
    entity.dictionaryTransformer = string(spec["dictionaryTransformer"], "\(place).dictionaryTransformer")
    entity.entityMapper = string(spec["entityMapper"], "\(place).entityMapper")
    entity.renamedFrom = string(spec["renamedFrom"], "\(place).renamedFrom")
    if let attributes = spec["attributes"] {
      if case .object(let members) = attributes {
        for member in members {
          if let attribute = readAttribute(member.key, member.value, place: "\(place).attributes.\(member.key)") {
            entity.attributes.append(attribute)
          }
        }
      } else {
        problem(
          "\(place).attributes", "expected an object keyed by attribute name, found \(attributes.kindDescription)")
      }
    }
    if let relationships = spec["relationships"] {
      if case .object(let members) = relationships {
        for member in members {
          if let relationship = readRelationship(
            member.key, member.value, place: "\(place).relationships.\(member.key)")
          {
            entity.relationships.append(relationship)
          }
        }
      } else {
        problem(
          "\(place).relationships",
          "expected an object keyed by relationship name, found \(relationships.kindDescription)")
      }
    }
    return entity
  }

  private mutating func attributeType(_ value: JSONValue?, _ place: String) -> AttributeType? {
    guard let text = string(value, place) else {
      if value == nil { problem(place, "missing: every attribute needs a type") }
      return nil
    }
    guard let type = AttributeType(rawValue: text) else {
      problem(
        place,
        "\"\(text)\" is not an attribute type (one of: \(AttributeType.allCases.map(\.rawValue).joined(separator: ", ")))",
        keepsModel: true)
      // A placeholder, so that the rest of the model is still checked in this pass.
      return .string
    }
    return type
  }

  private mutating func readAttribute(_ name: String, _ value: JSONValue, place: String) -> Attribute? {
    if case .string = value {
      return attributeType(value, "\(place)").map { Attribute(name, $0) }
    }
    let allowed: Set<String> = [
      "type", "jsonKey", "transformer", "export", "optional", "indexed", "renamedFrom",
    ]
    guard let spec = object(value, place, allowed: allowed) else { return nil }
    guard let type = attributeType(spec["type"], "\(place).type") else { return nil }
    return Attribute(
      name, type, jsonKey: string(spec["jsonKey"], "\(place).jsonKey"),
      transformer: string(spec["transformer"], "\(place).transformer"),
      exported: bool(spec["export"], "\(place).export", default: true),
      optional: bool(spec["optional"], "\(place).optional", default: true),
      indexed: bool(spec["indexed"], "\(place).indexed", default: false),
      renamedFrom: string(spec["renamedFrom"], "\(place).renamedFrom"))
  }

  private mutating func readRelationship(_ name: String, _ value: JSONValue, place: String) -> Relationship? {
    let allowed: Set<String> = [
      "to", "many", "inverse", "ordered", "jsonKey", "export", "deleteOrphans", "deletionRule", "owns", "renamedFrom",
    ]
    guard let spec = object(value, place, allowed: allowed) else { return nil }
    guard let destination = string(spec["to"], "\(place).to") else {
      if spec["to"] == nil { problem("\(place).to", "missing: the destination entity") }
      return nil
    }
    return Relationship(
      name, to: destination, many: bool(spec["many"], "\(place).many", default: false),
      ordered: bool(spec["ordered"], "\(place).ordered", default: false),
      inverse: string(spec["inverse"], "\(place).inverse"),
      jsonKey: string(spec["jsonKey"], "\(place).jsonKey"),
      exported: bool(spec["export"], "\(place).export", default: true),
      deleteOrphans: bool(spec["deleteOrphans"], "\(place).deleteOrphans", default: false),
      deletionRule: deletionRule(spec["deletionRule"], "\(place).deletionRule"),
      owns: bool(spec["owns"], "\(place).owns", default: false),
      renamedFrom: string(spec["renamedFrom"], "\(place).renamedFrom"))
  }

  private mutating func deletionRule(_ value: JSONValue?, _ place: String) -> Relationship.DeletionRule {
    guard let value else { return .nullify }
    guard let text = string(value, place) else { return .nullify }
    guard let rule = Relationship.DeletionRule(rawValue: text) else {
      problem(place, "expected one of \(Relationship.DeletionRule.allCases.map(\.rawValue).joined(separator: ", "))")
      return .nullify
    }
    return rule
  }
}
