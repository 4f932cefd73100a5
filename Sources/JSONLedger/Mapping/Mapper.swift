import JSONLedgerSupport
import Synchronization

/// Maps JSON to `MappedObject`s through a model: key matching, coercion, transformers,
/// sub-entity selection, nested objects and keys for relationships.
struct Mapper: Sendable {
  let model: Model
  let transformers: ValueTransformers
  /// Each entity's key table, by its number (`ResolvedEntity.id`, from 1), boxed: the mapper
  /// finds one for every object it maps, by number rather than by hashing its name, and
  /// shares it rather than copying its tables.
  private let tables: [KeyTableBox?]
  final class KeyTableBox: Sendable {
    let table: EntityKeyTable
    init(_ table: EntityKeyTable) { self.table = table }
  }
  /// A hash of the whole model, which every `SkimmedPayload.textFingerprint` takes: a text
  /// applied under one model is not known to map alike under another.
  let modelDigest: UInt64
  /// What this mapper's stagings of text learned of the keys they met, for the next.
  let learnedKeys = LearnedKeys()

  init(model: Model, transformers: ValueTransformers) {
    self.model = model
    self.transformers = transformers
    modelDigest = FNV1a.hash(JSONWriter(options: [.sortedKeys]).string(from: model.jsonValue).utf8.span)
    var tables: [KeyTableBox?] = []
    for entity in model.entities {
      guard let resolved = model.resolved(entity.name) else { continue }
      let index = Int(resolved.id) - 1
      guard index >= 0 else { continue }
      if index >= tables.count { tables += Array(repeating: nil, count: index + 1 - tables.count) }
      tables[index] = KeyTableBox(EntityKeyTable(entity: resolved, model: model))
    }
    self.tables = tables
  }

  /// A ledger's mapper, made for the first batch it makes and shared by every later one
  /// (`Ledger.makeBatch`): a ledger's model and transformers are its own for as long as it
  /// lives.
  final class Cache: Sendable {
    private let model: Model
    private let transformers: ValueTransformers
    private let made = Mutex<Mapper?>(nil)

    init(model: Model, transformers: ValueTransformers) {
      self.model = model
      self.transformers = transformers
    }

    var mapper: Mapper {
      made.withLock { made in
        if let mapper = made { return mapper }
        let mapper = Mapper(model: model, transformers: transformers)
        made = mapper
        return mapper
      }
    }
  }

  /// What mapping one payload produced besides the objects.
  struct Report {
    var problems = ProblemCollector()
    /// `Entity.key` for each JSON key that matched nothing.
    var ignoredKeys: Set<String> = []
    /// How many nested objects enclose the one being mapped.
    var nesting = 0
    /// The relationship the object being mapped is nested through (nil at the top of a
    /// collection): its inverse, when the object's identity names it, is filled from the
    /// object it is nested in.
    var nestedThrough: ResolvedRelationship?
    /// The JSON text the values being mapped were parsed from, when staged as text: an
    /// object read from it whose entity maps by its keys alone takes the fingerprint of its
    /// text (`SkimmedPayload.textFingerprint`), so that the same text is recognised unparsed
    /// next time.
    var text: JSONSkim?
    /// What mapping remembers to go faster.
    var remembered = Remembered()
  }
  static let mappedTextLimit = 4_096

  /// What a `Report` remembers to map faster. Both hold only what mapping any text the same
  /// way gives (a text's fingerprint, a key's bytes), so a file staged in parts carries them
  /// from one part to the next (`JSONFileChunks`).
  struct Remembered {
    /// Nested objects mapped from the report's text, by the fingerprint of their text (at
    /// most `mappedTextLimit`): see `mapNested`.
    var mappedTexts: [UInt64: MappedObject] = [:]
    /// What the member keys met in the text mean, by their bytes (`mapPlainObject`).
    var plainKeys = PlainKeys()
  }

  /// Maps a collection: an array of objects (or of bare keys), or one object. The objects of
  /// an entity a relationship owns are refused: they are staged inside their owner.
  func mapCollection(
    _ json: JSONValue, entity: ResolvedEntity, path: JSONPath, firstIndex: Int = 0, report: inout Report
  ) -> [MappedObject] {
    switch json {
    case .array(let elements):
      var objects: [MappedObject] = []
      objects.reserveCapacity(elements.count)
      for (index, element) in elements.enumerated() {
        if report.problems.isFull { break }
        let elementPath = path.appending(index: firstIndex + index)
        if let mapped = mapElement(element, entity: entity, path: elementPath, report: &report) {
          objects.append(mapped)
        }
      }
      return objects
    case .object(let object):
      return mapObject(object, entity: entity, path: path, report: &report).map { [$0] } ?? []
    default:
      report.problems.add(
        entity.name, path, json, "expected an array of objects or an object, found \(json.kindDescription)")
      return []
    }
  }

  /// Maps one element of a collection: an object, or a bare key (a stub); a null is nothing.
  func mapElement(_ element: JSONValue, entity: ResolvedEntity, path: JSONPath, report: inout Report)
    -> MappedObject?
  {
    switch element {
    case .object(let object):
      return mapObject(object, entity: entity, path: path, report: &report)
    case .null:
      return nil
    case .string, .number:
      guard let key = identity(fromKey: element, of: entity, path: path, report: &report) else { return nil }
      var mapped = MappedObject(entity: entity, path: path, attributeRoom: entity.identity.count)
      for (name, value) in zip(entity.identity, key) {
        mapped.append(attribute: name, nameHash: FNV1a.hash(name.utf8.span), value)
      }
      mapped.identity = key
      mapped.isKeyOnly = true
      return mapped
    default:
      report.problems.add(
        entity.name, path, element, "expected an object or a key, found \(element.kindDescription)")
      return nil
    }
  }

  /// The key table of `entity` (which JSON key feeds which of its properties), in its box:
  /// read through the box, it is not copied (a copy retains each of its tables).
  func box(of entity: ResolvedEntity) -> KeyTableBox? {
    let index = Int(entity.id) - 1
    return tables.indices.contains(index) ? tables[index] : nil
  }

  /// `textFingerprint`: the fingerprint of the object's text, when the caller has it.
  func mapObject(
    _ input: JSONObject, entity requested: ResolvedEntity, path: JSONPath, textFingerprint: UInt64? = nil,
    report: inout Report
  ) -> MappedObject? {
    var object = input
    if let name = requested.declaration.dictionaryTransformer, let transform = transformers.dictionaryTransformers[name]
    {
      do { object = try transform(object) } catch {
        report.problems.add(
          requested.name, path, .object(input), "the dictionary transformer \"\(name)\" failed: \(error)")
        return nil
      }
    }
    guard let entity = subentity(for: object, of: requested, path: path, report: &report) else { return nil }
    guard let box = box(of: entity) else { return nil }
    // Room for every key the object may fill: a block grown from too little room is
    // allocated again and its lists moved.
    let keys = object.count + box.table.keyPaths.count
    var mapped = MappedObject(
      entity: entity, path: path, attributeRoom: keys, relationshipRoom: min(keys, entity.relationships.count))
    if let text = report.text, let range = input.sourceRange, box.table.mapsByKeysAlone {
      var fingerprint = mapped.fingerprint
      fingerprint.adopt(
        textFingerprint: textFingerprint
          ?? SkimmedPayload.textFingerprint(of: text, range, entity: entity, modelDigest: modelDigest))
      mapped.fingerprint = fingerprint
    }
    // Kept when the entity has sub-entities: an existing object of a sub-entity is re-mapped
    // with its own entity's keys.
    if entity.family.count > 1 { mapped.source = object }
    for member in object {
      guard let target = box.table.target(forKey: member.key) else {
        if box.table.keyPathRoots.contains(member.key) {
          Self.reportKeysNoPathReads(
            in: member.value, at: member.key, table: box.table, entity: entity, report: &report)
        } else if member.key != entity.subentityKey {
          report.ignoredKeys.insert("\(entity.name).\(member.key)")
        }
        continue
      }
      assign(member.value, to: target, in: &mapped, entity: entity, at: path, key: member.key, report: &report)
      if let also = box.table.shadowedTarget(forKey: member.key) {
        assign(member.value, to: also, in: &mapped, entity: entity, at: path, key: member.key, report: &report)
      }
    }
    for (target, segments) in box.table.keyPaths {
      var value: JSONValue = .object(object)
      var reached = true
      for (depth, segment) in segments.enumerated() {
        guard case .object(let level) = value else {
          if value != .null {
            let place = segments[0..<depth].reduce(path) { $0.appending(key: $1) }
            report.problems.add(
              entity.name, place, value, "expected an object on the key path \(segments.joined(separator: "."))")
          }
          reached = value == .null
          break
        }
        guard let next = level[segment] else {
          reached = false
          break
        }
        value = next
      }
      if reached, let last = segments.last {
        let objectPath = segments.dropLast().reduce(path) { $0.appending(key: $1) }
        assign(value, to: target, in: &mapped, entity: entity, at: objectPath, key: last, report: &report)
      }
    }
    guard !entity.isInsertOnly else { return mapped }
    if entity.hasRelationshipInIdentity {
      return identifiedThroughRelationships(mapped, entity: entity, path: path, report: &report)
    }
    let identity = [AttributeValue].identity(count: entity.identity.count) { position in
      let name = entity.identity[position]
      if case .some(.some(let value)) = mapped.lastValue(of: name) { return value }
      if !mapped.refusedIdentity {
        report.problems.add(entity.name, path, nil, "the identity \"\(name)\" is missing")
      }
      return nil
    }
    guard let identity else { return nil }
    mapped.identity = identity
    return mapped
  }

  /// `mapped` with its identity, for an entity whose identity names relationships: such a
  /// part is the key of the object the relationship points to (given by key or nested), or,
  /// for an object nested through the relationship's inverse, the key of the object it is
  /// nested in, which the resolver fills (`MappedObject.ownerPart`).
  private func identifiedThroughRelationships(
    _ input: MappedObject, entity: ResolvedEntity, path: JSONPath, report: inout Report
  ) -> MappedObject? {
    var mapped = input
    var ownerPart: Int?
    var identity: [AttributeValue] = []
    identity.reserveCapacity(entity.identityParts.count)
    for (position, part) in entity.identityParts.enumerated() {
      switch part {
      case .attribute(let attribute):
        if case .some(.some(let value)) = mapped.lastValue(of: attribute.name) {
          identity.append(value)
          continue
        }
        if !mapped.refusedIdentity {
          report.problems.add(entity.name, path, nil, "the identity \"\(attribute.name)\" is missing")
        }
        return nil
      case .relationship(let relationship):
        if let value = Self.keyPart(of: relationship, in: mapped) {
          identity.append(value)
          continue
        }
        if let through = report.nestedThrough, through.declaration.inverse == relationship.name {
          ownerPart = position
          identity.append(.bool(false))
          continue
        }
        report.problems.add(
          entity.name, path, nil,
          "the identity \"\(relationship.name)\" is missing: give the key of the \(relationship.declaration.destination) "
            + "it points to, or nest the object in it")
        return nil
      }
    }
    mapped.identity = identity
    mapped.ownerPart = ownerPart
    return mapped
  }

  /// The key part a relationship of the identity gives: the key its payload names, or the
  /// identity of the object nested there (nil when it names neither).
  static func keyPart(of relationship: ResolvedRelationship, in mapped: MappedObject) -> AttributeValue? {
    var part: AttributeValue?
    for named in mapped.relationships where named.relationship === relationship {
      part = nil
      switch named.value {
      case .toOne(.key(_, let value, _)): part = value
      case .toOne(.object(let nested)):
        if nested.object.ownerPart == nil, let identity = nested.object.identity {
          part = keyPart(ofIdentity: identity)
        }
      case .clear, .toMany: part = nil
      }
    }
    return part
  }

  /// An object's key as one value of another's identity: its one value, or the JSON array
  /// of a composite key's values.
  static func keyPart(ofIdentity identity: [AttributeValue]) -> AttributeValue {
    if identity.count == 1 { return identity[0] }
    return .json(.array(identity.map { ValueCoercion.json($0, dateFormat: .iso8601) }))
  }

  /// Reports as ignored the keys of the nested object at `place` (a key path's first segments)
  /// that no key path reads and none leads through.
  private static func reportKeysNoPathReads(
    in value: JSONValue, at place: String, table: EntityKeyTable, entity: ResolvedEntity, report: inout Report
  ) {
    guard case .object(let nested) = value else { return }
    for member in nested {
      let inner = place + "." + member.key
      if table.keyPathPlaces.contains(inner) {
        reportKeysNoPathReads(in: member.value, at: inner, table: table, entity: entity, report: &report)
      } else {
        report.ignoredKeys.insert("\(entity.name).\(inner)")
      }
    }
  }

  private func subentity(for object: JSONObject, of entity: ResolvedEntity, path: JSONPath, report: inout Report)
    -> ResolvedEntity?
  {
    if let name = entity.declaration.entityMapper, let mapper = transformers.entityMappers[name] {
      guard let chosen = mapper(object) else { return entity }
      guard entity.family.contains(chosen), let resolved = model.resolved(chosen) else {
        report.problems.add(
          entity.name, path, nil,
          "the entity mapper \"\(name)\" chose \"\(chosen)\", which is not \(entity.name) or a sub-entity of it")
        return nil
      }
      return resolved
    }
    guard let key = entity.subentityKey, let value = object[key], value != .null else { return entity }
    guard case .string(let name) = value else {
      report.problems.add(
        entity.name, path.appending(key: key), value, "expected the name of a sub-entity of \(entity.name)")
      return nil
    }
    let folded = KeyInflection.normalized(name)
    if let match = entity.family.first(where: { $0 == name })
      ?? entity.family.first(where: { KeyInflection.normalized($0) == folded }),
      let resolved = model.resolved(match)
    {
      return resolved
    }
    report.problems.add(
      entity.name, path.appending(key: key), value,
      "not a sub-entity of \(entity.name) (known: \(entity.family.joined(separator: ", ")))")
    return nil
  }

  /// Maps `value`, found at member `key` of the object at `objectPath`, to `target`.
  private func assign(
    _ value: JSONValue, to target: EntityKeyTable.Target, in mapped: inout MappedObject, entity: ResolvedEntity,
    at objectPath: JSONPath, key: String, report: inout Report
  ) {
    // Made only when a problem names it or a reference keeps it: extending the path of a
    // nested object allocates, and most members are attributes mapped without a problem.
    var memberPath: JSONPath { objectPath.appending(key: key) }
    switch target {
    case .attribute(let attribute, let nameHash):
      func refuse(_ reason: String) {
        report.problems.add(entity.name, memberPath, value, reason)
        if entity.identity.contains(attribute.name) { mapped.refusedIdentity = true }
      }
      if value == .null {
        guard attribute.isOptional else {
          refuse("\(attribute.name) is not optional: it cannot be null")
          return
        }
        mapped.append(attribute: attribute.name, nameHash: nameHash, nil)
        return
      }
      let coerced: Result<AttributeValue, CoercionFailure>
      if let name = attribute.transformer, let transformer = transformers[name] {
        let input: JSONValue
        do { input = try transformer.forward(value) } catch {
          refuse("the value transformer \"\(name)\" failed: \(error)")
          return
        }
        if input == .null {
          mapped.append(attribute: attribute.name, nameHash: nameHash, nil)
          return
        }
        coerced = ValueCoercion.coerce(input, to: attribute.type)
      } else {
        // The value as it is: no copy of it is made on the way.
        coerced = ValueCoercion.coerce(value, to: attribute.type)
      }
      switch consume coerced {
      case .success(let typed): mapped.append(attribute: attribute.name, nameHash: nameHash, typed)
      case .failure(let failure):
        refuse(failure.reason + " (\(attribute.name): \(attribute.type.rawValue))")
      }
    case .relationship(let relationship, let byKeys):
      guard let destination = model.destination(of: relationship) else { return }
      let path = memberPath
      if value == .null {
        mapped.append(relationship: relationship, .clear)
        return
      }
      if relationship.isToMany {
        guard case .array(let elements) = value else {
          report.problems.add(
            entity.name, path, value,
            "expected an array for the to-many relationship \(relationship.name), found \(value.kindDescription)")
          return
        }
        var references: [ObjectReference] = []
        var fingerprint = mapped.fingerprint
        for (index, element) in elements.enumerated() where element != .null {
          if let reference = reference(
            element, to: destination, through: relationship, byKeys: byKeys, path: path.appending(index: index),
            fingerprint: &fingerprint, report: &report)
          {
            references.append(reference)
          }
        }
        mapped.fingerprint = fingerprint
        mapped.append(relationship: relationship, .toMany(references))
      } else {
        if case .array = value {
          report.problems.add(
            entity.name, path, value,
            "expected one object or key for the to-one relationship \(relationship.name), found an array")
          return
        }
        var fingerprint = mapped.fingerprint
        let reference = reference(
          value, to: destination, through: relationship, byKeys: byKeys, path: path, fingerprint: &fingerprint,
          report: &report)
        mapped.fingerprint = fingerprint
        if let reference { mapped.append(relationship: relationship, .toOne(reference)) }
      }
    }
  }

  /// The reference `value` makes, added to the referring object's `fingerprint`.
  /// `relationship`: the relationship it is given for.
  private func reference(
    _ value: JSONValue, to destination: ResolvedEntity, through relationship: ResolvedRelationship, byKeys: Bool,
    path: JSONPath, fingerprint: inout PayloadFingerprint, report: inout Report
  ) -> ObjectReference? {
    switch value {
    case .object(let object):
      if byKeys {
        report.problems.add(destination.name, path, value, "expected a key of \(destination.name), found an object")
        return nil
      }
      guard report.nesting < NestingLimit.objects else {
        report.problems.add(
          destination.name, path, nil, "objects are nested more than \(NestingLimit.objects) deep here")
        return nil
      }
      report.nesting += 1
      let outer = report.nestedThrough
      report.nestedThrough = relationship
      let entity = keyedSubentity(of: destination, carriedBy: object) ?? destination
      let mapped = mapNested(object, entity: entity, path: path, report: &report)
      report.nestedThrough = outer
      report.nesting -= 1
      guard let nested = mapped else { return nil }
      // A row its owner identifies, or one whose key waits for the owner's, is resolved only
      // with its owner: a payload holding one is merged each time (it changes nothing when
      // nothing changed), never skipped on its own fingerprint.
      if let identity = nested.identity, nested.ownerPart == nil, !relationship.declaration.owns {
        fingerprint.add(key: nested.entity, identity)
      } else {
        fingerprint.addUnkeyedObject()
      }
      return .object(NestedObject(nested))
    case .string, .number, .bool:
      if relationship.declaration.owns {
        report.problems.add(
          destination.name, path, value,
          "\(relationship.owner).\(relationship.name) owns its \(destination.name) objects: give each as an object, "
            + "not a key")
        return nil
      }
      let named = keyedSubentity(of: destination) ?? destination
      guard let key = keyValue(fromKey: value, of: named, path: path, report: &report) else { return nil }
      fingerprint.add(key: named, CollectionOfOne(key))
      return .key(entity: named, value: key, path: path)
    default:
      report.problems.add(
        destination.name, path, value,
        "expected a key or an object of \(destination.name), found \(value.kindDescription)")
      return nil
    }
  }

  /// The entity a reference to `destination` names when `destination` has no identity and no
  /// owner but exactly one entity inheriting from it has a key (Sync's bug 239: a passenger's
  /// `car` is a `Racecar` known by its id; `Car` itself has no id): a key names an object of
  /// that entity. Nil otherwise.
  func keyedSubentity(of destination: ResolvedEntity) -> ResolvedEntity? {
    guard destination.isInsertOnly, !destination.isOwned, destination.family.count > 1 else { return nil }
    var found: ResolvedEntity?
    for name in destination.family where name != destination.name {
      guard let member = model.resolved(name), member.keyAttribute != nil else { continue }
      guard found == nil else { return nil }
      found = member
    }
    return found
  }

  /// As `keyedSubentity(of:)`, for an object given nested: that entity when the object carries
  /// its key (so an object without one is still a new object of `destination`).
  private func keyedSubentity(of destination: ResolvedEntity, carriedBy object: JSONObject) -> ResolvedEntity? {
    guard let entity = keyedSubentity(of: destination), let attribute = entity.keyAttribute,
      let table = box(of: entity)?.table
    else { return nil }
    for member in object where member.value != .null {
      if case .attribute(let target, _) = table.target(forKey: member.key), target.name == attribute.name {
        return entity
      }
    }
    return nil
  }

  /// A nested object. One read from JSON text whose entity maps by its keys alone is mapped
  /// once per distinct text in a payload (an author repeated under each of its posts): the
  /// same text maps to the same object, and only its place differs. Kept only when it has no
  /// relationships (whose references would keep the first place) and mapped without a
  /// problem.
  private func mapNested(_ object: JSONObject, entity: ResolvedEntity, path: JSONPath, report: inout Report)
    -> MappedObject?
  {
    guard let text = report.text, let range = object.sourceRange, box(of: entity)?.table.mapsByKeysAlone == true
    else {
      return mapObject(object, entity: entity, path: path, report: &report)
    }
    let fingerprint = SkimmedPayload.textFingerprint(of: text, range, entity: entity, modelDigest: modelDigest)
    if var known = report.remembered.mappedTexts[fingerprint] {
      known.path = path
      return known
    }
    let problems = (report.problems.problems.count, report.problems.isTruncated)
    let mapped = mapObject(object, entity: entity, path: path, textFingerprint: fingerprint, report: &report)
    if let mapped, mapped.relationships.isEmpty, report.remembered.mappedTexts.count < Self.mappedTextLimit,
      problems == (report.problems.problems.count, report.problems.isTruncated)
    {
      report.remembered.mappedTexts[fingerprint] = mapped
    }
    return mapped
  }

  /// The identity a key given by a caller names (a delete, a parent scope), by `CallerKey`'s
  /// rule.
  func identity(ofKey key: JSONValue, of entity: ResolvedEntity, path: JSONPath = "", report: inout Report)
    -> [AttributeValue]?
  {
    switch CallerKey.identity(of: entity, key: key, keyCase: model.keyCase, model: model) {
    case .success(let values): return values
    case .failure(let failure):
      report.problems.add(entity.name, path, key, failure.reason)
      return nil
    }
  }

  /// The identity of `entity` given as a bare key (`"Japan"`, `42`), coerced to its type.
  func identity(fromKey value: JSONValue, of entity: ResolvedEntity, path: JSONPath, report: inout Report)
    -> [AttributeValue]?
  {
    keyValue(fromKey: value, of: entity, path: path, report: &report).map { [$0] }
  }

  /// The value of `entity`'s key attribute that a key gives (`identity(fromKey:)`'s one value).
  func keyValue(fromKey value: JSONValue, of entity: ResolvedEntity, path: JSONPath, report: inout Report)
    -> AttributeValue?
  {
    guard let attribute = entity.keyAttribute else {
      let reason =
        entity.identity.isEmpty
        ? "\(entity.name) has no identity, so it cannot be referred to by key"
        : "\(entity.name) has a composite identity (\(entity.identity.joined(separator: ", "))): refer to it with an object"
      report.problems.add(entity.name, path, value, reason)
      return nil
    }
    switch ValueCoercion.coerce(value, to: attribute.type) {
    case .success(let typed): return typed
    case .failure(let failure):
      report.problems.add(entity.name, path, value, "not a valid key: \(failure.reason)")
      return nil
    }
  }
}
