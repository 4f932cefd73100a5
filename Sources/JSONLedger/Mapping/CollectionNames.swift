/// How a document's top-level keys name entities' collections (`bands`, `band_members`): one
/// rule for staging a document, for the keys an error lists, and for export.
enum CollectionNames {
  /// The key of an entity's collection: its `collectionKey`, else its plural name in the key
  /// case, starting lowercase (`BandMember` → `band_members` or `bandMembers`).
  static func key(of entity: Entity, keyCase: KeyCase) -> String {
    if let key = entity.collectionKey { return key }
    let plural = KeyInflection.plural(entity.name)
    switch keyCase {
    case .snakeCase: return KeyInflection.snakeCased(plural)
    case .camelCase: return plural.prefix(1).lowercased() + plural.dropFirst()
    }
  }

  /// The entity a top-level key names: an entity's `collectionKey`, else the entity name,
  /// singular or plural, compared without case and `_`.
  static func entity(forKey key: String, in model: Model) -> ResolvedEntity? {
    if let entity = model.entities.first(where: { $0.collectionKey == key }) { return model.resolved(entity.name) }
    let folded = KeyInflection.normalized(key)
    for entity in model.entities {
      let name = KeyInflection.normalized(entity.name)
      let plural = KeyInflection.normalized(KeyInflection.plural(entity.name))
      if folded == name || folded == plural { return model.resolved(entity.name) }
    }
    return nil
  }

  /// Every entity's collection key, in model order (for errors that list them).
  static func knownKeys(in model: Model) -> [String] {
    model.entities.map { key(of: $0, keyCase: model.keyCase) }
  }
}
