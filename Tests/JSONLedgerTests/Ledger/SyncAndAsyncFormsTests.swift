import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Every access has a synchronous and an async form")
struct SyncAndAsyncFormsTests {
  static func ledger(in directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("formed", .int64)
      }
    }
    return try Ledger.open(at: directory.storePath, model: model)
  }

  static func apply(_ ledger: Ledger, _ objects: [JSONValue]) throws {
    var batch = ledger.makeBatch()
    try batch.stage(.array(objects), as: "Band")
    _ = try ledger.applySynchronously(batch)
  }

  @Test func synchronousFormsWorkWithoutAnAwait() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [["name": "Japan", "formed": 1974]])
    try Self.apply(ledger, [["name": "Japan", "formed": 1975]])
    #expect(try ledger.log().count == 2)
    #expect(try ledger.diff(from: 1, to: 2).changes.count == 1)
    #expect(try ledger.record(2).changes.count == 1)
    #expect(try ledger.revert(2).summary.batchID == 3)
    #expect(try ledger.rewind(to: 2).batchID == 4)
    #expect(try ledger.statistics().batches == 4)
    #expect(try ledger.verify().batches == 4)
  }

  @Test func asyncFormsGiveTheSameAnswers() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try Self.apply(ledger, [["name": "Japan", "formed": 1974]])
    try Self.apply(ledger, [["name": "Japan", "formed": 1975]])
    #expect(try await ledger.log().count == 2)
    #expect(try await ledger.log("Band", key: "Japan").count == 2)
    #expect(try await ledger.diff(from: 1, to: 2).changes.count == 1)
    #expect(try await ledger.record(2).changes.count == 1)
    #expect(try await ledger.revert(2).summary.batchID == 3)
    #expect(try await ledger.rewind(to: 2).batchID == 4)
    #expect(try await ledger.statistics().batches == 4)
    #expect(try await ledger.verify().batches == 4)
    let file = try directory.write("bands.json", #"[{"name": "Roxy Music"}, {"name": "Talk Talk"}]"#)
    let parts = try await ledger.importFile(at: file, entity: "Band", chunkSize: 1)
    #expect(parts.map(\.batchID) == [5, 6])
  }
}
