/// One way a model differs from another, in the user's terms: where (`Band`, `Band.formed`,
/// `model`) and what changed there.
public struct ModelDifference: Sendable, Equatable, CustomStringConvertible {
  /// The entity, `Entity.property`, or `model` for the model's own settings.
  public var place: String
  /// What changed: `added`, `removed`, or each setting that differs as `name: old → new`.
  public var change: String

  public var description: String { "\(place): \(change)" }
}

extension Model {
  /// How `other` differs from this model, entity by entity and property by property, in this
  /// model's order (then what `other` adds). Empty when the models are equal.
  public func differences(to other: Model) -> [ModelDifference] {
    var result: [ModelDifference] = []
    let settings = Self.changedSettings(
      ["keyCase": "\(keyCase)", "dateFormat": "\(dateFormat)"],
      ["keyCase": "\(other.keyCase)", "dateFormat": "\(other.dateFormat)"])
    if !settings.isEmpty { result.append(ModelDifference(place: "model", change: settings)) }
    let lineage = ModelLineage(from: self, to: other.entities)
    for entity in entities {
      guard let newName = lineage.newEntityName(of: entity.name), let new = other.entity(named: newName) else {
        result.append(ModelDifference(place: entity.name, change: "removed"))
        continue
      }
      if newName != entity.name { result.append(ModelDifference(place: entity.name, change: "renamed to \(newName)")) }
      // `settings(of:)` leaves out the name, the nested lists and `renamedFrom`.
      let changed = Self.changedSettings(entity, new) { entity in
        (entity.name, entity.renamedFrom) = ("", nil)
        (entity.attributes, entity.relationships) = ([], [])
      }
      if !changed.isEmpty { result.append(ModelDifference(place: newName, change: changed)) }
      result += Self.differences(
        newName, entity.attributes, new.attributes, name: \.name, renamedFrom: \.renamedFrom, jsonKey: \.jsonKey,
        keyCase: other.keyCase)
      result += Self.differences(
        newName, entity.relationships, new.relationships, name: \.name, renamedFrom: \.renamedFrom,
        jsonKey: \.jsonKey, keyCase: other.keyCase)
    }
    for entity in other.entities where lineage.oldEntityName(of: entity.name) == nil {
      result.append(ModelDifference(place: entity.name, change: "added"))
    }
    let kept = entities.compactMap { lineage.newEntityName(of: $0.name) }
    let keptThere = other.entities.map(\.name).filter { lineage.oldEntityName(of: $0) != nil }
    if kept != keptThere {
      result.append(
        ModelDifference(
          place: "model",
          change: "entity order: \(kept.joined(separator: ", ")) → \(keptThere.joined(separator: ", "))"))
    }
    if result.isEmpty, self != other {
      result.append(
        ModelDifference(place: "model", change: "the order of the properties of an entity, or renamedFrom notes"))
    }
    return result
  }

  /// The properties an entity declares that were removed, renamed, changed or added
  /// (`entity` is its name in the new model).
  private static func differences<Property: Equatable>(
    _ entity: String, _ old: [Property], _ new: [Property], name: WritableKeyPath<Property, String>,
    renamedFrom: WritableKeyPath<Property, String?>, jsonKey: KeyPath<Property, String?>, keyCase: KeyCase
  ) -> [ModelDifference] {
    // Each new property's predecessor, by `ModelLineage`'s rule.
    func elements(_ properties: [Property]) -> [ModelLineage.Element] {
      properties.map { ModelLineage.Element(name: $0[keyPath: name], renamedFrom: $0[keyPath: renamedFrom]) }
    }
    let predecessors = ModelLineage.predecessors(of: elements(new), among: elements(old))
    var predecessorIndex: [String: Int] = [:]
    for (index, predecessor) in predecessors.enumerated() {
      if let predecessor { predecessorIndex[predecessor] = index }
    }
    var result: [ModelDifference] = []
    for property in old {
      let oldName = property[keyPath: name]
      guard let index = predecessorIndex[oldName] else {
        result.append(ModelDifference(place: "\(entity).\(oldName)", change: "removed"))
        continue
      }
      let match = new[index]
      let place = "\(entity).\(match[keyPath: name])"
      if match[keyPath: name] != oldName {
        // The payload keeps its key: a renamed property reads and writes the old name's
        // (`EntityKeyTable`), unless it names a key of its own.
        let key =
          match[keyPath: jsonKey].map { "JSON key becomes \($0)" }
          ?? "JSON key stays \(KeyInflection.jsonKey(for: oldName, keyCase: keyCase))"
        result.append(ModelDifference(place: place, change: "renamed from \(oldName) (\(key))"))
      }
      let changed = changedSettings(property, match) { property in
        property[keyPath: name] = ""
        property[keyPath: renamedFrom] = nil
      }
      if !changed.isEmpty { result.append(ModelDifference(place: place, change: changed)) }
    }
    for (property, predecessor) in zip(new, predecessors) where predecessor == nil {
      result.append(ModelDifference(place: "\(entity).\(property[keyPath: name])", change: "added"))
    }
    return result
  }

  /// The settings of a model element by name, as text: every stored property but the name
  /// and the nested lists, so that a new setting is compared without being listed here.
  private static func settings(of value: Any) -> [String: String] {
    var settings: [String: String] = [:]
    for child in Mirror(reflecting: value).children {
      guard let label = child.label, label != "name", label != "attributes", label != "relationships",
        label != "renamedFrom"
      else { continue }
      settings[fileNames[label] ?? label] = Self.text(child.value)
    }
    return settings
  }

  /// The names a model file gives the settings whose Swift names differ (`isExported` is
  /// `export` there): a difference is told as the user wrote the model.
  private static let fileNames = [
    "isExported": "export", "isOptional": "optional", "isIndexed": "indexed", "isToMany": "many",
    "isOrdered": "ordered", "destination": "to", "deletesOrphans": "deleteOrphans", "isAbstract": "abstract",
  ]

  private static func text(_ value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional { return mirror.children.first.map { text($0.value) } ?? "none" }
    return String(describing: value)
  }

  /// The settings of two versions of a model element that differ, as `changedSettings` tells
  /// them. Told apart by reflection (`settings(of:)`) only when they differ once `clearing`
  /// has emptied what is compared elsewhere: most elements are equal, and reflection costs
  /// thousands of instructions a setting.
  private static func changedSettings<Element: Equatable>(
    _ old: Element, _ new: Element, clearing: (inout Element) -> Void
  ) -> String {
    var (plainOld, plainNew) = (old, new)
    clearing(&plainOld)
    clearing(&plainNew)
    guard plainOld != plainNew else { return "" }
    return changedSettings(settings(of: old), settings(of: new))
  }

  /// `name: old → new` for each setting that differs, in name order; empty when none does.
  private static func changedSettings(_ old: [String: String], _ new: [String: String]) -> String {
    Set(old.keys).union(new.keys).sorted().compactMap { key in
      let (before, after) = (old[key] ?? "none", new[key] ?? "none")
      return before == after ? nil : "\(key): \(before) → \(after)"
    }.joined(separator: ", ")
  }
}
