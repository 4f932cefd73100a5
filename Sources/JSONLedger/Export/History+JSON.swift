public import Foundation

// The JSON shapes of the history — a batch, a change, a revert conflict, an import's summary —
// owned here, so that the command-line tool's `--json` output and the HTTP API say the same
// thing the same way. Keys are values as JSON (a composite key is an array), related objects
// are named by their key's text, times are ISO 8601 in UTC.

extension Ledger {
  /// One batch as JSON: its id, time, kind, message, author, source, the batch it reverts (when it is a revert),
  /// the model version it was written under, its counts, and — with `changes` — every object
  /// change in model terms.
  func batchJSON(
    batchID: UInt64, time: Date, kind: ChangeRecord.Kind, metadata: ChangeRecord.Metadata,
    statistics: ChangeRecord.Statistics, modelVersion: UInt32, changes: [ObjectChange]?
  ) throws -> JSONValue {
    var object: JSONObject = [
      "batch": .number(JSONNumber(batchID)), "time": .string(Self.timeText(time)),
      "kind": .string(kind.description),
      "created": .number(JSONNumber(statistics.created)), "updated": .number(JSONNumber(statistics.updated)),
      "deleted": .number(JSONNumber(statistics.deleted)),
      "unchanged": .number(JSONNumber(statistics.unchanged)),
      "modelVersion": .number(JSONNumber(Int(modelVersion))),
      "message": metadata.message.map { .string($0) } ?? .null,
      "author": metadata.author.map { .string($0) } ?? .null,
      "source": metadata.source.map { .string($0) } ?? .null,
    ]
    if let reverted = metadata.revertedBatchID { object["reverts"] = .number(JSONNumber(reverted)) }
    if let envelope = metadata.envelope { object["envelope"] = envelope }
    if let run = metadata.run { object["run"] = run }
    if let changes { object["changes"] = .array(try changesJSON(changes, from: batchID - 1, to: batchID)) }
    return .object(object)
  }

  /// A record as JSON, with every change (`batchJSON`).
  public func recordJSON(_ record: ChangeRecord) throws -> JSONValue {
    try batchJSON(
      batchID: record.batchID, time: record.time, kind: record.kind, metadata: record.metadata,
      statistics: record.statistics, modelVersion: record.modelVersion, changes: record.changes)
  }

  /// A log entry as JSON (`batchJSON`), with the revert that undid it (`revertedBy`) and the
  /// one object's change when the log was read for one object.
  public func logEntryJSON(_ entry: LogEntry) throws -> JSONValue {
    let json = try batchJSON(
      batchID: entry.batchID, time: entry.time, kind: entry.kind, metadata: entry.metadata,
      statistics: entry.statistics, modelVersion: entry.modelVersion, changes: nil)
    guard case .object(var object) = json else { return json }
    if let revert = entry.revertedBy { object["revertedBy"] = .number(JSONNumber(revert)) }
    if let change = entry.change { object["change"] = try changeJSON(change) }
    return .object(object)
  }

  /// One object change in model terms: kind, entity, key, each field's old and new value,
  /// each relationship's objects added and removed (and an ordered one's order after it).
  public func changeJSON(_ change: ObjectChange) throws -> JSONValue {
    describedJSON(try describe(change))
  }

  /// The changes that took the store from batch `before` to batch `after`, each as
  /// `changeJSON` writes it, a row an object owns told as that object's fields
  /// (`describe(_:from:to:hidingReverseLinks:)`).
  public func changesJSON(_ changes: [ObjectChange], from before: UInt64, to after: UInt64) throws -> [JSONValue] {
    try describe(changes, from: before, to: after).map(describedJSON)
  }

  /// A diff as JSON: `{"from": 3, "to": 7, "changes": [...]}`, each change as `changesJSON`
  /// writes it.
  public func diffJSON(_ diff: LedgerDiff) throws -> JSONValue {
    [
      "from": .number(JSONNumber(diff.from)), "to": .number(JSONNumber(diff.to)),
      "changes": .array(try changesJSON(diff.changes, from: diff.from, to: diff.to)),
    ]
  }

  /// A described change as JSON (`changeJSON`): `placeholder` is there when the object is
  /// one, `delivered` when the change delivered one.
  public func describedJSON(_ described: ChangeDescription) -> JSONValue {
    let dateFormat = model.dateFormat
    var fields = JSONObject()
    for attribute in described.attributes {
      fields[attribute.name] = [
        "old": attribute.old?.jsonValue(dateFormat: dateFormat) ?? .null,
        "new": attribute.new?.jsonValue(dateFormat: dateFormat) ?? .null,
      ]
    }
    var links = JSONObject()
    for link in described.links {
      var entry: JSONObject = [
        "added": .array(link.added.map { .string($0.description) }),
        "removed": .array(link.removed.map { .string($0.description) }),
      ]
      // An ordered list's order is its value: a reorder adds and removes nothing.
      if let order = link.order { entry["order"] = .array(order.map { .string($0.description) }) }
      links[link.relationship] = .object(entry)
    }
    var object: JSONObject = [
      "kind": .string(described.kind.description), "entity": .string(described.key.entity),
      "key": .array(described.key.identity.map { $0.jsonValue(dateFormat: dateFormat) }),
      "fields": .object(fields), "links": .object(links),
    ]
    if described.isPlaceholder { object["placeholder"] = true }
    if described.deliversPlaceholder { object["delivered"] = true }
    return .object(object)
  }

  /// A time as the history's JSON writes it: ISO 8601, UTC, whole seconds.
  public static func timeText(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
  }
}

extension ObjectChange {
  /// The change without the hidden reverse links of relationships that have no inverse
  /// (they repeat the forward link from the other side): what a diff shows.
  public var withoutHiddenLinks: ObjectChange {
    var copy = self
    copy.links.removeAll { $0.relationshipID & ResolvedRelationship.hiddenReverseBit != 0 }
    return copy
  }
}

extension RevertConflict {
  /// The conflict in the shape of a change: the key as its values, attribute values typed,
  /// related objects named by their key's text; and `description`, the conflict in words
  /// (what the CLI prints, and the console shows).
  public func jsonValue(dateFormat: DateFormat) -> JSONValue {
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
      "entity": .string(object.entity),
      "key": .array(object.identity.map { $0.jsonValue(dateFormat: dateFormat) }),
      "field": .string(field), "setByBatch": json(setByBatch), "now": json(now),
      "changedBy": .number(JSONNumber(changedBy)), "description": .string(description),
    ]
  }
}

extension BatchSummary {
  /// What one write did, one shape whether it applied one batch or many (a chunked import):
  /// the last batch written, every batch, the counts of the batches this write applied, how
  /// many were applied already (an idempotency key seen before), whether it changed nothing
  /// (no batch written), the JSON keys that matched nothing, the entities a prune emptied and
  /// the placeholders it kept.
  public static func jsonValue(of summaries: [BatchSummary]) -> JSONValue {
    let applied = summaries.filter { !$0.wasAlreadyApplied }
    let batches = summaries.filter(\.wroteRecord)
    func total(_ count: (BatchSummary) -> Int) -> JSONValue { .number(JSONNumber(applied.map(count).reduce(0, +))) }
    let ignored = Set(summaries.flatMap(\.ignoredKeys)).sorted()
    return [
      "batch": batches.last.map { .number(JSONNumber($0.batchID)) } ?? .null,
      "batches": .array(batches.map { .number(JSONNumber($0.batchID)) }),
      "changedNothing": .bool(!summaries.isEmpty && batches.isEmpty),
      "placeholdersKept": total(\.placeholdersKept),
      "created": total(\.created), "updated": total(\.updated), "deleted": total(\.deleted),
      "unchanged": total(\.unchanged),
      "alreadyApplied": .bool(!summaries.isEmpty && applied.isEmpty),
      "batchesAlreadyApplied": .number(JSONNumber(summaries.count - applied.count)),
      "ignoredKeys": .array(ignored.map { .string($0) }),
      "deletedAll": .array(Set(applied.flatMap(\.emptiedByPrune)).sorted().map { .string($0) }),
    ]
  }
}

extension RevertResult {
  /// The revert's summary (`BatchSummary.jsonValue(of:)`), with the later changes it
  /// overrode and those it kept.
  public func jsonValue(dateFormat: DateFormat) -> JSONValue {
    var object = BatchSummary.jsonValue(of: [summary]).objectValue ?? [:]
    object["overridden"] = .array(overridden.map { $0.jsonValue(dateFormat: dateFormat) })
    object["kept"] = .array(kept.map { $0.jsonValue(dateFormat: dateFormat) })
    return .object(object)
  }
}

extension LedgerError {
  /// The error as JSON: its code, message, and every field that is set.
  public func jsonValue(dateFormat: DateFormat = .iso8601) -> JSONValue {
    var object: JSONObject = ["code": .string(code.rawValue), "message": .string(message)]
    func number(_ value: UInt64?) -> JSONValue? { value.map { .number(JSONNumber($0)) } }
    object["path"] = path.map { .string($0) }
    object["batch"] = number(batchID)
    object["entity"] = entity.map { .string($0) }
    object["key"] = key.map { .string($0) }
    object["head"] = number(head)
    object["expectedHead"] = number(expectedHead)
    object["firstBatch"] = number(firstBatch)
    object["alreadyRevertedBy"] = number(alreadyRevertedBy)
    if !known.isEmpty { object["known"] = .array(known.map { .string($0) }) }
    if !conflicts.isEmpty { object["conflicts"] = .array(conflicts.map { $0.jsonValue(dateFormat: dateFormat) }) }
    if !differences.isEmpty { object["differences"] = .array(differences.map { .string($0.description) }) }
    if let mapping {
      object["problems"] = .array(
        mapping.problems.map { problem in
          [
            "entity": .string(problem.entity), "path": .string(problem.path), "reason": .string(problem.reason),
            "value": problem.value.map { .string($0) } ?? .null,
          ]
        })
    }
    if let syntax {
      object["line"] = .number(JSONNumber(syntax.line))
      object["column"] = .number(JSONNumber(syntax.column))
    }
    if !appliedBatches.isEmpty { object["appliedBatches"] = .array(appliedBatches.compactMap { number($0) }) }
    if let position { object["position"] = .number(JSONNumber(position)) }
    if let cause { object["cause"] = cause.jsonValue(dateFormat: dateFormat) }
    return .object(object)
  }
}
