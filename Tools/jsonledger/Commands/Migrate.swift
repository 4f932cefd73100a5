import ArgumentParser
import JSONLedger
import JSONLedgerPostgres

struct Migrate: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrate",
    abstract: "Follow a new version of the model, keeping the store's history.",
    discussion: """
      Prints what differs, entity by entity. Additive changes (entities, attributes of new \
      entities, relationships, index flags, relaxed optionality, mapping settings) are written in \
      place; renames (renamedFrom, or Core Data's renamingIdentifier), removals, type changes and \
      a new identity replay the log under the new model into fresh projections. Either way it is \
      one commit, recorded as a migration batch; on a replica it goes through the remote and \
      every other replica follows it. A change that cannot be derived is refused with \
      the reasons, and nothing is written. --dry-run checks the models; what depends on the data \
      (a value its new type does not take, a missing or shared new identity) is found by the \
      migration itself.
      """)

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Option(help: "The new model: a JSON model file, an .xcdatamodeld or .xcdatamodel folder, or its contents XML.")
  var model: String

  @Flag(help: "Say what would change, and how, without writing anything.")
  var dryRun = false

  @Flag(help: "Migrate even when the new model removes entities that hold objects (they are gone from every view).")
  var allowRemovals = false

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let next = try Model(contentsOf: model)
    let ledger = try storeOptions.open(durability: writeOptions.durability)
    let plan = try ledger.migrationPlan(to: next)
    let removed = try ledger.objectsRemoved(by: plan)
    ledger.close()
    // What differs comes first, before anything is written.
    if !json {
      for difference in plan.differences { Output.line("  \(difference)") }
      for refusal in plan.refusals { Output.line("cannot migrate: \(refusal)") }
      for (entity, objects) in removed {
        Output.line(
          "\(dryRun ? "would remove" : "removes") \(entity) with its \(objects) object\(objects == 1 ? "" : "s")")
      }
    }
    if dryRun || !plan.refusals.isEmpty || (!removed.isEmpty && !allowRemovals) {
      if json { Output.json(summary(plan, report: nil, removed: removed)) }
      if !plan.refusals.isEmpty {
        throw CommandFailure(message: "\(plan.refusals.count) change(s) cannot be derived; nothing written")
      }
      if !removed.isEmpty, !dryRun {
        let objects = removed.map(\.objects).reduce(0, +)
        throw CommandFailure(
          message:
            "the new model removes \(removed.map(\.entity).joined(separator: ", ")) with \(objects) object\(objects == 1 ? "" : "s"), which would be gone from every view; nothing written (--allow-removals migrates all the same)"
        )
      }
      if !json {
        let count = plan.differences.count
        Output.line(
          "would migrate \(plan.method.rawValue) (\(count) difference\(count == 1 ? "" : "s")); nothing written")
      }
      return
    }
    var options = Ledger.Options()
    options.durability = writeOptions.durability
    options.transformers.passesUnknownThrough = storeOptions.passThroughTransformers
    // A replica migrates through its remote, and every other replica follows.
    let report: MigrationReport
    let store = try Ledger.open(at: storeOptions.store, options: options)
    if let replica = try Replica.ifReplica(store) {
      defer {
        replica.ledger.close()
        store.close()
      }
      report = try await replica.migrate(to: next, allowingRemovals: allowRemovals)
    } else {
      store.close()
      report = try await Ledger.migrate(
        at: storeOptions.store, to: next, options: options, allowingRemovals: allowRemovals)
    }
    if json {
      Output.json(summary(plan, report: report, removed: removed))
    } else if let batch = report.batchID {
      let replayed = plan.method == .replay ? " (\(report.replayedBatches) batches)" : ""
      Output.line(
        "migrated \(storeOptions.store) from model version \(report.fromVersion) to \(report.toVersion) \(plan.method.rawValue)\(replayed); batch \(batch) records it"
      )
    } else {
      Output.line("\(storeOptions.store) already has this model: nothing to do")
    }
  }

  /// The plan and what was done, for `--json`.
  private func summary(_ plan: MigrationPlan, report: MigrationReport?, removed: [(entity: String, objects: Int)])
    -> JSONValue
  {
    var removedObjects = JSONObject()
    for (entity, objects) in removed { removedObjects[entity] = .number(JSONNumber(objects)) }
    var object: JSONObject = [
      "method": .string(plan.method.rawValue),
      "differences": .array(plan.differences.map { .string($0.description) }),
      "refusals": .array(plan.refusals.map { .string($0.description) }),
      "removedObjects": .object(removedObjects),
    ]
    if let report {
      object["fromVersion"] = .number(JSONNumber(Int(report.fromVersion)))
      object["toVersion"] = .number(JSONNumber(Int(report.toVersion)))
      object["batch"] = report.batchID.map { .number(JSONNumber(Int($0))) } ?? .null
      object["replayedBatches"] = .number(JSONNumber(report.replayedBatches))
    }
    return .object(object)
  }
}
