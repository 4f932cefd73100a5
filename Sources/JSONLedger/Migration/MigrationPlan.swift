/// What migrating a store to a new model does, worked out from the two models before
/// anything is written: what differs, whether the stored states stay as they are (`inPlace`),
/// are rewritten where they lie (`rewrite`) or the log is replayed under the new model
/// (`replay`), and what cannot be derived.
public struct MigrationPlan: Sendable {
  /// How the projections follow the new model.
  public enum Method: String, Sendable {
    /// The models are equal: nothing to do.
    case nothing
    /// Every record reads the same under the new model (entities, attributes, relationships,
    /// index flags, relaxed optionality and mapping settings added or changed): the model, a
    /// `migration` record, the states of entities that gained attributes and any changed index
    /// are written; the log is not replayed.
    case inPlace = "in place"
    /// Entities, attributes and relationships renamed, attributes' types changed, or
    /// attributes removed, beside any change made in place: each stored state and undo image
    /// of entities whose attributes changed is rewritten, and indexes they are in are rebuilt.
    /// The projections come out as a replay would build them; the log is not replayed. A
    /// coercion that might make two values one (text "1.5" and "1.50" as numbers) is checked
    /// value by value: where a value does not come back from its new type as it was, or does
    /// not take it, the log is replayed instead. An update that changed only removed
    /// attributes is no change any more: its undo image goes, unless it or the state after it
    /// keeps a long list as a change, and then the log is replayed.
    case rewrite = "by rewriting the stored states"
    /// Removed entities and relationships, a new identity, and any change to a record's
    /// objects or links: the log is replayed under the new model into fresh projections, in
    /// the same commit.
    case replay = "by replaying the log"
  }

  /// What differs, entity by entity, property by property.
  public let differences: [ModelDifference]
  /// How the migration is carried out.
  public internal(set) var method: Method
  /// What cannot be derived; a plan with any is refused.
  public let refusals: [ModelDifference]
  /// Entities of the store's model (roots, with every entity inheriting from them) that the
  /// new model removes: their objects would be gone from every view. A migration refuses
  /// to remove any that hold objects unless removals are allowed.
  public var removedEntities: [String] { translation.droppedRoots }
  /// The new model, numbered to follow the store's.
  let next: Model
  let translation: RecordTranslation
  /// Attributes that must now have a value on every live object, by entity (of `next`).
  let newlyRequired: [(entity: String, attribute: String)]
  /// To-many relationships that became to-one: no live object may hold more than one link.
  let newlyToOne: [(entity: String, relationship: ResolvedRelationship)]
  /// Whether any attribute's index flag changed: `indexes` is rebuilt.
  let changesIndexes: Bool
  /// Entities (of `next`) whose stored states name an attribute by a number that changes,
  /// or (`rewrite`) whose attributes are renamed, coerced or removed: unless the log is replayed,
  /// their states and undo images are rewritten. Empty when attributes are only added (they
  /// keep their numbers).
  let rewrittenEntities: Set<String>

  init(from old: Model, to new: Model) throws(ModelError) {
    next = try old.followed(by: new)
    differences = old.differences(to: new)
    translation = RecordTranslation(from: old, to: next)
    var refusals: [ModelDifference] = []
    var newlyRequired: [(String, String)] = []
    var newlyToOne: [(String, ResolvedRelationship)] = []
    var changesIndexes = false
    var renumberedEntities: Set<String> = []
    let lineage = ModelLineage(from: old, to: next.entities)
    for entity in next.resolvedInOrder {
      guard let oldName = lineage.oldEntityName(of: entity.name), let previous = old.resolved(oldName) else {
        continue
      }
      let parent = entity.declaration.parent
      if parent.flatMap({ lineage.oldEntityName(of: $0) ?? "\($0) (new)" }) != previous.declaration.parent {
        refusals.append(
          ModelDifference(
            place: entity.name,
            change:
              "its parent changes from \(previous.declaration.parent ?? "none") to \(parent ?? "none"): objects keep their root entity, so this cannot be derived"
          ))
      }
      let carried = Dictionary(
        zip(ModelLineage.oldAttributeNames(of: entity.attributes, among: previous.attributes), entity.attributes)
          .compactMap { previous, attribute in previous.map { ($0, attribute) } },
        uniquingKeysWith: { first, _ in first })
      // A new identity is taken from each object's values (`RecordTranslation`); one whose
      // attributes change type would need its keys coerced too.
      let identityTypesChange = carried.contains { oldName, attribute in
        (previous.identity.contains(oldName) || entity.identity.contains(attribute.name))
          && previous.attributeIndex[oldName]?.type != attribute.type
      }
      if identityTypesChange {
        refusals.append(
          ModelDifference(place: entity.name, change: "an identity attribute changes type: keys are not re-derived"))
      }
      // A removed attribute's index entries go.
      if previous.attributes.contains(where: { $0.isIndexed && carried[$0.name] == nil }) { changesIndexes = true }
      for attribute in entity.attributes {
        let before = carried.first { $0.value.name == attribute.name }.flatMap { previous.attributeIndex[$0.key] }
        if !attribute.isOptional, before?.isOptional ?? true { newlyRequired.append((entity.name, attribute.name)) }
        if attribute.isIndexed != (before?.isIndexed ?? false) { changesIndexes = true }
        // An index entry holds the attribute's name and value.
        if attribute.isIndexed, let before, before.name != attribute.name || before.type != attribute.type {
          changesIndexes = true
        }
      }
      // Stored states name attributes by number: they change only where a carried attribute's
      // number does, or an attribute is gone. `followed(by:)` keeps numbers: adding an
      // attribute rewrites nothing.
      let renumbered = carried.contains { oldName, attribute in
        previous.attributeNumber(of: oldName) != entity.attributeNumber(of: attribute.name)
      }
      if renumbered || previous.attributes.contains(where: { carried[$0.name] == nil }) {
        renumberedEntities.insert(entity.name)
      }
      for relationship in entity.relationships where relationship.owner == entity.name {
        guard let before = old.relationshipsByID[relationship.id] else { continue }
        let destination = lineage.oldEntityName(of: relationship.declaration.destination)
        if destination != before.declaration.destination {
          refusals.append(
            ModelDifference(
              place: "\(entity.name).\(relationship.name)",
              change:
                "its destination changes from \(before.declaration.destination) to \(relationship.declaration.destination): links cannot be carried over"
            ))
        }
        // Parted from an inverse that stays, a relationship's links would each become two:
        // one each way, each with a hidden reverse side that no state or record holds.
        let inverse = old.counterpart(of: relationship.id)
        if inverse & ResolvedRelationship.hiddenReverseBit == 0, next.counterpart(of: relationship.id) != inverse,
          let kept = next.relationshipsByID[inverse]
        {
          refusals.append(
            ModelDifference(
              place: "\(entity.name).\(relationship.name)",
              change:
                "its inverse changes from \(before.declaration.inverse ?? before.name) to \(relationship.declaration.inverse ?? "none") while \(kept.owner).\(kept.name) stays: each link they share would become two, so this cannot be derived"
            ))
        }
        if relationship.isOrdered, !before.isOrdered {
          refusals.append(
            ModelDifference(
              place: "\(entity.name).\(relationship.name)",
              change: "it becomes ordered: the order of its links was never kept, so it cannot be derived"))
        }
        if !relationship.isToMany, before.isToMany { newlyToOne.append((entity.name, relationship)) }
      }
    }
    for (first, second) in translation.mergedLinkIDs {
      let names = [first, second].map { id in
        old.relationshipsByID[id & ~ResolvedRelationship.hiddenReverseBit].map { "\($0.owner).\($0.name)" } ?? "#\(id)"
      }
      refusals.append(
        ModelDifference(
          place: names[0],
          change:
            "it and \(names[1]) each keep links of their own and become each other's inverse: their links cannot be merged"
        ))
    }
    self.refusals = refusals
    self.newlyRequired = newlyRequired
    self.newlyToOne = newlyToOne
    self.changesIndexes = changesIndexes
    // The store's model read back lists entities by name, a file in its own order: the same
    // model either way is nothing to do.
    if differences.isEmpty, translation.isIdentity {
      method = .nothing
    } else if translation.isIdentity {
      method = .inPlace
    } else if translation.rewritesAttributesOnly {
      method = .rewrite
      renumberedEntities.formUnion(translation.entitiesWithTranslatedAttributes)
    } else {
      method = .replay
    }
    rewrittenEntities = renumberedEntities
  }
}
