import Foundation

/// Turns object snapshots back into JSON in the backend's shape: keys in the JSON casing or
/// custom keys (dotted paths rebuilt as nested objects), reserved words de-qualified
/// (`bandDescription` → `description`), `remoteID` → `id`, reverse transformers, dates in
/// the model's format (UTC), non-exported properties left out, nil as `null`.
final class Exporter {
  let reader: SnapshotReader
  let transformers: ValueTransformers
  let options: ExportOptions
  /// What to write for each entity, worked out on first need (`plan(for:)`): exporting one
  /// object works out its entity's plan alone.
  private var plans: [String: EntityPlan] = [:]
  /// For each entity (by id), the members of its exported object in the order they are
  /// written, for writing it straight from its stored bytes (`write(_:into:parts:)`) with no
  /// name looked up; nil when two fields share a key, or relationships nest, and its object
  /// is built as a `JSONValue` first. Empty for an exporter that builds `JSONValue`s only.
  ///
  /// This and `writtenKeys` are constants, set once in `init`: every object written as text
  /// reads them, and a `var` or `lazy var` of a class pays an exclusivity check and a retain
  /// on each read.
  let stepsByEntity: [MemberSteps?]
  private let relatedObjects = RelatedObjects()
  /// The keys of objects written as text, for the objects written later that point to them
  /// (empty until then: making it allocates the one object). Not optional: unwrapping it
  /// for each key costs two retains more.
  let writtenKeys: WrittenKeys
  /// The text of the date being written (`write(_:into:parts:)`). Unchecked exclusivity:
  /// only that method touches it, one access at a time, on the export's thread.
  @exclusivity(unchecked) var dateText: [UInt8] = []

  /// One exported attribute: where it goes, and the transformer to reverse.
  struct AttributeField {
    let name: String
    let path: [String]
    let transformer: String?
  }

  /// One exported relationship and where it goes.
  struct RelationshipField {
    let name: String
    let isToMany: Bool
    let path: [String]
    /// The relationship of the destination that points back (its inverse), if any.
    let inverse: String?
    /// Whether its targets are written nested whatever the export's mode: rows it owns, or a
    /// relationship `ExportOptions.nestedRelationships` names.
    let isInline: Bool
    /// Whether it owns its targets (`Relationship.owns`): written even with `.none`.
    let owns: Bool
    /// Whether its destination or an entity inheriting from it has no identity, so that a
    /// target may have no key to be written as.
    let mayHoldKeyless: Bool
    /// Whether the destination writes the link back (its inverse is exported). In a
    /// whole-store export a target with no identity is then written in its own collection,
    /// with the link, and left out here; otherwise it is written here, nested, and left out
    /// of its collection. Either way it is written once, and an import makes it once.
    let isWrittenBack: Bool
  }

  struct EntityPlan {
    let attributes: [AttributeField]
    let relationships: [RelationshipField]
    /// The subentity key, written with the entity's name when its family has several members
    /// and no attribute of that name.
    let typeKey: String?
    /// How a composite key of this entity is written: its identity's JSON keys.
    let identityKeys: [String]
    /// For an entity with no identity and no owner, its relationships that are not exported
    /// but whose inverse is: an object linked through one is written nested in the object
    /// that links to it, not in its own collection of a whole-store export.
    let linkedInlineThrough: [String]
  }

  /// An exporter that builds `JSONValue`s, or, given `writer`, also writes objects as text
  /// the way `writer` writes them (in key order when it sorts keys). Its plans cost a few
  /// thousand instructions an entity more for text, which one object's `JSONValue` (a read
  /// by key over HTTP, a page of a query) does not pay.
  init(
    reader: SnapshotReader, transformers: ValueTransformers, options: ExportOptions, writer: JSONWriter? = nil
  ) {
    self.reader = reader
    self.transformers = transformers
    self.options = options
    writtenKeys = WrittenKeys(store: reader.store)
    guard let writer else {
      stepsByEntity = []
      return
    }
    var plans: [String: EntityPlan] = [:]
    var stepsByEntity: [MemberSteps?] = []
    for entity in reader.model.entities {
      guard let resolved = reader.model.resolved(entity.name) else { continue }
      let plan = Self.plan(of: resolved, model: reader.model, options: options)
      plans[entity.name] = plan
      // Ids are small (one per entity the model ever had); a larger one is written the slow way.
      guard let members = Self.members(of: plan, entity: resolved, options: options, writer: writer),
        Int(resolved.id) < 1 << 16
      else { continue }
      let index = Int(resolved.id)
      if stepsByEntity.count <= index {
        stepsByEntity.append(contentsOf: repeatElement(nil, count: index + 1 - stepsByEntity.count))
      }
      stepsByEntity[index] = MemberSteps(members, writer: writer)
    }
    self.plans = plans
    self.stepsByEntity = stepsByEntity
  }

  /// What to write for objects of `entityName` (nil: not in the model).
  func plan(for entityName: String) -> EntityPlan? {
    if let plan = plans[entityName] { return plan }
    guard let resolved = model.resolved(entityName) else { return nil }
    let plan = Self.plan(of: resolved, model: model, options: options)
    plans[entityName] = plan
    return plan
  }

  private static func plan(of resolved: ResolvedEntity, model: Model, options: ExportOptions) -> EntityPlan {
    let entity = resolved.declaration
    let keyCase = options.keyCase ?? model.keyCase
    // Codable decoding (`usesModelNames`) sees every property; JSON export only what import maps.
    let keys = EntityKeyTable(entity: resolved, model: model)
    var attributes = resolved.attributes.filter {
      options.usesModelNames || ($0.isExported && entity.mapsProperty(withCustomKey: $0.jsonKey))
    }.map {
      AttributeField(
        name: $0.name, path: Self.exportPath(of: $0, keys: keys, keyCase: keyCase, options: options),
        transformer: options.usesModelNames ? nil : $0.transformer)
    }
    // A key two attributes are read from (a custom key that is another's name) is written
    // once: from the identity's attribute if one of them is, else from the first.
    if !options.usesModelNames {
      var kept: [[String]: Int] = [:]
      var dropped = IndexSet()
      for (index, field) in attributes.enumerated() {
        guard let earlier = kept[field.path] else {
          kept[field.path] = index
          continue
        }
        let preferLater =
          resolved.identity.contains(field.name) && !resolved.identity.contains(attributes[earlier].name)
        dropped.insert(preferLater ? earlier : index)
        if preferLater { kept[field.path] = index }
      }
      attributes = attributes.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
    }
    func isExported(_ relationship: ResolvedRelationship, of entity: Entity) -> Bool {
      options.usesModelNames
        || (relationship.declaration.isExported && entity.mapsProperty(withCustomKey: relationship.declaration.jsonKey))
    }
    // Whether `destination` writes the relationship back to its inverse `name`.
    func writesBack(_ destination: ResolvedEntity?, _ name: String?) -> Bool {
      guard let destination, let name, let inverse = destination.relationshipIndex[name] else { return false }
      return isExported(inverse, of: destination.declaration)
    }
    let relationships = resolved.relationships.filter { isExported($0, of: entity) }.map {
      relationship in
      let path =
        options.usesModelNames
        ? [relationship.name]
        : relationship.declaration.jsonKey.map { $0.split(separator: ".").map(String.init) }
          ?? [
            KeyInflection.jsonKey(
              for: keys.previousName(of: relationship.name) ?? relationship.name, keyCase: keyCase)
          ]
      let named =
        options.nestedRelationships.contains(relationship.name)
        || options.nestedRelationships.contains(path.joined(separator: "."))
      return RelationshipField(
        name: relationship.name, isToMany: relationship.isToMany, path: path,
        inverse: relationship.declaration.inverse, isInline: relationship.declaration.owns || named,
        owns: relationship.declaration.owns,
        mayHoldKeyless: model.destination(of: relationship).map { destination in
          destination.family.contains { model.resolved($0)?.isInsertOnly ?? true }
        } ?? true,
        isWrittenBack: writesBack(model.destination(of: relationship), relationship.declaration.inverse))
    }
    let linkedInlineThrough =
      resolved.isInsertOnly && !resolved.isOwned
      ? resolved.relationships.filter { relationship in
        !isExported(relationship, of: entity)
          && writesBack(model.destination(of: relationship), relationship.declaration.inverse)
      }.map(\.name) : []
    var typeKey: String?
    if let key = resolved.subentityKey, resolved.attributeIndex[key] == nil,
      model.resolved(resolved.rootName)?.family.count ?? 1 > 1
    {
      typeKey = key
    }
    return EntityPlan(
      attributes: attributes, relationships: relationships, typeKey: typeKey,
      identityKeys: resolved.identity.map { KeyInflection.jsonKey(for: $0, keyCase: keyCase) },
      linkedInlineThrough: linkedInlineThrough)
  }

  /// Whether a whole-store export writes `object` inside the object that links to it rather
  /// than in its own collection (`EntityPlan.linkedInlineThrough`).
  func isWrittenInline(_ object: ObjectSnapshot) -> Bool {
    if case .none = options.relationships { return false }
    guard options.listsEveryCollection, let plan = plan(for: object.entity) else { return false }
    return plan.linkedInlineThrough.contains { !(object.relationships[$0] ?? []).isEmpty }
  }

  var model: Model { reader.model }
  var keyCase: KeyCase { options.keyCase ?? model.keyCase }
  var dateFormat: DateFormat { options.dateFormat ?? model.dateFormat }

  func export(_ object: ObjectSnapshot) throws -> JSONValue {
    var walk = Walk()
    let json = try export(object, depth: 0, walk: &walk, reachedBy: nil)
    guard options.marksPlaceholders, object.isPlaceholder, case .object(var members) = json else { return json }
    members["placeholder"] = true
    return .object(members)
  }

  /// What a nested export carries down its branches: the objects being written around the
  /// current one (for the cycle check).
  private struct Walk {
    var ancestors: Set<UInt64> = []
  }

  /// Related objects read so far by this exporter (one export call), each read once: a
  /// label on 20,000 issues is read, and its links named, once, not once per issue.
  private final class RelatedObjects {
    var snapshots: [UInt64: ObjectSnapshot] = [:]
  }

  /// `walk.ancestors` (the objects being written around this one, for nested relationships)
  /// is kept only when relationships are nested. `reachedBy` is the relationship of this object
  /// that points back to the object it is nested in: left out of a nested export (as Sync and
  /// Groot do) unless `ExportOptions.keepsInverseRelationships`, so that a nested object does
  /// not list every sibling that shares it and the export stays linear in what it writes.
  private func export(_ object: ObjectSnapshot, depth: Int, walk: inout Walk, reachedBy: String?) throws -> JSONValue {
    guard let plan = plan(for: object.entity) else { return .null }
    let dateFormat = self.dateFormat
    var json = JSONObject(minimumCapacity: plan.attributes.count + plan.relationships.count + 1)
    for field in plan.attributes {
      let value = try jsonValue(object.attributes[field.name], of: field, entity: object.entity, dateFormat: dateFormat)
      Self.set(value, at: field.path, in: &json)
    }
    if let key = plan.typeKey { json[key] = .string(object.entity) }
    walk.ancestors.insert(object.objectID)
    defer { walk.ancestors.remove(object.objectID) }
    for field in plan.relationships {
      if let reachedBy, field.name == reachedBy, !options.keepsInverseRelationships { continue }
      var path = field.path
      let value: JSONValue
      // How deep related objects nest below this one; nil: written as keys.
      var limit: Int?
      // A link to an object with no identity and no owner, in a whole-store export: left out
      // when that object writes it back from its own collection, else written nested here.
      var inlinesKeyless = false
      if options.listsEveryCollection, !field.owns, field.mayHoldKeyless,
        (object.relationships[field.name] ?? []).contains(where: { $0.identity.isEmpty })
      {
        if field.isWrittenBack { continue }
        inlinesKeyless = true
      }
      switch options.relationships {
      case .none:
        guard field.owns else { continue }
        limit = NestingLimit.objects
      case .ids: limit = field.isInline ? NestingLimit.objects : nil
      case .nested(let requested), .rails(let requested):
        limit = field.isInline ? NestingLimit.objects : min(requested, NestingLimit.objects)
      }
      if inlinesKeyless { limit = max(limit ?? 0, depth + 1) }
      guard let limit else {
        let targets = object.relationships[field.name] ?? []
        // An object of an entity with no identity has no key to name it by: a relationship
        // that holds one is left out (`{}` would read back as a new object, `null` or a list
        // without it as no link).
        if field.mayHoldKeyless, targets.contains(where: { $0.identity.isEmpty }) { continue }
        if field.isToMany {
          var keys: [JSONValue] = []
          keys.reserveCapacity(targets.count)
          for target in targets { keys.append(keyValue(target, dateFormat: dateFormat)) }
          value = .array(keys)
        } else {
          value = targets.first.map { keyValue($0, dateFormat: dateFormat) } ?? .null
        }
        Self.set(value, at: path, in: &json)
        continue
      }
      var rails: Bool = if case .rails = options.relationships { true } else { false }
      var nested: [JSONValue] = []
      var onlyKeys = true
      let related = try reader.related(object, field.name, cache: &relatedObjects.snapshots)
      for target in related {
        // A row it owns is the object's own value, written whole; anything else past the
        // depth bound, already being written higher up, or a placeholder (known by its key
        // alone) is written as its key.
        let asKey =
          !field.owns && (depth + 1 > limit || walk.ancestors.contains(target.objectID) || target.isPlaceholder)
        if asKey {
          // As above, an object with no key is not named.
          guard !target.key.identity.isEmpty else { continue }
          nested.append(keyValue(target.key, dateFormat: dateFormat))
        } else {
          nested.append(try export(target, depth: depth + 1, walk: &walk, reachedBy: field.inverse))
          onlyKeys = false
        }
      }
      // A back-reference or a link past the depth bound is written as keys under the plain
      // name: Rails' `_attributes` must hold objects.
      if rails, onlyKeys, !related.isEmpty { rails = false }
      if rails, let last = path.last {
        path[path.count - 1] = keyCase == .snakeCase ? last + "_attributes" : last + "Attributes"
      }
      if rails { nested = nested.map(Self.withRailsDestroyKey) }
      if field.isToMany {
        if rails {
          value = .object(
            JSONObject(nested.enumerated().map { JSONObject.Member(key: String($0.offset), value: $0.element) }))
        } else {
          value = .array(nested)
        }
      } else {
        value = nested.first ?? .null
      }
      Self.set(value, at: path, in: &json)
    }
    return .object(json)
  }

  /// Rails' nested-attributes spelling (Sync's): an attribute `destroy` is sent as `_destroy`.
  private static func withRailsDestroyKey(_ value: JSONValue) -> JSONValue {
    guard case .object(let object) = value, object["destroy"] != nil else { return value }
    return .object(
      JSONObject(object.map { JSONObject.Member(key: $0.key == "destroy" ? "_destroy" : $0.key, value: $0.value) }))
  }

  /// Where an attribute goes in the exported object: where the import reads it from
  /// (`EntityKeyTable`), so that no two attributes share a key and an export imports back.
  static func exportPath(of attribute: Attribute, keys: EntityKeyTable, keyCase: KeyCase, options: ExportOptions)
    -> [String]
  {
    if options.usesModelNames { return [attribute.name] }
    if let key = attribute.jsonKey { return key.split(separator: ".").map(String.init) }
    if let word = keys.wordKey(ofAttribute: attribute.name) { return [word] }
    let name = keys.previousName(of: attribute.name) ?? attribute.name
    return [KeyInflection.jsonKey(for: name, keyCase: keyCase)]
  }

  func jsonValue(_ value: AttributeValue?, of field: AttributeField, entity: String, dateFormat: DateFormat)
    throws -> JSONValue
  {
    guard let value else { return .null }
    let plain = Self.json(value, dateFormat: dateFormat)
    if let name = field.transformer, let reverse = transformers[name]?.reverse {
      do { return try reverse(plain) } catch {
        throw LedgerError(
          .transformerFailed,
          "the reverse of value transformer \"\(name)\" failed on \(entity).\(field.name): \(error)")
      }
    }
    return plain
  }

  static func json(_ value: AttributeValue, dateFormat: DateFormat) -> JSONValue {
    ValueCoercion.json(value, dateFormat: dateFormat)
  }

  /// A related object's key as JSON: its identity value, or an object of them for a
  /// composite key.
  func keyValue(_ key: ObjectKey, dateFormat: DateFormat) -> JSONValue {
    if key.identity.count == 1 { return Self.json(key.identity[0], dateFormat: dateFormat) }
    let parts = key.identity.map { Self.json($0, dateFormat: dateFormat) }
    guard let names = plan(for: key.entity)?.identityKeys, names.count == parts.count else { return .array(parts) }
    return .object(JSONObject(zip(names, parts).map { JSONObject.Member(key: $0.0, value: $0.1) }))
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
}
