/// Which entity, attribute or relationship of an earlier version of a model each one of a
/// later version continues. The one rule that model differences, the store's numbering and
/// migrations all follow (`predecessors(of:among:)`):
///
/// - a `renamedFrom` note that names an element of the earlier version is followed, even
///   when the earlier version also had an element of the new name (a swap of two names, or
///   `label renamedFrom year` with `year` removed), unless the earlier version's element of
///   that name carries the same note (a note left from an earlier rename);
/// - otherwise an element continues the earlier one of the same name;
/// - two elements that would continue one earlier element make the lineage ambiguous, and
///   `Model.followed(by:)` refuses it.
struct ModelLineage: Sendable {
  let old: Model
  /// The later version's entities by name.
  private let newEntities: [String: Entity]
  /// Old entity name by new entity name, for those that continue one.
  private let oldEntityNames: [String: String]
  /// New entity name by old entity name.
  private let newEntityNames: [String: String]

  /// An element of a model version as the rule sees it.
  struct Element {
    var name: String
    var renamedFrom: String?
  }

  init(from old: Model, to newEntities: [Entity]) {
    self.old = old
    self.newEntities = Dictionary(newEntities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    let predecessors = Self.predecessors(
      of: newEntities.map { Element(name: $0.name, renamedFrom: $0.renamedFrom) },
      among: old.entities.map { Element(name: $0.name, renamedFrom: $0.renamedFrom) })
    var names: [String: String] = [:]
    var reverse: [String: String] = [:]
    for (entity, predecessor) in zip(newEntities, predecessors) {
      guard let predecessor, reverse[predecessor] == nil else { continue }
      names[entity.name] = predecessor
      reverse[predecessor] = entity.name
    }
    oldEntityNames = names
    newEntityNames = reverse
  }

  /// The old entity the new entity `name` continues.
  func oldEntityName(of name: String) -> String? { oldEntityNames[name] }

  /// The new entity that continues the old entity `name`.
  func newEntityName(of name: String) -> String? { newEntityNames[name] }

  /// The old relationship (declared by the old entity `entity` continues) that
  /// `relationship`, declared by the new entity `entity`, continues.
  func oldRelationshipName(of relationship: Relationship, declaredBy entity: String) -> String? {
    guard let oldEntity = oldEntityNames[entity], let declared = old.entity(named: oldEntity)?.relationships,
      let new = newEntities[entity]?.relationships
    else { return nil }
    let index = new.firstIndex { $0.name == relationship.name } ?? 0
    return Self.predecessors(of: new.map(Element.init), among: declared.map(Element.init))[index]
  }

  /// The old attribute names each attribute of a new entity continues, among the attributes
  /// (inherited ones included) of the old entity.
  static func oldAttributeNames(of new: [Attribute], among old: [Attribute]) -> [String?] {
    predecessors(of: new.map(Element.init), among: old.map(Element.init))
  }

  /// For each element of `new`, the name of the element of `old` it continues, by the rule
  /// above; nil for a new one. An old name two elements claim is given to neither
  /// (`ambiguities(of:among:)` names them).
  static func predecessors(of new: [Element], among old: [Element]) -> [String?] {
    let claimed = claims(of: new, among: old)
    var counts: [String: Int] = [:]
    for name in claimed.compactMap({ $0 }) { counts[name, default: 0] += 1 }
    return claimed.map { name in name.flatMap { counts[$0] == 1 ? $0 : nil } }
  }

  /// The old names that more than one element of `new` would continue, each with those
  /// elements' names.
  static func ambiguities(of new: [Element], among old: [Element]) -> [(old: String, new: [String])] {
    var claimants: [String: [String]] = [:]
    var order: [String] = []
    for (element, claimed) in zip(new, claims(of: new, among: old)) {
      guard let claimed else { continue }
      if claimants[claimed] == nil { order.append(claimed) }
      claimants[claimed, default: []].append(element.name)
    }
    return order.compactMap { name in
      guard let names = claimants[name], names.count > 1 else { return nil }
      return (name, names)
    }
  }

  /// The old name each element of `new` claims by the rule, before ambiguities are resolved.
  private static func claims(of new: [Element], among old: [Element]) -> [String?] {
    var notes: [String: String?] = [:]
    for element in old where notes[element.name] == nil { notes[element.name] = .some(element.renamedFrom) }
    return new.map { element in
      if let note = element.renamedFrom, note != element.name, notes[note] != nil,
        notes[element.name] != .some(note)
      {
        return note
      }
      return notes[element.name] != nil ? element.name : nil
    }
  }

  /// Every ambiguous `renamedFrom` of the model `new` against `old`: entities, and the
  /// attributes and relationships of each entity that continues one.
  static func problems(from old: Model, to new: Model) -> [ModelError.Problem] {
    func describe(_ place: String, _ ambiguity: (old: String, new: [String])) -> ModelError.Problem {
      ModelError.Problem(
        place: place,
        reason:
          "\(ambiguity.new.joined(separator: " and ")) would each continue \(ambiguity.old) of the store's model (renamedFrom or the same name): say which one with renamedFrom on one of them only"
      )
    }
    var problems = ambiguities(
      of: new.entities.map { Element(name: $0.name, renamedFrom: $0.renamedFrom) },
      among: old.entities.map { Element(name: $0.name, renamedFrom: $0.renamedFrom) }
    ).map { describe("entities", $0) }
    let lineage = ModelLineage(from: old, to: new.entities)
    for entity in new.resolvedInOrder {
      guard let oldName = lineage.oldEntityName(of: entity.name), let previous = old.resolved(oldName) else {
        continue
      }
      problems += ambiguities(of: entity.attributes.map(Element.init), among: previous.attributes.map(Element.init))
        .map { describe("entities.\(entity.name).attributes", $0) }
      if let declared = old.entity(named: oldName)?.relationships {
        problems += ambiguities(
          of: entity.declaration.relationships.map(Element.init), among: declared.map(Element.init)
        ).map { describe("entities.\(entity.name).relationships", $0) }
      }
    }
    return problems
  }
}

extension ModelLineage.Element {
  init(_ attribute: Attribute) { self.init(name: attribute.name, renamedFrom: attribute.renamedFrom) }
  init(_ relationship: Relationship) { self.init(name: relationship.name, renamedFrom: relationship.renamedFrom) }
}
