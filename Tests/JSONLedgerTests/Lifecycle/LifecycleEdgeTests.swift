import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Regression tests for the lifecycle commands at their edges (reliability, round three):
/// each names its finding.
@Suite("Lifecycle edges: compaction horizons, renames, archives, backups")
struct LifecycleEdgeTests {
  static let model = try! Model(
    json: JSONParser.parse(
      #"""
      {"entities": {
        "Disc": {"identity": "name", "attributes": {"name": "string", "label": "string", "year": "string"}}
      }}
      """#))

  /// A store with `batches` batches, each updating every disc's label and adding one disc.
  static func store(_ path: String, batches: Int = 10) throws -> Ledger {
    let ledger = try Ledger.open(at: path, model: model)
    for round in 1...batches {
      var batch = ledger.makeBatch()
      var discs: [JSONValue] = (0..<4).map { index in
        ["name": .string("disc \(index)"), "label": .string("label \(round)"), "year": .string("\(1970 + index)")]
      }
      discs.append(["name": .string("extra \(round)"), "label": .string("label \(round)")])
      try batch.stage(.array(discs), as: "Disc")
      _ = try ledger.applySynchronously(batch)
    }
    return ledger
  }

  static func values(_ ledger: Ledger, _ attribute: String) throws -> [String: String] {
    try ledger.read { view in
      var values: [String: String] = [:]
      for object in try view.objects(ledger.model.entities[0].name) {
        values[object.key.identity.first?.keyText ?? ""] = object[attribute]?.keyText
      }
      return values
    }
  }

  // MARK: G2, G20

  @Test func rewindToABatchBeforeTheCompactionHorizonIsRefusedAndDeletesNothing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath)
    _ = try ledger.compact(keepingBatches: 3, archive: directory.path + "/archive")
    let before = try Self.values(ledger, "label")
    for target in [0, 5, 6] as [UInt64] {
      #expect {
        try ledger.rewind(to: target)
      } throws: { error in
        if let error = error as? LedgerError, error.code == .batchArchived { return error.firstBatch == 7 }
        return target == 0 && "\(error)".contains("batches 7 to 10")
      }
    }
    #expect(try ledger.head == 10)
    #expect(try Self.values(ledger, "label") == before)
    // The horizon itself is a state the log holds.
    _ = try ledger.rewind(to: 7)
    #expect(try Self.values(ledger, "label")["disc 0"] == "label 7")
    _ = try ledger.verify()
  }

  @Test func aBatchOutsideACompactedLogIsNamedWithTheBatchesTheLogHolds() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 8)
    _ = try ledger.compact(keepingBatches: 4, archive: directory.path + "/archive")
    #expect {
      try ledger.read(asOf: 0) { _ in }
    } throws: { error in
      "\(error)".contains("the log holds batches 4 to 8")
    }
    #expect {
      try ledger.record(9)
    } throws: { error in
      "\(error)".contains("the log holds batches 4 to 8")
    }
    #expect {
      try ledger.diff(from: 2, to: 8)
    } throws: { error in
      if let error = error as? LedgerError, error.code == .batchArchived, error.batchID == 2, error.firstBatch == 4 {
        return true
      }
      return false
    }
  }

  // MARK: G17

  @Test func aCompactWithNothingToCompactNamesNoArchive() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 2)
    let archive = directory.path + "/archive"
    let report = try ledger.compact(keepingBatches: 5, archive: archive)
    #expect(report.archivedBatches == 0)
    #expect(report.archivePath == nil)
    #expect(!FileManager.default.fileExists(atPath: archive))
  }

  // MARK: G3

  @Test func aModelWithNoEntitiesIsAnError() throws {
    #expect(throws: ModelError.self) { try Model(json: JSONParser.parse(#"{"entities": {}}"#)) }
    #expect(throws: ModelError.self) { try Model(entities: []) }
  }

  @Test func aMigrationThatRemovesEntitiesHoldingObjectsNeedsRemovalsAllowed() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 2)
    let next = try Model(
      json: JSONParser.parse(#"{"entities": {"Tag": {"identity": "name", "attributes": {"name": "string"}}}}"#))
    let plan = try ledger.migrationPlan(to: next)
    #expect(plan.removedEntities == ["Disc"])
    #expect(try ledger.objectsRemoved(by: plan).map(\.objects) == [6])
    ledger.close()
    #expect {
      try Ledger.migrate(at: directory.storePath, to: next)
    } throws: { error in
      "\(error)".contains("Disc: removed, with 6 live objects")
    }
    let reopened = try Ledger.open(at: directory.storePath)
    #expect(try reopened.head == 2)
    #expect(try Self.values(reopened, "label").count == 6)
    reopened.close()
    let report = try Ledger.migrate(at: directory.storePath, to: next, allowingRemovals: true)
    #expect(report.batchID == 3)
  }

  // MARK: G7, G16

  static func discModel(_ attributes: String, entity: String = "Disc", renamedFrom: String? = nil) throws -> Model {
    let note = renamedFrom.map { #", "renamedFrom": "\#($0)""# } ?? ""
    return try Model(
      json: JSONParser.parse(
        #"{"entities": {"\#(entity)": {"identity": "name"\#(note), "attributes": {\#(attributes)}}}}"#))
  }

  @Test func twoAttributesRenamedFromOneAreRefused() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 1)
    let next = try Self.discModel(
      #""name": "string", "publisher": {"type": "string", "renamedFrom": "label"}, "imprint": {"type": "string", "renamedFrom": "label"}, "year": "string""#
    )
    #expect {
      try ledger.migrationPlan(to: next)
    } throws: { error in
      "\(error)".contains("publisher and imprint would each continue label")
    }
  }

  @Test func twoEntitiesRenamedFromOneAreRefused() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 1)
    let next = try Model(
      json: JSONParser.parse(
        #"""
        {"entities": {
          "Record": {"identity": "name", "renamedFrom": "Disc", "attributes": {"name": "string", "label": "string", "year": "string"}},
          "Album": {"identity": "name", "renamedFrom": "Disc", "attributes": {"name": "string", "label": "string", "year": "string"}}
        }}
        """#))
    #expect {
      try ledger.migrationPlan(to: next)
    } throws: { error in
      "\(error)".contains("Record and Album would each continue Disc")
    }
    // An entity of the old name beside one renamed from it is just as ambiguous.
    let both = try Model(
      json: JSONParser.parse(
        #"""
        {"entities": {
          "Disc": {"identity": "name", "attributes": {"name": "string"}},
          "Record": {"identity": "name", "renamedFrom": "Disc", "attributes": {"name": "string", "label": "string", "year": "string"}}
        }}
        """#))
    #expect(throws: LedgerError.self) { try ledger.migrationPlan(to: both) }
  }

  /// - Reliability: `renamedFrom`: a swap of two names, a rename onto a removed name, two elements claiming
  ///   one; text that differs only in Unicode normalisation is a change, stored as sent
  /// - Size: 6 cases
  @Test(.tags(.reliability)) func swappedNamesFollowTheirNotes() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 2)
    let labels = try Self.values(ledger, "label")
    let years = try Self.values(ledger, "year")
    ledger.close()
    let swapped = try Self.discModel(
      #""name": "string", "label": {"type": "string", "renamedFrom": "year"}, "year": {"type": "string", "renamedFrom": "label"}"#
    )
    _ = try Ledger.migrate(at: directory.storePath, to: swapped)
    let migrated = try Ledger.open(at: directory.storePath)
    #expect(try Self.values(migrated, "label") == years)
    #expect(try Self.values(migrated, "year") == labels)
    _ = try migrated.verify()
    // Opening with the same model again is no migration: the notes were followed once.
    migrated.close()
    #expect(try Ledger.migrate(at: directory.storePath, to: swapped).batchID == nil)
  }

  @Test func aRenameOntoARemovedNameKeepsTheValues() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 2)
    let years = try Self.values(ledger, "year")
    ledger.close()
    let next = try Self.discModel(#""name": "string", "label": {"type": "string", "renamedFrom": "year"}"#)
    _ = try Ledger.migrate(at: directory.storePath, to: next)
    let migrated = try Ledger.open(at: directory.storePath)
    #expect(try Self.values(migrated, "label") == years)
  }

  // MARK: G8

  @Test func canonicallyEquivalentTextIsAChangeAndKeepsTheBackendsBytes() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    func apply(_ objects: [JSONValue]) throws -> BatchSummary {
      var batch = ledger.makeBatch()
      for object in objects { try batch.stage(object, as: "Disc") }
      return try ledger.applySynchronously(batch)
    }
    _ = try apply([["name": "a", "label": .string("e\u{301}")]])
    let update = try apply([["name": "a", "label": .string("\u{E9}")]])
    #expect(update.updated == 1)
    let stored = try ledger.read { view in try view.object("Disc", key: "a")?["label"]?.keyText }
    #expect(stored.map { Array($0.utf8) } == Array("\u{E9}".utf8))
    // One batch naming the object twice: the last value wins, and the record gives the state.
    _ = try apply([["name": "a", "label": "zz"], ["name": "a", "label": .string("e\u{301}")]])
    let last = try ledger.read { view in try view.object("Disc", key: "a")?["label"]?.keyText }
    #expect(last.map { Array($0.utf8) } == Array("e\u{301}".utf8))
    _ = try ledger.verify()
  }

  /// A value equal to an identity value is stored as a reference to it: only when the bytes
  /// are the same, not for canonically equivalent text.
  @Test func aValueLikeTheIdentityReadsBackWithItsOwnBytes() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage(["name": .string("\u{E9}"), "label": .string("e\u{301}")], as: "Disc")
    try batch.stage(["name": "b", "label": "b"], as: "Disc")
    _ = try ledger.applySynchronously(batch)
    let (accented, plain) = try ledger.read { view in
      (
        try view.object("Disc", key: "\u{E9}")?["label"]?.keyText, try view.object("Disc", key: "b")?["label"]?.keyText
      )
    }
    #expect(accented.map { Array($0.utf8) } == Array("e\u{301}".utf8))
    #expect(plain == "b")
    _ = try ledger.verify()
  }

  @Test func attributeValuesCompareAndHashByTheirBytes() {
    let composed = AttributeValue.string("\u{E9}")
    let decomposed = AttributeValue.string("e\u{301}")
    #expect(composed != decomposed)
    #expect(Set([composed, decomposed]).count == 2)
    #expect(composed == .string("\u{E9}"))
  }

  // MARK: G9, G10

  /// A compacted store's archive, as bytes, with the store it came from.
  static func archive(in directory: TemporaryDirectory) throws -> (path: String, bytes: [UInt8]) {
    let ledger = try store(directory.storePath, batches: 6)
    let path = directory.path + "/archive"
    _ = try ledger.compact(keepingBatches: 2, archive: path)
    return (path, Array(try Data(contentsOf: URL(fileURLWithPath: path))))
  }

  /// The offsets where the archive's records start, and where its end marker starts.
  static func recordOffsets(_ bytes: [UInt8]) -> [Int] {
    var position = LogArchive.magic.count
    let modelLength = Int(UInt32(bigEndianBytes: bytes[position..<position + 4]))
    position += 4 + modelLength + 4
    var offsets: [Int] = []
    while position < bytes.count {
      offsets.append(position)
      if UInt64(bigEndianBytes: bytes[position..<position + 8]) == .max { break }
      position += 12 + Int(UInt32(bigEndianBytes: bytes[position + 8..<position + 12]))
    }
    return offsets
  }

  static func restoreFails(_ bytes: [UInt8], in directory: TemporaryDirectory, _ name: String) throws -> String? {
    let path = directory.path + "/" + name
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let target = directory.path + "/restored-" + name
    do {
      _ = try Ledger.restoreLog(from: path, to: target)
      return nil
    } catch {
      #expect(!FileManager.default.fileExists(atPath: target), "\(name) left a store behind")
      #expect(!FileManager.default.fileExists(atPath: target + ".restoring"), "\(name) left a build behind")
      return "\(error)"
    }
  }

  /// - Reliability: Archives cut at every record boundary, missing their first record, with a byte after the
  ///   end, or with one bit of the model flipped: refused, nothing left at the target
  /// - Size: 8 archives
  @Test(.tags(.reliability)) func anArchiveCutShortOrMissingARecordIsRefused() throws {
    let directory = try TemporaryDirectory()
    let (_, bytes) = try Self.archive(in: directory)
    let offsets = Self.recordOffsets(bytes)
    #expect(offsets.count == 5)  // batches 1 to 4 and the end
    for (index, offset) in offsets.enumerated() {
      let message = try Self.restoreFails(Array(bytes[..<offset]), in: directory, "cut-\(index)")
      #expect(message?.contains("not a whole log archive") == true, "cut at record \(index): \(message ?? "restored")")
    }
    let withoutFirst = Array(bytes[..<offsets[0]] + bytes[offsets[1]...])
    let message = try Self.restoreFails(withoutFirst, in: directory, "without-first")
    #expect(message?.contains("not a whole log archive") == true, "\(message ?? "restored")")
    let trailing = try Self.restoreFails(bytes + [0], in: directory, "trailing")
    #expect(trailing?.contains("bytes follow its end") == true, "\(trailing ?? "restored")")
    // The whole archive restores.
    #expect(try Self.restoreFails(bytes, in: directory, "whole") == nil)
  }

  @Test func aFlippedBitInTheArchivesModelIsRefused() throws {
    let directory = try TemporaryDirectory()
    let (_, bytes) = try Self.archive(in: directory)
    let text = Array("\"label\"".utf8)
    let index = try #require(
      (0..<bytes.count - text.count).first { bytes[$0..<$0 + text.count].elementsEqual(text) })
    var flipped = bytes
    flipped[index + 3] ^= 0x02  // label → lafel
    let message = try Self.restoreFails(flipped, in: directory, "flipped")
    #expect(message?.contains("model does not match its checksum") == true, "\(message ?? "restored")")
  }

  // MARK: G24

  @Test func anUnreadableArchiveSaysWhy() throws {
    let directory = try TemporaryDirectory()
    let missing = directory.path + "/missing"
    #expect {
      try Ledger.restoreLog(from: missing, to: directory.path + "/a")
    } throws: { "\($0)".contains("No such file or directory") }
    #expect {
      try Ledger.restoreLog(from: directory.path, to: directory.path + "/b")
    } throws: { "\($0)".contains("it is a directory") }
  }

  // MARK: G23

  @Test func systemErrorsAreToldInPlainWords() {
    #expect(SystemError.describe(CocoaError(.fileWriteOutOfSpace)) == "No space left on device")
    #expect(SystemError.describe(POSIXError(.EACCES)) == "Permission denied")
    #expect(SystemError.describe(StoredModelFailure(reason: "model.2 is not JSON")) == "model.2 is not JSON")
    #expect(!SystemError.describe(CocoaError(.fileReadUnknown)).contains("NSCocoaErrorDomain"))
  }

  // MARK: G18, G20

  @Test func aBackupInsideTheStoreIsRefused() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 1)
    for destination in [directory.storePath + "/copy", directory.storePath + "/../store/copy", directory.storePath] {
      #expect(throws: LedgerError.self) { try ledger.backup(to: destination) }
    }
    #expect(!FileManager.default.fileExists(atPath: directory.storePath + "/copy"))
  }

  @Test func aBackupOfACompactedStoreNamesTheBatchesItHolds() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.store(directory.storePath, batches: 6)
    _ = try ledger.compact(keepingBatches: 2, archive: directory.path + "/archive")
    let report = try ledger.backup(to: directory.path + "/copy")
    #expect(report.firstBatch == 4)
    #expect(report.head == 6)
    #expect(report.damage == nil)
  }

  // MARK: G14

  @Test func loadingAModelIsLinearInItsEntities() throws {
    // 20,000 entities, each a child of the one before in runs of 10: quadratic loading took
    // minutes at this size (4.9 s at 2,000).
    var entities: [Entity] = []
    for index in 0..<20_000 {
      entities.append(
        Entity(
          "E\(index)", identity: index % 10 == 0 ? ["id"] : [], parent: index % 10 == 0 ? nil : "E\(index - 1)",
          attributes: index % 10 == 0 ? [Attribute("id", .int64)] : [Attribute("a\(index)", .string)]))
    }
    let start = ContinuousClock.now
    let model = try Model(entities: entities)
    let next = try model.followed(by: Model(entities: entities.reversed()))
    _ = try MigrationPlan(from: model, to: next)
    #expect(ContinuousClock.now - start < .seconds(60))
  }
}

@Suite("Errors in an app's words")
struct LocalizedErrorTests {
  @Test func localizedDescriptionIsTheLibrarysSentence() throws {
    let directory = try TemporaryDirectory()
    let errors: [any Error] = [
      LedgerError.storeNotFound(path: directory.storePath),
      ModelError(problems: [.init(place: "entities", reason: "a model needs at least one entity")]),
      LedgerError.alreadyReverted(batchID: 3, by: 4),
    ]
    for error in errors {
      #expect(error.localizedDescription == "\(error)")
      #expect(!error.localizedDescription.contains("could not be completed"))
    }
  }
}

@Suite("A time stands for a batch")
struct BatchAtTimeTests {
  @Test func theLastBatchAtOrBeforeATimeIsTheOneAppliedThen() throws {
    let directory = try TemporaryDirectory()
    let ledger = try LifecycleEdgeTests.store(directory.storePath, batches: 3)
    let times = try (1...3).map { try ledger.record($0).time }
    #expect(try ledger.lastBatch(atOrBefore: times[2]) == 3)
    #expect(try ledger.lastBatch(atOrBefore: times[0]) == 1)
    #expect(try ledger.lastBatch(atOrBefore: times[0].addingTimeInterval(-1)) == nil)
    #expect(try ledger.lastBatch(atOrBefore: .distantFuture) == 3)
    _ = try ledger.compact(keepingBatches: 1, archive: directory.path + "/archive")
    #expect(throws: LedgerError.self) { try ledger.lastBatch(atOrBefore: times[0].addingTimeInterval(-1)) }
  }
}

@Suite("A revert that keeps later work")
struct RevertKeepingLaterTests {
  @Test func onlyWhatNoLaterBatchChangedIsRevertedAndTheRestIsListed() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: LifecycleEdgeTests.model)
    func apply(_ json: String) throws {
      var batch = ledger.makeBatch()
      try batch.stage(try JSONParser.parse(json), as: "Disc")
      _ = try ledger.applySynchronously(batch)
    }
    try apply(#"[{"name": "a", "label": "Virgin", "year": "1981"}]"#)
    // The bad batch: both fields wrong, and a disc created.
    try apply(#"[{"name": "a", "label": "oops", "year": "0000"}, {"name": "b", "label": "oops"}]"#)
    // A later webhook fixed the label and touched the new disc.
    try apply(#"[{"name": "a", "label": "Hansa"}, {"name": "b", "year": "1982"}]"#)
    let refused = #expect(throws: LedgerError.self) { try ledger.revert(2) }

    #expect(refused?.code == .revertConflicts)
    let result = try ledger.revert(2, keepingLaterChanges: true)
    let values = try ledger.read { view in
      (try view.object("Disc", key: "a").map { [$0["label"]?.keyText, $0["year"]?.keyText] }, try view.count("Disc"))
    }
    #expect(values.0 == ["Hansa", "1981"])  // the later label kept, the year reverted
    #expect(values.1 == 2)  // b, which a later batch changed, stays
    #expect(Set(result.kept.map(\.field)) == ["label", "(object)"])
    #expect(result.overridden.isEmpty)
    #expect(throws: LedgerError.self) { try ledger.revert(2, force: true, keepingLaterChanges: true) }
    _ = try ledger.verify()
  }
}

@Suite("Printed values say what a user reads")
struct PrintedValuesTests {
  @Test func aLogEntryAndADiffPrintWithoutInternalIDs() throws {
    let directory = try TemporaryDirectory()
    let ledger = try LifecycleEdgeTests.store(directory.storePath, batches: 2)
    let entry = try #require(try ledger.log(limit: 1).first)
    #expect("\(entry)".hasPrefix("batch 2  "))
    #expect("\(entry)".contains("import  1 created, 4 updated, 0 deleted, 0 unchanged"), "\(entry)")
    let diff = try ledger.diff(from: 1, to: 2)
    let text = "\(diff)"
    #expect(text.hasPrefix("diff from batch 1 to batch 2: 1 created, 4 updated, 0 deleted"), "\(text)")
    #expect(text.contains("Disc \"disc 0\": updated label"), "\(text)")
    #expect(!text.contains("objectID"))
  }
}

@Suite("A rename keeps the backend's key")
struct RenameKeepsKeyTests {
  static func model(_ attributes: String) throws -> Model {
    try Model(
      json: JSONParser.parse(
        #"{"keyCase": "snake_case", "entities": {"User": {"identity": "id", "attributes": {"id": "int64", \#(attributes)}}}}"#
      ))
  }

  @Test func aRenamedAttributeStillReadsAndWritesItsOldJSONKey() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model(#""siteAdmin": "bool""#))
    var first = ledger.makeBatch()
    try first.stage(try JSONParser.parse(#"[{"id": 1, "site_admin": true}]"#), as: "User")
    _ = try ledger.applySynchronously(first)
    ledger.close()
    let renamed = try Self.model(#""isAdmin": {"type": "bool", "renamedFrom": "siteAdmin"}"#)
    let plan = try Ledger.migrate(at: directory.storePath, to: renamed).plan
    #expect(plan.differences.contains { $0.change.contains("JSON key stays site_admin") }, "\(plan.differences)")
    let migrated = try Ledger.open(at: directory.storePath)
    var second = migrated.makeBatch()
    try second.stage(try JSONParser.parse(#"[{"id": 1, "site_admin": false}]"#), as: "User")
    let summary = try migrated.applySynchronously(second)
    #expect(summary.ignoredKeys.isEmpty, "\(summary.ignoredKeys)")
    #expect(summary.updated == 1)
    let user = try migrated.read { view in try view.exportJSON("User") }.arrayValue?.first
    #expect(user?["site_admin"] == .bool(false), "\(String(describing: user))")
    #expect(user?["is_admin"] == nil)
  }

  @Test func aRenameThatNamesItsOwnKeyUsesIt() throws {
    let model = try Self.model(#""isAdmin": {"type": "bool", "renamedFrom": "siteAdmin", "jsonKey": "is_admin"}"#)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(try JSONParser.parse(#"[{"id": 1, "is_admin": true}]"#), as: "User")
    _ = try ledger.applySynchronously(batch)
    let user = try ledger.read { view in try view.exportJSON("User") }.arrayValue?.first
    #expect(user?["is_admin"] == .bool(true))
  }
}
