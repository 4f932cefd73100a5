import JSONLedger
import JSONLedgerTestSupport
import PropertyBased
import Testing

/// Random histories of imports, deletions, forced reverts and rewinds, checked against what
/// each batch left: a failure shrinks to the shortest history (and smallest numbers) that still
/// fails, and prints it with the seed that replays it.
@Suite("Histories that shrink when they fail")
struct ShrinkingHistoryTests {
  static let model: Model = {
    do {
      return try Model {
        Entity("Band", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("albums", to: "Album", many: true, inverse: "band")
        }
        Entity("Album", identity: ["name"]) {
          Attribute("name", .string)
          Attribute("label", .string)
          Relationship("band", to: "Band", inverse: "albums")
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  /// One step of a history, read from a number: what to do, to which album, with which band
  /// and label (smaller numbers: simpler steps, which is what shrinking moves toward).
  static func apply(_ step: Int, to ledger: Ledger) throws {
    let album = "a\((step / 5) % 6)"
    let band = "b\((step / 30) % 3)"
    let label = "l\((step / 90) % 4)"
    let head = try ledger.head
    switch step % 5 {
    case 0, 1:
      var batch = ledger.makeBatch()
      try batch.stage([["name": .string(album), "band": .string(band), "label": .string(label)]], as: "Album")
      _ = try ledger.applySynchronously(batch)
    case 2:
      var batch = ledger.makeBatch()
      try batch.delete("Album", key: .string(album))
      _ = try ledger.applySynchronously(batch)
    case 3:
      guard head > 0 else { return }
      // A batch reverted once is refused a second time, force or not: nothing to check then.
      do { _ = try ledger.revert(UInt64(step / 5) % head + 1, force: true) } catch let refused as LedgerError
        where refused.code == .revertConflicts || refused.code == .alreadyReverted
      {
        guard refused.alreadyRevertedBy != nil else { throw refused }
      }
    default:
      guard head > 0 else { return }
      _ = try ledger.rewind(to: UInt64(step / 5) % head)
    }
  }

  /// - Reliability: Random histories of imports, deletions, forced reverts and rewinds (swift-property-based,
  ///   shrinking a failure to its shortest history): every batch reads back as it left the store;
  ///   the log verifies
  /// - Size: 100 histories of 1–24 steps
  @Test(.tags(.reliability)) func everyBatchReadsBackAsItLeftTheStoreAndTheLogVerifies() async throws {
    await propertyCheck(count: 100, input: Gen.int(in: 0...999).array(of: 1...24)) { steps in
      do {
        let directory = try TemporaryDirectory()
        let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
        var after: [UInt64: JSONValue] = [:]
        for step in steps {
          try Self.apply(step, to: ledger)
          let head = try ledger.head
          after[head] = try ledger.read { view in try view.exportDocument() }
        }
        for (batch, document) in after where batch > 0 {
          #expect(try ledger.read(asOf: batch) { view in try view.exportDocument() } == document, "batch \(batch)")
        }
        _ = try ledger.verify()
      } catch {
        Issue.record("\(steps): \(error)")
      }
    }
  }
}
