import JSONLedger

/// Human-readable lines for records and objects.
enum Describe {
  static func counts(_ statistics: ChangeRecord.Statistics) -> String {
    "\(statistics.created) created, \(statistics.updated) updated, \(statistics.deleted) deleted, \(statistics.unchanged) unchanged"
  }

  static func counts(_ summary: BatchSummary) -> String {
    "\(summary.created) created, \(summary.updated) updated, \(summary.deleted) deleted, \(summary.unchanged) unchanged"
  }

  static func value(_ value: AttributeValue?) -> String { value?.description ?? "nil" }

  static func keys(_ keys: [ObjectKey]) -> String {
    keys.isEmpty ? "(none)" : keys.map(\.description).joined(separator: ", ")
  }

  /// The lines of one object change: fields old → new, links added and removed.
  static func change(_ change: ObjectChange, ledger: Ledger) throws -> [String] {
    let described = try ledger.describe(change)
    var lines = ["\(described.kind) \(described.key)"]
    for attribute in described.attributes {
      lines.append("    \(attribute.name): \(value(attribute.old)) → \(value(attribute.new))")
    }
    for link in described.links {
      var parts: [String] = []
      if !link.added.isEmpty { parts.append("+ \(keys(link.added))") }
      if !link.removed.isEmpty { parts.append("- \(keys(link.removed))") }
      if parts.isEmpty, let order = link.order { parts.append("reordered: \(keys(order))") }
      lines.append("    \(link.relationship): \(parts.joined(separator: "  "))")
    }
    return lines
  }

  static func changeJSON(_ change: ObjectChange, ledger: Ledger) throws -> JSONValue {
    let described = try ledger.describe(change)
    let dateFormat = ledger.model.dateFormat
    var object: JSONObject = [
      "kind": .string(described.kind.description), "entity": .string(described.key.entity),
      "key": .array(described.key.identity.map { $0.jsonValue(dateFormat: dateFormat) }),
    ]
    var fields = JSONObject()
    for attribute in described.attributes {
      fields[attribute.name] = [
        "old": attribute.old?.jsonValue(dateFormat: dateFormat) ?? .null,
        "new": attribute.new?.jsonValue(dateFormat: dateFormat) ?? .null,
      ]
    }
    object["fields"] = .object(fields)
    var links = JSONObject()
    for link in described.links {
      links[link.relationship] = [
        "added": .array(link.added.map { .string($0.description) }),
        "removed": .array(link.removed.map { .string($0.description) }),
      ]
    }
    object["links"] = .object(links)
    return .object(object)
  }

  /// A revert conflict in the shape of a diff's change: the key as its values, attribute
  /// values typed, related objects named as in a diff's links.
  static func conflictJSON(_ conflict: RevertConflict, dateFormat: DateFormat) -> JSONValue {
    func json(_ value: RevertConflict.Value) -> JSONValue {
      switch value {
      case .attribute(let value): value?.jsonValue(dateFormat: dateFormat) ?? .null
      case .links(let linked, let unlinked):
        [
          "linked": .array(linked.map { .string($0.description) }),
          "unlinked": .array(unlinked.map { .string($0.description) }),
        ]
      case .order(let keys): ["order": .array(keys.map { .string($0.description) })]
      case .exists(let exists): ["exists": .bool(exists)]
      }
    }
    return [
      "entity": .string(conflict.object.entity),
      "key": .array(conflict.object.identity.map { $0.jsonValue(dateFormat: dateFormat) }),
      "field": .string(conflict.field), "setByBatch": json(conflict.setByBatch), "now": json(conflict.now),
      "changedBy": .number(JSONNumber(Int64(conflict.changedBy))),
    ]
  }

  static func summaryJSON(_ summary: BatchSummary) -> JSONValue {
    importJSON([summary])
  }

  /// An import's summary, one shape whether it applied one batch or many (chunks): the last
  /// batch, every batch, the counts of the batches this run applied, how many were applied
  /// already (idempotency key), and the keys that matched nothing.
  static func importJSON(_ summaries: [BatchSummary]) -> JSONValue {
    let applied = summaries.filter { !$0.wasAlreadyApplied }
    func total(_ count: (BatchSummary) -> Int) -> JSONValue { .number(JSONNumber(applied.map(count).reduce(0, +))) }
    let ignored = Set(summaries.flatMap(\.ignoredKeys)).sorted()
    return [
      "batch": summaries.last.map { .number(JSONNumber(Int64($0.batchID))) } ?? .null,
      "batches": .array(summaries.map { .number(JSONNumber(Int64($0.batchID))) }),
      "created": total(\.created), "updated": total(\.updated), "deleted": total(\.deleted),
      "unchanged": total(\.unchanged),
      "alreadyApplied": .bool(!summaries.isEmpty && applied.isEmpty),
      "batchesAlreadyApplied": .number(JSONNumber(summaries.count - applied.count)),
      "ignoredKeys": .array(ignored.map { .string($0) }),
      // Entities a prune emptied: the payload named none of their objects.
      "deletedAll": .array(Set(applied.flatMap(\.emptiedByPrune)).sorted().map { .string($0) }),
    ]
  }

  static func object(_ object: ObjectSnapshot) -> [String] {
    var lines = ["\(object.key)"]
    for name in object.attributes.keys.sorted() {
      lines.append("  \(name): \(value(object.attributes[name]))")
    }
    for name in object.relationships.keys.sorted() {
      let targets = object.relationships[name] ?? []
      lines.append(
        "  \(name) → \(targets.isEmpty ? "(none)" : targets.map { $0.identity.map(\.description).joined(separator: ", ") }.joined(separator: "; "))"
      )
    }
    return lines
  }
}

extension Describe {
  /// The change without the hidden reverse links of relationships that have no inverse
  /// (they repeat the forward link from the other side).
  static func withoutHiddenLinks(_ change: ObjectChange) -> ObjectChange {
    var copy = change
    copy.links.removeAll { $0.relationshipID & 0x8000_0000 != 0 }
    return copy
  }
}
