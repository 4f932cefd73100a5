import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// One path takes every record into the log (`appendNew`, `append`): batch ids follow the
/// head, a record encoded elsewhere is checked before it is written, and every kind of batch
/// is published on `changes`.
@Suite("The append path")
struct AppendPathTests {
  static func storedBytes(_ ledger: Ledger, _ batch: UInt64) throws -> [UInt8] {
    try #require(
      try ledger.environment.read { txn in try txn.value(forKey: StoreKeys.batch(batch), in: ledger.layout.log) })
  }

  static func apply(_ ledger: Ledger, _ json: String) throws {
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(json), as: "Disc")
    _ = try ledger.applySynchronously(batch)
  }

  @Test func aReplicaThatAppendsTheLeadersRecordBytesHoldsTheSameStoreAndVerifies() throws {
    let directory = try TemporaryDirectory()
    let leader = try LifecycleEdgeTests.store(directory.path + "/leader", batches: 4)
    _ = try leader.revert(2, force: true)
    let replica = try Ledger.open(at: directory.path + "/replica", model: leader.model)
    for batch in 1...(try leader.head) { _ = try replica.appendEncoded(try Self.storedBytes(leader, batch)) }
    #expect(try replica.head == leader.head)
    for batch in 1...(try leader.head) {
      #expect(try Self.storedBytes(replica, batch) == Self.storedBytes(leader, batch))
      #expect(
        try replica.read(asOf: batch) { try $0.exportJSON("Disc") }
          == leader.read(asOf: batch) { try $0.exportJSON("Disc") })
    }
    #expect(
      try replica.read { view in try view.exportJSON("Disc") } == leader.read { view in try view.exportJSON("Disc") })
    _ = try replica.verify()
  }

  @Test func aRecordThatDoesNotFollowTheHeadOrIsDamagedIsRefusedAndNothingIsWritten() throws {
    let directory = try TemporaryDirectory()
    let leader = try LifecycleEdgeTests.store(directory.path + "/leader", batches: 3)
    let replica = try Ledger.open(at: directory.path + "/replica", model: leader.model)
    // Batch 2 before batch 1.
    #expect {
      try replica.appendEncoded(try Self.storedBytes(leader, 2))
    } throws: { "\($0)".contains("does not follow the head of the log (batch 0)") }
    // One flipped bit.
    var damaged = try Self.storedBytes(leader, 1)
    damaged[damaged.count / 2] ^= 0x01
    #expect {
      try replica.appendEncoded(damaged)
    } throws: { "\($0)".contains("checksum") }
    #expect(try replica.head == 0)
    // A record made here with the wrong id is refused the same way.
    let record = try leader.record(3)
    #expect {
      try replica.environment.write { txn in try replica.append(record, txn) }
    } throws: { "\($0)".contains("does not follow the head") }
    #expect(try replica.head == 0)
  }

  @Test func everyKindOfBatchIsPublishedOnChangesMigrationsToo() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try LifecycleEdgeTests.store(directory.storePath, batches: 2)
    let changes = ledger.changes
    try Self.apply(ledger, #"[{"name": "new", "label": "x"}]"#)
    _ = try await ledger.revert(3)
    _ = try await ledger.rewind(to: 2)
    let next = try LifecycleEdgeTests.discModel(
      #""name": "string", "label": "string", "year": "string", "notes": "string""#)
    let report = try ledger.migrate(to: next)
    var kinds: [ChangeRecord.Kind] = []
    for await summary in changes {
      kinds.append(summary.kind)
      if kinds.count == 4 { break }
    }
    #expect(kinds == [.import, .revert, .rewind, .migration])
    #expect(report.batchID == 6)
    // This ledger read the store under the old model: it says so instead of misreading it.
    #expect(throws: LedgerError.self) { try ledger.read { _ in } }
    #expect(try await Ledger.open(at: directory.storePath).log().first?.kind == .migration)
  }
}
