import Foundation
import JSONLedgerTestSupport
import Testing

@_spi(Replication) @testable import JSONLedger

/// A store opened read-only (`Ledger.Options.readOnly`, as GRDB's `Configuration.readonly`)
/// reads as any other and writes nothing: every write is refused before any work.
@Suite("A store opened read-only")
struct ReadOnlyTests {
  static func model(withGenre: Bool = false) throws -> Model {
    try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("formed", .int64)
        if withGenre { Attribute("genre", .string) }
      }
    }
  }

  static var readOnly: Ledger.Options {
    var options = Ledger.Options()
    options.readOnly = true
    return options
  }

  /// A store of two batches at `directory.storePath`, closed again.
  static func makeStore(_ directory: TemporaryDirectory) throws {
    let ledger = try Ledger.open(at: directory.storePath, model: try model())
    defer { ledger.close() }
    for (name, formed) in [("Japan", 1974), ("Talk Talk", 1981)] {
      var batch = ledger.makeBatch()
      try batch.stage([["name": .string(name), "formed": .number(JSONNumber(formed))]], as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
  }

  static func readSynchronously(_ ledger: Ledger) throws {
    #expect(try ledger.head == 2)
    #expect(try ledger.read { try $0.object("Band", key: "Japan")?["formed"] } == .integer(1974))
    #expect(try ledger.read(asOf: 1) { try $0.count("Band") } == 1)
    _ = try ledger.verify()
  }

  /// - Reliability: A `Ledger` opened read-only: apply, revert, rewind, migrate and compact (sync and async)
  ///   throw `readOnly`, `data.mdb` unchanged; no store is created, no model migrated to
  /// - Size: 7 writes
  @Test(.tags(.reliability)) func readsWhatTheStoreHoldsAndRefusesEveryWriteWithoutWriting() async throws {
    let directory = try TemporaryDirectory()
    try Self.makeStore(directory)
    let data = try Data(contentsOf: URL(fileURLWithPath: directory.storePath + "/data.mdb"))
    let ledger = try Ledger.open(at: directory.storePath, options: Self.readOnly)
    #expect(ledger.isReadOnly)
    try Self.readSynchronously(ledger)
    #expect(try await ledger.read { try $0.count("Band") } == 2)

    var batch = ledger.makeBatch()
    try batch.stage([["name": "Can", "formed": 1968]], as: "Band")
    let staged = batch
    let refusals: [LedgerError?] = [
      #expect(throws: LedgerError.self) { try ledger.applySynchronously(staged) },
      await #expect(throws: LedgerError.self) { try await ledger.apply(staged) },
      #expect(throws: LedgerError.self) { try ledger.revert(2) },
      await #expect(throws: LedgerError.self) { try await ledger.revert(2) },
      #expect(throws: LedgerError.self) { try ledger.rewind(to: 1) },
      #expect(throws: LedgerError.self) { try ledger.migrate(to: try Self.model(withGenre: true)) },
      #expect(throws: LedgerError.self) { try ledger.compact(keepingBatches: 1, archive: nil, discarding: true) },
    ]
    for refusal in refusals {
      #expect(refusal?.code == .readOnly)
      #expect(refusal?.path == directory.storePath)
    }
    #expect(try ledger.head == 2)
    ledger.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: directory.storePath + "/data.mdb")) == data)
  }

  /// A server takes its store anew after a migration (`reopened()`): still read-only.
  @Test func aLedgerTakenAnewStaysReadOnly() throws {
    let directory = try TemporaryDirectory()
    try Self.makeStore(directory)
    let reopened = try Ledger.open(at: directory.storePath, options: Self.readOnly).reopened()
    #expect(reopened.isReadOnly)
    var batch = reopened.makeBatch()
    try batch.stage([["name": "Can", "formed": 1968]], as: "Band")
    let refused = #expect(throws: LedgerError.self) { try reopened.applySynchronously(batch) }
    #expect(refused?.code == .readOnly)
  }

  @Test func neverCreatesAStoreNorMigratesOne() throws {
    let directory = try TemporaryDirectory()
    let missing = #expect(throws: LedgerError.self) {
      try Ledger.open(at: directory.storePath, model: try Self.model(), options: Self.readOnly)
    }
    #expect(missing?.code == .storeNotFound)
    #expect(!FileManager.default.fileExists(atPath: directory.storePath))

    try Self.makeStore(directory)
    let differs = #expect(throws: LedgerError.self) {
      try Ledger.open(
        at: directory.storePath, model: try Self.model(withGenre: true), options: Self.readOnly, migration: .automatic)
    }
    #expect(differs?.code == .modelDiffers)
    let ledger = try Ledger.open(at: directory.storePath)
    #expect(ledger.modelVersion == 1)
  }

  @Test func aProcessHoldsAStoreEitherReadOnlyOrForWritingNotBoth() throws {
    let directory = try TemporaryDirectory()
    try Self.makeStore(directory)
    let writable = try Ledger.open(at: directory.storePath)
    let refused = #expect(throws: LedgerError.self) {
      try Ledger.open(at: directory.storePath, options: Self.readOnly)
    }
    #expect(refused?.code == .invalidArgument)
    #expect(refused?.path == directory.storePath)
    #expect(refused?.message.contains("open for writing") == true, "\(String(describing: refused))")
    writable.close()

    let reader = try Ledger.open(at: directory.storePath, options: Self.readOnly)
    let other = #expect(throws: LedgerError.self) { try Ledger.open(at: directory.storePath) }
    #expect(other?.message.contains("read-only") == true, "\(String(describing: other))")
    #expect(try reader.head == 2)
  }
}
