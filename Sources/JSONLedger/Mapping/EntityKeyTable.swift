import JSONLedgerSupport

/// For one entity, which JSON key feeds which attribute or relationship.
///
/// A key finds its property by, in order: the custom key; the exact name; a case-insensitive
/// match with `_` removed (`list_image_url` → `listImageURL`); a reserved word (`description`
/// → `bandDescription`); `id` → `remoteID`. Relationship keys also match `<name>_id` (to-one)
/// and `<name>_ids` / `<singular>_ids` (to-many), which carry keys.
struct EntityKeyTable: Sendable {
  enum Target: Sendable {
    // Boxed: a lookup hands out the target, and a bare `Attribute` is copied field by field.
    /// `nameHash`: the FNV-1a hash of the attribute's name, which payload fingerprints take
    /// instead of hashing the name for every object.
    indirect case attribute(Attribute, nameHash: UInt64)
    /// `byKeys` is true for `<name>_id(s)` keys, which must hold keys, not nested objects.
    case relationship(ResolvedRelationship, byKeys: Bool)
  }

  private var exact = NameTable<Target>()
  private var normalized = NameTable<Target>()
  /// Attributes and relationships read through a dotted key path, with its segments.
  private(set) var keyPaths: [(target: Target, segments: [String])] = []
  /// First segments of the key paths: such top-level keys are not "unmatched".
  private(set) var keyPathRoots: Set<String> = []
  /// Every key path, and every path of nested objects that leads to one, its segments
  /// joined by dots (`sprites`, `sprites.front_default`): a key inside such a nested object
  /// that is neither is reported as ignored (`Pokemon.sprites.back_default`).
  private(set) var keyPathPlaces: Set<String> = []
  /// The key the table reads an attribute from when that is neither its custom key nor its
  /// name: a reserved word (`type` for `albumType`) or `id` (for `remoteID`), by attribute
  /// name. An export writes the attribute there, so that what it writes imports back.
  private var wordKeys: [String: String] = [:]
  /// The name each renamed property (`renamedFrom`, without a custom key) was renamed from:
  /// its JSON key stays the old name's, since the backend did not rename anything.
  private var previousNames: [String: String] = [:]
  /// By custom key, the property whose name that key also is (`b` read from `id` beside an
  /// attribute `id`): the key feeds both, as in Groot and JSONCache each attribute reads its
  /// own key, and the custom key's property does not take the other's value from it.
  private var shadowed: [String: Target] = [:]

  private static func attribute(_ attribute: Attribute) -> Target {
    .attribute(attribute, nameHash: FNV1a.hash(attribute.name.utf8.span))
  }

  /// Whether the entity's objects map by their keys alone: no registered closure decides
  /// anything (transformers, an entity mapper), nothing is read from elsewhere in the object
  /// (key paths, a sub-entity key), they have an identity of their own attributes, and no
  /// relationship owns them (an owned row is known by its owner). The same JSON text then
  /// maps to the same object under the same model, which `SkimmedPayload` relies on.
  private(set) var mapsByKeysAlone = false

  init(entity: ResolvedEntity, model: Model) {
    defer {
      let declaration = entity.declaration
      mapsByKeysAlone =
        keyPaths.isEmpty && !entity.isInsertOnly && !entity.hasRelationshipInIdentity && !entity.isOwned
        && entity.family.count == 1 && entity.subentityKey == nil
        && declaration.dictionaryTransformer == nil && declaration.entityMapper == nil
        && entity.attributes.allSatisfy { $0.transformer == nil } && shadowed.isEmpty
    }
    let customOnly = entity.declaration.mapsOnlyCustomKeys
    func add(_ key: String, _ target: Target, normalize: Bool) {
      if exact[key] == nil { exact.updateValue(target, forName: key) }
      if normalize {
        let folded = KeyInflection.normalized(key)
        if normalized[folded] == nil { normalized.updateValue(target, forName: folded) }
      }
    }
    func addCustom(_ key: String, _ target: Target) {
      let segments = key.split(separator: ".").map(String.init)
      if segments.count > 1 {
        keyPaths.append((target, segments))
        keyPathRoots.insert(segments[0])
        for end in 1...segments.count { keyPathPlaces.insert(segments[0..<end].joined(separator: ".")) }
      } else {
        exact.updateValue(target, forName: key)
      }
    }
    for attribute in entity.attributes {
      if let key = attribute.jsonKey { addCustom(key, Self.attribute(attribute)) }
    }
    for relationship in entity.relationships {
      if let key = relationship.declaration.jsonKey { addCustom(key, .relationship(relationship, byKeys: false)) }
    }
    guard !customOnly else { return }
    // A custom key does not hide the name: it is found first, then the name (Sync). A name that
    // is also the first key of a key path (`real_name` of `real_name.foo.bar`) is the path's.
    let pathRoots = Set(keyPathRoots.map(KeyInflection.normalized))
    for attribute in entity.attributes where !pathRoots.contains(KeyInflection.normalized(attribute.name)) {
      add(attribute.name, Self.attribute(attribute), normalize: true)
    }
    for relationship in entity.relationships where !pathRoots.contains(KeyInflection.normalized(relationship.name)) {
      add(relationship.name, .relationship(relationship, byKeys: false), normalize: true)
    }
    // A custom key that is, as the names are matched, the name of a property without one.
    let customKeys =
      entity.attributes.compactMap { $0.jsonKey }
      + entity.relationships.compactMap { $0.declaration.jsonKey }
    for key in customKeys where !key.contains(".") {
      guard let target = exact[key], let named = normalized[KeyInflection.normalized(key)],
        named.propertyName != target.propertyName, !named.hasCustomKey
      else { continue }
      shadowed[key] = named
    }
    // A renamed property keeps the key of the name it was renamed from (the backend's), as
    // well as its own name, unless it names a key of its own or the old name is another's.
    // Renamed back and forth (`label` → `publisher` → `label`), the key is the first name's.
    for attribute in entity.attributes where attribute.jsonKey == nil {
      guard let old = model.keptName(of: attribute.name, renamedFrom: attribute.renamedFrom, in: entity.name),
        old != attribute.name, target(forKey: old) == nil
      else { continue }
      add(old, Self.attribute(attribute), normalize: true)
      previousNames[attribute.name] = old
    }
    for relationship in entity.relationships where relationship.declaration.jsonKey == nil {
      guard
        let old = model.keptName(
          of: relationship.name, renamedFrom: relationship.declaration.renamedFrom, in: entity.name),
        old != relationship.name, target(forKey: old) == nil
      else { continue }
      add(old, .relationship(relationship, byKeys: false), normalize: true)
      previousNames[relationship.name] = old
    }
    for relationship in entity.relationships {
      let name = relationship.name
      if relationship.isToMany {
        add(name + "_ids", .relationship(relationship, byKeys: true), normalize: true)
        add(KeyInflection.singular(name) + "_ids", .relationship(relationship, byKeys: true), normalize: true)
      } else {
        add(name + "_id", .relationship(relationship, byKeys: true), normalize: true)
      }
    }
    // Reserved words name the entity-qualified attribute: `description` → `bandDescription`.
    var qualifiers: [String] = []
    var current: String? = entity.name
    while let name = current, let resolved = model.resolved(name) {
      qualifiers.append(name)
      current = resolved.declaration.parent
    }
    for word in KeyInflection.reservedWords where exact[word] == nil {
      for qualifier in qualifiers {
        let wanted = KeyInflection.normalized(qualifier + word)
        if let attribute = entity.attributes.first(where: {
          $0.jsonKey == nil && KeyInflection.normalized($0.name) == wanted
        }) {
          exact.updateValue(Self.attribute(attribute), forName: word)
          wordKeys[attribute.name] = word
          break
        }
      }
    }
    if exact["id"] == nil, let remote = entity.attributeIndex["remoteID"], remote.jsonKey == nil {
      exact.updateValue(Self.attribute(remote), forName: "id")
      wordKeys[remote.name] = "id"
    }
  }

  /// The property a top-level JSON key feeds beside `target(forKey:)`'s: the one whose name
  /// the key is, when it is another property's custom key.
  func shadowedTarget(forKey key: String) -> Target? { shadowed.isEmpty ? nil : shadowed[key] }

  /// The reserved word or `id` the table reads the attribute `name` from, if that is how
  /// it is found (`wordKeys`); nil when its own name (or custom key) is.
  func wordKey(ofAttribute name: String) -> String? { wordKeys[name] }

  /// The name the property `name` was renamed from, whose JSON key it keeps; nil when it was
  /// not renamed (or names a key of its own).
  func previousName(of name: String) -> String? { previousNames[name] }

  /// Whether no key of `object` feeds a property (or a key path, or the sub-entity key).
  func readsNone(of object: JSONObject) -> Bool {
    !object.keys.contains { target(forKey: $0) != nil || keyPathRoots.contains($0) }
  }

  /// The property a top-level JSON key feeds, if any.
  func target(forKey key: String) -> Target? {
    exact[key] ?? normalized[KeyInflection.normalized(key)]
  }
}

extension EntityKeyTable.Target {
  /// The name of the attribute or relationship.
  var propertyName: String {
    switch self {
    case .attribute(let attribute, _): attribute.name
    case .relationship(let relationship, _): relationship.name
    }
  }

  /// Whether the property names a JSON key of its own.
  var hasCustomKey: Bool {
    switch self {
    case .attribute(let attribute, _): attribute.jsonKey != nil
    case .relationship(let relationship, let byKeys): !byKeys && relationship.declaration.jsonKey != nil
    }
  }
}
