import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Testing

/// How every front end reads a batch and a relationship mode: the library's one reading.
@Suite("Batch references and relationship modes")
struct BatchReferenceTests {
  @Test func aBatchIsAnIdOrAnyISO8601TimeAndATimeIsTheLastBatchAppliedByThen() throws {
    let directory = try TemporaryDirectory()
    let model = try Model {
      Entity("Tag", identity: ["name"]) { Attribute("name", .string) }
    }
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(#"[{"name": "a"}]"#.utf8), as: "Tag")
    _ = try ledger.applySynchronously(batch)
    #expect(BatchReference("7") == .id(7))
    #expect(BatchReference("0") == .id(0))
    for text in ["2026-01-01", "2026-01-01T12:00:00Z", "2026-01-01T12:00:00.5+02:00"] {
      guard case .time(_, let kept)? = BatchReference(text) else {
        Issue.record("\(text) is not read as a time")
        continue
      }
      #expect(kept == text)
    }
    #expect(BatchReference("soon") == nil)
    #expect(BatchReference("-1") == nil)
    #expect(throws: LedgerError.self) { try BatchReference(parsing: "soon", name: "asOf") }
    do { _ = try BatchReference(parsing: "soon", name: "asOf") } catch {
      #expect(error.code == .invalidArgument)
      #expect(error.message == #"asOf must be a batch id or an ISO 8601 time, not "soon""#)
    }
    #expect(try ledger.batchID(BatchReference(parsing: "2999-01-01")) == 1)
    #expect(try ledger.batchID(BatchReference(parsing: "3")) == 3)
    // Before every batch: the empty store where one is taken, else no batch.
    let early = try BatchReference(parsing: "1999-01-01")
    #expect(try ledger.batchID(early, emptyStoreAllowed: true) == 0)
    do { _ = try ledger.batchID(early) } catch let error as LedgerError {
      #expect(error.code == .batchNotFound)
      #expect(error.message == "no batch was applied at or before 1999-01-01")
    }
  }

  @Test func aRelationshipModeIsNamedAndNestedOnesTakeADepthFromOneToAHundred() throws {
    #expect(try RelationshipExport(named: "none") == .none)
    #expect(try RelationshipExport(named: "ids") == .ids)
    #expect(try RelationshipExport(named: "nested", depth: 2) == .nested(depth: 2))
    #expect(try RelationshipExport(named: "rails") == .rails(depth: 3))
    #expect(RelationshipExport.names == ["none", "ids", "nested", "rails"])
    for (name, depth) in [("deep", 3), ("nested", 0), ("ids", 101)] {
      #expect(throws: LedgerError.self) { try RelationshipExport(named: name, depth: depth) }
    }
  }
}
