import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// A revert's plan is worked out without a write, and is what the revert then does.
@Suite("Revert plans")
struct RevertPlanTests {
  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("label", .string)
      }
    }
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    for payload: JSONValue in [
      [["name": "Japan", "label": "Hansa"], ["name": "Can", "label": "Spoon"]],
      [["name": "Japan", "label": "Virgin"], ["name": "Faust", "label": "Polydor"]],
      [["name": "Japan", "label": "EMI"]],
    ] {
      var batch = ledger.makeBatch()
      try batch.stage(payload, as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    return ledger
  }

  @Test func aPlanListsTheConflictsAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let plan = try ledger.revertPlan(2)
    #expect(plan.isRefused)
    #expect(plan.conflicts.map(\.field) == ["label"])
    #expect(plan.conflicts.first?.changedBy == 3)
    #expect(try ledger.head == 3)
    let forced = try ledger.revertPlan(2, force: true)
    #expect(!forced.isRefused)
    #expect(forced.statistics.updated == 1 && forced.statistics.deleted == 1)
    #expect(try ledger.head == 3)
  }

  @Test func theRevertDoesWhatItsPlanSaid() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let plan = try ledger.revertPlan(2, keepingLaterChanges: true)
    let result = try ledger.revert(2, keepingLaterChanges: true)
    let record = try ledger.record(result.summary.batchID)
    #expect(record.changes == plan.changes)
    #expect(result.kept == plan.conflicts)
    let again = try ledger.revertPlan(2)
    #expect(again.isRefused)
    #expect(again.alreadyRevertedBy == result.summary.batchID)
  }
}
