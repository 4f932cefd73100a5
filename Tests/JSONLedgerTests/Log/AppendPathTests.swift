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
    for batch in 1...(try leader.head) { _ = try replica.appendEncoded([try Self.storedBytes(leader, batch)]) }
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

  /// A replica catching up appends the records between two migrations in one transaction:
  /// every one of them, each announced on `changes` in order, or, when one is refused, none.
  @Test func recordsAppendedTogetherAreAllOrNothingAndEachIsAnnounced() async throws {
    let directory = try TemporaryDirectory()
    let leader = try LifecycleEdgeTests.store(directory.path + "/leader", batches: 5)
    let replica = try Ledger.open(at: directory.path + "/replica", model: leader.model)
    var records = try (1...5).map { try Self.storedBytes(leader, UInt64($0)) }
    // The fourth one past its gap: nothing is written, not even the first three.
    #expect {
      try replica.appendEncoded([records[0], records[1], records[2], records[4]])
    } throws: { "\($0)".contains("does not follow the head of the log (batch 3)") }
    var damaged = records[3]
    damaged[damaged.count / 2] ^= 0x01
    #expect {
      try replica.appendEncoded([records[0], records[1], records[2], damaged])
    } throws: { "\($0)".contains("checksum") }
    #expect(try replica.head == 0)
    let changes = replica.changes
    // The last one twice: the second is already applied, a no-op announced as nothing.
    records.append(records[4])
    #expect(try replica.appendEncoded(records).map(\.batchID) == [1, 2, 3, 4, 5, 5])
    var announced: [UInt64] = []
    for await summary in changes {
      announced.append(summary.batchID)
      if announced.count == 5 { break }
    }
    #expect(announced == [1, 2, 3, 4, 5])
    #expect(try replica.head == 5)
    _ = try await replica.verify()
  }

  @Test func aRecordThatDoesNotFollowTheHeadOrIsDamagedIsRefusedAndNothingIsWritten() throws {
    let directory = try TemporaryDirectory()
    let leader = try LifecycleEdgeTests.store(directory.path + "/leader", batches: 3)
    let replica = try Ledger.open(at: directory.path + "/replica", model: leader.model)
    // Batch 2 before batch 1.
    #expect {
      try replica.appendEncoded([try Self.storedBytes(leader, 2)])
    } throws: { "\($0)".contains("does not follow the head of the log (batch 0)") }
    // One flipped bit.
    var damaged = try Self.storedBytes(leader, 1)
    damaged[damaged.count / 2] ^= 0x01
    #expect {
      try replica.appendEncoded([damaged])
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
