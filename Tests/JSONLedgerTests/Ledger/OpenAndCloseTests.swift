import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("One environment per store per process; close()")
struct OpenAndCloseTests {
  static func model() throws -> Model {
    try Model { Entity("Band", identity: ["name"]) { Attribute("name", .string) } }
  }

  @Test func twoOpensOfOneStoreShareOneEnvironment() throws {
    let directory = try TemporaryDirectory()
    let first = try Ledger.open(at: directory.storePath, model: try Self.model())
    let second = try Ledger.open(at: directory.storePath + "/../store")
    #expect(try first.environment === second.environment)
    var batch = first.makeBatch()
    try batch.stage([["name": "Japan"]], as: "Band")
    _ = try first.applySynchronously(batch)
    #expect(try second.read { view in try view.count("Band") } == 1)
  }

  @Test func aClosedLedgerRefusesEveryAccessAndTheOtherGoesOn() throws {
    let directory = try TemporaryDirectory()
    let first = try Ledger.open(at: directory.storePath, model: try Self.model())
    let second = try Ledger.open(at: directory.storePath)
    first.close()
    first.close()
    #expect(first.isClosed)
    #expect(throws: LedgerError.self) { try first.read { view in try view.count("Band") } }
    #expect(throws: LedgerError.self) { try first.head }
    var batch = first.makeBatch()
    try batch.stage([["name": "Japan"]], as: "Band")
    #expect(throws: LedgerError.self) { try first.applySynchronously(batch) }
    _ = try second.applySynchronously(batch)
    second.close()
    // With every Ledger closed, the environment is gone: opening again makes a new one.
    let third = try Ledger.open(at: directory.storePath)
    #expect(try third.read { view in try view.count("Band") } == 1)
  }
}
