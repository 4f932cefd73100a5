import Foundation
import JSONLedgerTestSupport
import LMDB
import Testing

@testable import JSONLedger

@Suite("Reliability: corruption, limits, concurrency")
struct ReliabilityTests {
  static let model: Model = HistoryPropertyTests.model

  func filledLedger(_ directory: TemporaryDirectory, batches: Int = 3) throws -> Ledger {
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    for index in 0..<batches {
      var batch = ledger.makeBatch()
      try batch.stage([["name": .string("album \(index)"), "label": "Virgin", "band": "Japan"]], as: "Album")
      _ = try ledger.applySynchronously(batch)
    }
    return ledger
  }

  /// - Reliability: A byte flipped in a stored record is reported with its batch id (`verify`, `show`)
  /// - Size: 3 batches
  @Test(.tags(.reliability)) func aFlippedByteInAStoredRecordIsReportedWithItsBatchID() throws {
    let directory = try TemporaryDirectory()
    let ledger = try filledLedger(directory)
    try ledger.environment.write { txn in
      var bytes = try #require(try txn.value(forKey: StoreKeys.batch(2), in: ledger.layout.log))
      bytes[bytes.count / 2] ^= 0x5A
      try txn.put(bytes, forKey: StoreKeys.batch(2), in: ledger.layout.log)
    }
    #expect {
      try ledger.verify()
    } throws: { error in
      if let error = error as? LedgerError, error.code == .corruptRecord, error.batchID == 2 {
        return error.message.contains("checksum")
      }
      return false
    }
    #expect(throws: LedgerError.self) { try ledger.record(2) }
  }

  /// - Reliability: A byte flipped in `data.mdb` on disk, in every copy of the record
  /// - Size: 3 batches
  @Test(.tags(.reliability)) func aFlippedByteInTheDataFileIsDetected() throws {
    let directory = try TemporaryDirectory()
    let record: [UInt8]
    do {
      let ledger = try filledLedger(directory)
      record = try #require(
        try ledger.environment.read { txn in try txn.value(forKey: StoreKeys.batch(2), in: ledger.layout.log) })
    }
    let file = directory.storePath + "/data.mdb"
    var data = try Data(contentsOf: URL(fileURLWithPath: file))
    // Copy-on-write leaves older copies of a page behind: flip the byte in every copy.
    var search = data.startIndex
    var flipped = 0
    while let range = data.range(of: Data(record), in: search..<data.endIndex) {
      data[range.lowerBound + record.count / 2] ^= 0xFF
      search = range.upperBound
      flipped += 1
    }
    #expect(flipped >= 1)
    try data.write(to: URL(fileURLWithPath: file))
    let reopened = try Ledger.open(at: directory.storePath)
    #expect {
      try reopened.verify()
    } throws: { error in
      if let error = error as? LedgerError, error.code == .corruptRecord, error.batchID == 2 { return true }
      return false
    }
  }

  /// - Reliability: A projection or index entry tampered with is named by `verify`
  /// - Size: 3 batches
  @Test(.tags(.reliability)) func projectionTamperingIsFoundByVerify() throws {
    let directory = try TemporaryDirectory()
    let ledger = try filledLedger(directory)
    try ledger.environment.write { txn in
      let id = try #require(try txn.withCursor(on: ledger.layout.state) { cursor in try cursor.first() }?.key)
      try txn.put([0, 0], forKey: id, in: ledger.layout.state)
    }
    #expect {
      try ledger.verify()
    } throws: { error in "\(error)".contains("state differs from the replay at object ") }
  }

  /// - Reliability: A store of a newer format version, or of the earlier formats 1 and 2, says so plainly; one of
  ///   format 3 names `jsonledger upgrade`
  /// - Size: 3 versions
  @Test(
    .tags(.reliability),
    arguments: [
      // The newest format this library reads is a migrated store's.
      (
        UInt32(99),
        "format version 99, newer than this library supports (\(Ledger.formatVersion)); use a newer JSONLedger"
      ),
      (
        UInt32(1),
        "format version 1, older than any this library upgrades (3); it reads format \(Ledger.formatVersion) only: export the data"
      ),
      (
        UInt32(2),
        "format version 2, older than any this library upgrades (3); it reads format \(Ledger.formatVersion) only: export the data"
      ),
    ] as [(UInt32, String)])
  func aStoreOfAnotherFormatSaysSoPlainly(version: UInt32, message: String) throws {
    let directory = try TemporaryDirectory()
    do {
      let ledger = try filledLedger(directory, batches: 1)
      try ledger.environment.write { txn in
        try txn.put([UInt8](bigEndian: version), forKey: MetaKey.format, in: ledger.layout.meta)
      }
    }
    #expect {
      try Ledger.open(at: directory.storePath)
    } throws: { error in "\(error)".contains(message) }
  }

  /// - Reliability: A file, or a directory holding other files, is refused without writing into it
  /// - Size: —
  @Test(.tags(.reliability)) func aFileOrAForeignDirectoryIsNotAStore() throws {
    let directory = try TemporaryDirectory()
    let file = directory.path + "/file"
    try Data("x".utf8).write(to: URL(fileURLWithPath: file))
    #expect(throws: LedgerError.self) { try Ledger.open(at: file, model: Self.model) }
    let foreign = directory.path + "/foreign"
    try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
    try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: foreign + "/data.mdb"))
    #expect(throws: LedgerError.self) { try Ledger.open(at: foreign, model: Self.model) }
    #expect(try FileManager.default.contentsOfDirectory(atPath: foreign) == ["data.mdb"])
  }

  /// A writer killed while it creates a store (the crash test's first trial can be) leaves an
  /// LMDB file with empty databases, an empty data.mdb or only a lock file: opening it with
  /// the model finishes the creation; without one, the error says what happened.
  ///
  /// - Reliability: A store whose creation was cut short (killed after LMDB made its file, before the first
  ///   commit) is finished by the next open with its model; without a model the error says so
  /// - Size: —
  @Test(.tags(.reliability)) func aStoreWhoseCreationWasCutShortIsFinishedByTheNextOpen() throws {
    let directory = try TemporaryDirectory()
    let unfinished = directory.path + "/unfinished"
    try FileManager.default.createDirectory(atPath: unfinished, withIntermediateDirectories: true)
    do {
      let environment = try Environment(path: unfinished)
      _ = try StoreLayout(environment: environment)
    }
    #expect {
      try Ledger.open(at: unfinished)
    } throws: { error in
      guard let error = error as? LedgerError, error.code == .notAStore else { return false }
      let reason = error.message
      return reason.contains("creation was cut short")
    }
    let ledger = try Ledger.open(at: unfinished, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Tin Drum"]], as: "Album")
    #expect(try ledger.applySynchronously(batch).created == 1)
    #expect(try Ledger.open(at: unfinished).head == 1)

    let empty = directory.path + "/empty-file"
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: empty + "/data.mdb", contents: Data()))
    #expect(try Ledger.open(at: empty, model: Self.model).head == 0)

    // LMDB makes its lock file before its data file: a writer killed between the two leaves
    // lock.mdb alone.
    let lockOnly = directory.path + "/lock-only"
    try FileManager.default.createDirectory(atPath: lockOnly, withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: lockOnly + "/lock.mdb", contents: Data(count: 8_192)))
    #expect {
      try Ledger.open(at: lockOnly)
    } throws: { error in (error as? LedgerError)?.code == .storeNotFound }
    #expect(try Ledger.open(at: lockOnly, model: Self.model).head == 0)
    #expect(try Ledger.open(at: lockOnly).head == 0)
  }

  /// - Reliability: Keys longer than LMDB's 511-byte limit (2,000-character string identities)
  /// - Size: 2 objects
  @Test(.tags(.reliability)) func keysLongerThanLMDBsLimitWork() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let prefix = String(repeating: "k", count: 2_000)
    var batch = ledger.makeBatch()
    try batch.stage(
      [["name": .string(prefix + "1"), "label": "one"], ["name": .string(prefix + "2"), "label": "two"]], as: "Album")
    _ = try ledger.applySynchronously(batch)
    #expect(
      try ledger.read { view in try view.object("Album", key: .string(prefix + "2"))?["label"] } == .string("two"))
    #expect(try ledger.read { view in try view.count("Album") } == 2)
    #expect(try ledger.verify().batches == 1)
    // Imported again (skipped by fingerprint), then changed: the long keys' entries are rewritten.
    #expect(try ledger.applySynchronously(batch).unchanged == 2)
    var relabel = ledger.makeBatch()
    try relabel.stage([["name": .string(prefix + "2"), "label": "three"]], as: "Album")
    #expect(try ledger.applySynchronously(relabel).updated == 1)
    #expect(
      try ledger.read { view in try view.object("Album", key: .string(prefix + "2"))?["label"] } == .string("three"))
    #expect(try ledger.verify().batches == 2)
  }

  /// - Reliability: A to-many of 100,000 targets
  /// - Size: 1 batch; last by hand: 8 s, debug build
  @Test(.tags(.reliability)) func aToManyOfOneHundredThousandTargets() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "A", "albums": .array((0..<100_000).map { .string("a\($0)") })]], as: "Band")
    _ = try ledger.applySynchronously(batch)
    #expect(try ledger.read { view in try view.object("Band", key: "A")?.relationships["albums"]?.count } == 100_000)
    #expect(try ledger.read { view in try view.count("Album") } == 100_000)
  }

  /// - Reliability: JSON nested 1,000 levels, stored in a `json` attribute and exported; 5,000 levels is an
  ///   error, not a crash
  /// - Size: —
  @Test(.tags(.reliability)) func aJSONValueNestedAThousandLevelsIsStoredAndExported() throws {
    let model = try Model {
      Entity("Doc", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("body", .json)
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    let deep = String(repeating: "[", count: 1_000) + "1" + String(repeating: "]", count: 1_000)
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(("[{\"id\": 1, \"body\": " + deep + "}]").utf8), as: "Doc")
    _ = try ledger.applySynchronously(batch)
    let exported = try ledger.read { view in try view.exportJSON("Doc") }
    #expect(JSONWriter().string(from: exported).contains(deep))
    #expect(try ledger.verify().batches == 1)
  }

  /// - Reliability: A 10 MB string field
  /// - Size: 1 object
  @Test(.tags(.reliability)) func aTenMegabyteStringAndAToManyOfTenThousand() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "big", "label": .string(String(repeating: "x", count: 10 << 20))]], as: "Album")
    try batch.stage([["name": "A", "albums": .array((0..<10_000).map { .string("a\($0)") })]], as: "Band")
    _ = try ledger.applySynchronously(batch)
    try ledger.read { view throws in
      #expect(try view.object("Album", key: "big")?["label"] == .string(String(repeating: "x", count: 10 << 20)))
      #expect(try view.object("Band", key: "A")?.relationships["albums"]?.count == 10_000)
    }
  }

  @Test func transactionsRefuseUseAfterTheirClosure() throws {
    let directory = try TemporaryDirectory()
    let ledger = try filledLedger(directory, batches: 1)
    let escaped = try ledger.environment.read { txn in txn }
    #expect(throws: LMDBError.self) { try escaped.value(forKey: StoreKeys.batch(1), in: ledger.layout.log) }
  }

  /// - Reliability: Four reader tasks during 40 writes never see two batches mixed; reader slots are released
  /// - Size: 50 objects × 40 batches
  @Test(.tags(.reliability)) func concurrentReadersAlwaysSeeWholeBatches() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    let names = (0..<50).map { JSONValue.string("album \($0)") }
    let writer = Task.detached {
      for round in 0..<40 {
        var batch = ledger.makeBatch()
        try batch.stage(.array(names.map { ["name": $0, "label": .string("round \(round)")] }), as: "Album")
        _ = try await ledger.apply(batch)
      }
    }
    let readers = (0..<4).map { _ in
      Task.detached { () -> Int in
        var mixed = 0
        for _ in 0..<60 {
          let labels = try await ledger.read { view in Set(try view.objects("Album").compactMap { $0["label"] }) }
          if labels.count > 1 { mixed += 1 }
        }
        return mixed
      }
    }
    try await writer.value
    for reader in readers { #expect(try await reader.value == 0) }
    #expect(try ledger.environment.info().readersInUse <= 4 + 1)
  }
}
