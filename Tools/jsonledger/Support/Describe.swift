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
    lines(try ledger.describe(change))
  }

  /// The lines of the changes from batch `before` to batch `after`, a row an object owns told
  /// as that object's fields.
  static func changes(_ changes: [ObjectChange], from before: UInt64, to after: UInt64, ledger: Ledger) throws
    -> [[String]]
  {
    try ledger.describe(changes, from: before, to: after).map(lines)
  }

  /// The lines of a described change: fields old → new, links added and removed, an
  /// ordered list's order after the change.
  static func lines(_ described: ChangeDescription) -> [String] {
    var heading = "\(described.kind) \(described.key)"
    if described.deliversPlaceholder {
      heading += " (delivered: no longer a placeholder)"
    } else if described.isPlaceholder {
      heading += " (placeholder)"
    }
    var lines = [heading]
    for attribute in described.attributes {
      lines.append("    \(attribute.name): \(value(attribute.old)) → \(value(attribute.new))")
    }
    for link in described.links {
      var parts: [String] = []
      if !link.added.isEmpty { parts.append("+ \(keys(link.added))") }
      if !link.removed.isEmpty { parts.append("- \(keys(link.removed))") }
      // An ordered list's order is its value: said whenever the list changed.
      if let order = link.order { parts.append("order: \(keys(order))") }
      lines.append("    \(link.relationship): \(parts.joined(separator: "  "))")
    }
    return lines
  }

  static func object(_ object: ObjectSnapshot) -> [String] {
    var lines = [
      object.isPlaceholder ? "\(object.key) (placeholder: known only by a reference to it)" : "\(object.key)"
    ]
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
