/// Which entity, attribute or relationship of an earlier version of a model each one of a
/// later version continues: the one of the same name, else the one it says it was
/// `renamedFrom` (when no element of the later version keeps that name). The one rule that
/// model differences, the store's numbering and migrations all follow.
struct ModelLineage: Sendable {
  let old: Model
  /// The later version's entities by name.
  private let newEntities: [String: Entity]
  /// Old entity name by new entity name, for those that continue one.
  private let oldEntityNames: [String: String]

  init(from old: Model, to newEntities: [Entity]) {
    self.old = old
    self.newEntities = Dictionary(newEntities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    var names: [String: String] = [:]
    for entity in newEntities {
      if old.entity(named: entity.name) != nil {
        names[entity.name] = entity.name
      } else if let previous = entity.renamedFrom, old.entity(named: previous) != nil,
        self.newEntities[previous] == nil
      {
        names[entity.name] = previous
      }
    }
    oldEntityNames = names
  }

  /// The old entity the new entity `name` continues.
  func oldEntityName(of name: String) -> String? { oldEntityNames[name] }

  /// The new entity that continues the old entity `name`.
  func newEntityName(of name: String) -> String? {
    if oldEntityNames[name] == name { return name }
    return oldEntityNames.first { $0.value == name }?.key
  }

  /// The old relationship (declared by the old entity `entity` continues) that
  /// `relationship`, declared by the new entity `entity`, continues.
  func oldRelationshipName(of relationship: Relationship, declaredBy entity: String) -> String? {
    guard let oldEntity = oldEntityNames[entity], let declared = old.entity(named: oldEntity)?.relationships,
      let new = newEntities[entity]?.relationships
    else { return nil }
    return Self.previousName(
      relationship.name, renamedFrom: relationship.renamedFrom, in: declared.map(\.name), kept: new.map(\.name))
  }

  /// The old attribute name an attribute of a new entity continues, among the attributes
  /// (inherited ones included) of the old entity: `newAttributes` are the new entity's.
  static func oldAttributeName(of attribute: Attribute, among oldAttributes: [String], newAttributes: [String])
    -> String?
  {
    previousName(attribute.name, renamedFrom: attribute.renamedFrom, in: oldAttributes, kept: newAttributes)
  }

  /// `name` when the old version has it; else `renamedFrom`, when the old version has it and
  /// the new one has nothing under that name.
  static func previousName(_ name: String, renamedFrom: String?, in old: [String], kept new: [String])
    -> String?
  {
    if old.contains(name) { return name }
    if let renamedFrom, old.contains(renamedFrom), !new.contains(renamedFrom) { return renamedFrom }
    return nil
  }
}
