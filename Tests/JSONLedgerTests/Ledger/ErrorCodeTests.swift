import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Errors as data: every failure a caller may branch on has a code and the facts as fields,
/// so that a tool or an HTTP route acts on it without reading the words.
@Suite("Errors carry a code and their place")
struct ErrorCodeTests {
  static func model() throws -> Model {
    try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("formed", .int64)
      }
    }
  }

  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    try Ledger.open(at: directory.storePath, model: try model())
  }

  @Test func aCodeIsMatchedInACatchClauseAsGRDBsResultCodesAre() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Japan"]], as: "Band")
    _ = try ledger.applySynchronously(batch)
    var matched = false
    do {
      _ = try ledger.applySynchronously(batch, expectedHead: 0)
    } catch LedgerError.Code.headMoved {
      matched = true
    }
    #expect(matched)
    let moved = #expect(throws: LedgerError.self) { try ledger.applySynchronously(batch, expectedHead: 0) }
    #expect(moved?.expectedHead == 0)
    #expect(moved?.head == 1)
  }

  @Test func readsNameTheEntityKeyAndBatchTheyMissed() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let unknown = #expect(throws: LedgerError.self) { try ledger.read { try $0.objects("band") } }
    #expect(unknown?.code == .unknownEntity)
    #expect(unknown?.entity == "band")
    #expect(unknown?.known == ["Band"])
    let missing = #expect(throws: LedgerError.self) { try ledger.record(3) }
    #expect(missing?.code == .batchNotFound)
    #expect(missing?.batchID == 3)
    #expect(missing?.head == 0)
    let badKey = #expect(throws: LedgerError.self) {
      try ledger.read { try $0.object("Band", key: ["a", "b"] as JSONValue) }
    }
    #expect(badKey?.code == .invalidKey)
    #expect(badKey?.entity == "Band")
    let badQuery = #expect(throws: LedgerError.self) {
      try ledger.read { try $0.count(Query("Band", where: "nothing", .equals(1))) }
    }
    #expect(badQuery?.code == .invalidQuery)
    #expect(badQuery?.entity == "Band")
  }

  @Test func aBadPayloadCarriesEveryProblemAndABadFileItsPath() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Japan", "formed": "soon"], ["formed": 1]], as: "Band")
    let refused = #expect(throws: LedgerError.self) { try ledger.applySynchronously(batch) }
    #expect(refused?.code == .invalidPayload)
    #expect(refused?.mapping?.problems.map(\.path) == ["[0].formed", "[1]"])
    var other = ledger.makeBatch()
    let unreadable = #expect(throws: LedgerError.self) {
      try other.stage(fileAt: directory.path + "/absent.json", as: "Band")
    }
    #expect(unreadable?.code == .unreadableFile)
    #expect(unreadable?.path == directory.path + "/absent.json")
    #expect(try ledger.head == 0)
  }

  @Test func aRefusedRevertIsALedgerErrorWithItsConflictsAsData() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    for formed in [1970, 1971] {
      var batch = ledger.makeBatch()
      try batch.stage([["name": "Japan", "formed": .number(JSONNumber(formed))]], as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    let refused = #expect(throws: LedgerError.self) { try ledger.revert(1) }
    #expect(refused?.code == .revertConflicts)
    #expect(refused?.batchID == 1)
    #expect(refused?.conflicts.count == 1)
    _ = try ledger.revert(2)
    let again = #expect(throws: LedgerError.self) { try ledger.revert(2) }
    #expect(again?.code == .alreadyReverted)
    #expect(again?.alreadyRevertedBy == 3)
  }

  @Test func aChunkedImportThatStopsKeepsItsCause() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let file = directory.path + "/bands.json"
    try #"[{"name": "a"}, {"name": "b"}, {"name": "c", "formed": "x"}]"#.write(
      toFile: file, atomically: true, encoding: .utf8)
    let stopped = #expect(throws: LedgerError.self) { try ledger.importFile(at: file, entity: "Band", chunkSize: 2) }
    #expect(stopped?.code == .importStopped)
    #expect(stopped?.failedPart == 2)
    #expect(stopped?.appliedBatches == [1])
    #expect(stopped?.cause?.code == .invalidPayload)
  }

  @Test func anEmptyIdempotencyKeyIsACallersMistakeNotAStorageFailure() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Japan"]], as: "Band")
    let refused = #expect(throws: LedgerError.self) { try ledger.applySynchronously(batch, idempotencyKey: "") }
    #expect(refused?.code == .invalidArgument)
    #expect(try ledger.head == 0)
  }

  @Test func codesAreStableStringsAndMessagesNeverNameTheCommandLineTool() throws {
    #expect(LedgerError.Code.headMoved.rawValue == "headMoved")
    #expect(LedgerError.Code(rawValue: "objectNotFound") == .objectNotFound)
    let samples: [LedgerError] = [
      .storeNotFound(path: "/s"), .unsupportedFormat(path: "/s", found: 3, supported: 5),
      .modelDiffers(path: "/s", differences: []), .batchArchived(2, firstBatch: 4),
      .upgradeInterrupted(path: "/s", keptPath: "/s.format3"),
      .importStopped(file: "f", failedPart: 2, appliedBatches: [1], reason: .invalidArgument("x")),
      .replicaWrite(path: "/s", source: "postgres://h/db"), .revertConflicts(batchID: 1, conflicts: []),
    ]
    for error in samples {
      #expect(!error.message.contains("jsonledger "), "\(error.code)")
      #expect(!error.message.contains("--"), "\(error.code)")
    }
    #expect(samples[1].code == .upgradeNeeded)
    #expect(samples[1].formatVersion == 3)
  }
}
