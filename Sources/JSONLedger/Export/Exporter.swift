import Foundation

/// Turns object snapshots back into JSON in the backend's shape: keys in the JSON casing or
/// custom keys (dotted paths rebuilt as nested objects), reserved words de-qualified
/// (`bandDescription` → `description`), `remoteID` → `id`, reverse transformers, dates in
/// the model's format (UTC), non-exported properties left out, nil as `null`.
struct Exporter {
  let reader: SnapshotReader
  let transformers: ValueTransformers
  let options: ExportOptions
  /// Where each exported attribute goes, per entity, worked out once.
  private let attributePaths: [String: [(attribute: Attribute, path: [String])]]
  /// Where each exported relationship goes, per entity, worked out once.
  private let relationshipPaths: [String: [(relationship: ResolvedRelationship, path: [String])]]

  init(reader: SnapshotReader, transformers: ValueTransformers, options: ExportOptions) {
    self.reader = reader
    self.transformers = transformers
    self.options = options
    var paths: [String: [(attribute: Attribute, path: [String])]] = [:]
    var links: [String: [(relationship: ResolvedRelationship, path: [String])]] = [:]
    let keyCase = options.keyCase ?? reader.model.keyCase
    for entity in reader.model.entities {
      guard let resolved = reader.model.resolved(entity.name) else { continue }
      paths[entity.name] = resolved.attributes.filter { $0.isExported || options.usesModelNames }.map {
        ($0, Self.exportPath(of: $0, in: resolved, model: reader.model, options: options))
      }
      links[entity.name] = resolved.relationships.filter { $0.declaration.isExported || options.usesModelNames }.map { relationship in
        let path = options.usesModelNames ? [relationship.name]
          : relationship.declaration.jsonKey.map { $0.split(separator: ".").map(String.init) }
            ?? [KeyInflection.jsonKey(for: relationship.name, keyCase: keyCase)]
        return (relationship, path)
      }
    }
    attributePaths = paths
    relationshipPaths = links
  }

  var model: Model { reader.model }
  var keyCase: KeyCase { options.keyCase ?? model.keyCase }
  var dateFormat: DateFormat { options.dateFormat ?? model.dateFormat }

  func export(_ object: ObjectSnapshot) throws -> JSONValue {
    var ancestors: Set<UInt64> = []
    return try export(object, depth: 0, ancestors: &ancestors)
  }

  private func export(_ object: ObjectSnapshot, depth: Int, ancestors: inout Set<UInt64>) throws -> JSONValue {
    guard let entity = model.resolved(object.entity) else { return .null }
    var json = JSONObject()
    for (attribute, path) in attributePaths[entity.name] ?? [] {
      let value = try jsonValue(object.attributes[attribute.name], of: attribute, entity: entity)
      Self.set(value, at: path, in: &json)
    }
    if let key = entity.subentityKey, entity.attributeIndex[key] == nil, model.resolved(entity.rootName)?.family.count ?? 1 > 1 {
      json[key] = .string(entity.name)
    }
    ancestors.insert(object.objectID)
    defer { ancestors.remove(object.objectID) }
    for (relationship, exportPath) in relationshipPaths[entity.name] ?? [] {
      let targets = object.relationships[relationship.name] ?? []
      var path = exportPath
      let value: JSONValue
      switch options.relationships {
      case .none:
        continue
      case .ids:
        value = keysValue(targets, toMany: relationship.isToMany)
      case .nested(let limit), .rails(let limit):
        var rails: Bool = if case .rails = options.relationships { true } else { false }
        var nested: [JSONValue] = []
        var onlyKeys = true
        let related = try reader.related(object, relationship.name)
        for target in related {
          if depth + 1 > limit || ancestors.contains(target.objectID) {
            nested.append(keyValue(target.key))
          } else {
            nested.append(try export(target, depth: depth + 1, ancestors: &ancestors))
            onlyKeys = false
          }
        }
        // A back-reference or a link past the depth bound is written as keys under the plain
        // name: Rails' `_attributes` must hold objects.
        if rails, onlyKeys, !related.isEmpty { rails = false }
        if rails, let last = path.last {
          path[path.count - 1] = keyCase == .snakeCase ? last + "_attributes" : last + "Attributes"
        }
        if relationship.isToMany {
          if rails {
            value = .object(JSONObject(nested.enumerated().map { JSONObject.Member(key: String($0.offset), value: $0.element) }))
          } else {
            value = .array(nested)
          }
        } else {
          value = nested.first ?? .null
        }
      }
      Self.set(value, at: path, in: &json)
    }
    return .object(json)
  }

  private func inflect(_ name: String) -> String { KeyInflection.jsonKey(for: name, keyCase: keyCase) }

  /// Where an attribute goes in the exported object.
  static func exportPath(of attribute: Attribute, in entity: ResolvedEntity, model: Model, options: ExportOptions) -> [String] {
    let keyCase = options.keyCase ?? model.keyCase
    func inflect(_ name: String) -> String { KeyInflection.jsonKey(for: name, keyCase: keyCase) }
    if options.usesModelNames { return [attribute.name] }
    if let key = attribute.jsonKey { return key.split(separator: ".").map(String.init) }
    if attribute.name == "remoteID", entity.attributeIndex["id"] == nil { return ["id"] }
    var qualifier: String? = entity.name
    while let name = qualifier, let resolved = model.resolved(name) {
      for word in KeyInflection.reservedWords
      where KeyInflection.normalized(attribute.name) == KeyInflection.normalized(name + word) {
        return [word]
      }
      qualifier = resolved.declaration.parent
    }
    return [inflect(attribute.name)]
  }

  func jsonValue(_ value: AttributeValue?, of attribute: Attribute, entity: ResolvedEntity) throws -> JSONValue {
    guard let value else { return .null }
    let plain = Self.json(value, dateFormat: dateFormat)
    if !options.usesModelNames, let name = attribute.transformer, let reverse = transformers[name]?.reverse {
      do { return try reverse(plain) } catch {
        throw LedgerError.invalidArgument("the reverse of value transformer \"\(name)\" failed on \(entity.name).\(attribute.name): \(error)")
      }
    }
    return plain
  }

  static func json(_ value: AttributeValue, dateFormat: DateFormat) -> JSONValue {
    switch value {
    case .string(let text): .string(text)
    case .integer(let number): .number(JSONNumber(number))
    case .double(let number): .number(JSONNumber(number))
    case .float(let number): .number(JSONNumber(Double(number.description) ?? Double(number)))
    case .decimal(let number): .number(JSONNumber(number))
    case .bool(let flag): .bool(flag)
    case .date(let date): DateCoding.jsonValue(from: date, format: dateFormat)
    case .uuid(let uuid): .string(uuid.uuidString)
    case .url(let url): .string(url.absoluteString)
    case .binary(let data): .string(data.base64EncodedString())
    case .json(let json): json
    }
  }

  func keyValue(_ key: ObjectKey) -> JSONValue {
    let parts = key.identity.map { Self.json($0, dateFormat: dateFormat) }
    if parts.count == 1 { return parts[0] }
    guard let entity = model.resolved(key.entity) else { return .array(parts) }
    return .object(JSONObject(zip(entity.identity, parts).map { JSONObject.Member(key: inflect($0.0), value: $0.1) }))
  }

  private func keysValue(_ targets: [ObjectKey], toMany: Bool) -> JSONValue {
    toMany ? .array(targets.map(keyValue)) : targets.first.map(keyValue) ?? .null
  }

  /// Sets `value` at a key path, creating the intermediate objects.
  static func set(_ value: JSONValue, at path: [String], in object: inout JSONObject) {
    guard let first = path.first else { return }
    if path.count == 1 {
      object[first] = value
      return
    }
    var inner = object[first]?.objectValue ?? JSONObject()
    set(value, at: Array(path.dropFirst()), in: &inner)
    object[first] = .object(inner)
  }

  /// The top-level key of an entity's collection in an exported document.
  static func collectionKey(of entity: Entity, keyCase: KeyCase) -> String {
    if let key = entity.collectionKey { return key }
    let plural = ChangeBatch.plural(entity.name)
    return keyCase == .snakeCase ? KeyInflection.snakeCased(plural) : plural.prefix(1).lowercased() + plural.dropFirst()
  }
}
