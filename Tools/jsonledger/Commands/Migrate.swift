import ArgumentParser
import JSONLedger

struct Migrate: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Follow a new version of the model, keeping the store's history.",
    discussion: """
      Prints what differs, entity by entity. Additive changes (entities, attributes of new \
      entities, relationships, index flags, relaxed optionality, mapping settings) are written in \
      place; renames (renamedFrom, or Core Data's renamingIdentifier), removals and type changes \
      replay the log under the new model into fresh projections. Either way it is one commit, \
      recorded as a migration batch. A change that cannot be derived is refused with the reasons, \
      and nothing is written.
      """)

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Option(help: "The new model: a JSON model file, an .xcdatamodeld or .xcdatamodel folder, or its contents XML.")
  var model: String

  @Flag(help: "Say what would change, and how, without writing anything.")
  var dryRun = false

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let next = try Model(contentsOf: model)
    let ledger = try storeOptions.open(durability: writeOptions.durability)
    let plan = try ledger.migrationPlan(to: next)
    if dryRun {
      print(plan, report: nil)
      if !plan.refusals.isEmpty {
        throw CommandFailure(message: "\(plan.refusals.count) change(s) cannot be derived; nothing written")
      }
      return
    }
    ledger.close()
    var options = Ledger.Options()
    options.durability = writeOptions.durability
    options.transformers.passesUnknownThrough = storeOptions.passThroughTransformers
    let report = try await Ledger.migrate(at: storeOptions.store, to: next, options: options)
    print(plan, report: report)
  }

  private func print(_ plan: MigrationPlan, report: MigrationReport?) {
    if json {
      var object: JSONObject = [
        "method": .string(plan.method.rawValue),
        "differences": .array(plan.differences.map { .string($0.description) }),
        "refusals": .array(plan.refusals.map { .string($0.description) }),
      ]
      if let report {
        object["fromVersion"] = .number(JSONNumber(Int(report.fromVersion)))
        object["toVersion"] = .number(JSONNumber(Int(report.toVersion)))
        object["batch"] = report.batchID.map { .number(JSONNumber(Int($0))) } ?? .null
        object["replayedBatches"] = .number(JSONNumber(report.replayedBatches))
      }
      Output.json(.object(object))
      return
    }
    for difference in plan.differences { Output.line("  \(difference)") }
    for refusal in plan.refusals { Output.line("cannot migrate: \(refusal)") }
    guard let report else {
      Output.line(
        plan.refusals.isEmpty
          ? "would migrate \(plan.method.rawValue) (\(plan.differences.count) differences); nothing written"
          : "refused")
      return
    }
    guard let batch = report.batchID else {
      Output.line("\(storeOptions.store) already has this model: nothing to do")
      return
    }
    let replayed = plan.method == .replay ? " (\(report.replayedBatches) batches)" : ""
    Output.line(
      "migrated \(storeOptions.store) from model version \(report.fromVersion) to \(report.toVersion) \(plan.method.rawValue)\(replayed); batch \(batch) records it"
    )
  }
}
