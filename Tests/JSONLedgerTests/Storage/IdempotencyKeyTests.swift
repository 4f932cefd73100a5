import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Idempotency keys are stored whole")
struct IdempotencyKeyTests {
  static func model() throws -> Model {
    try Model { Entity("Band", identity: ["name"]) { Attribute("name", .string) } }
  }

  @Test(arguments: [10, 400, 401, 2_000])
  func twoKeysSharingAPrefixAreTwoBatches(length: Int) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    let prefix = String(repeating: "k", count: length)
    var first = ledger.makeBatch()
    try first.stage([["name": "Japan"]], as: "Band")
    var second = ledger.makeBatch()
    try second.stage([["name": "Roxy Music"]], as: "Band")
    let one = try ledger.applySynchronously(first, idempotencyKey: prefix + "-1")
    let two = try ledger.applySynchronously(second, idempotencyKey: prefix + "-2")
    #expect(!two.wasAlreadyApplied)
    #expect(two.batchID == one.batchID + 1)
    let repeated = try ledger.applySynchronously(second, idempotencyKey: prefix + "-2")
    #expect(repeated.wasAlreadyApplied)
    #expect(repeated.batchID == two.batchID)
    #expect(try ledger.verify().batches == 2)
  }
}
