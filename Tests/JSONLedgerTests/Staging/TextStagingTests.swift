import Foundation
import JSONLedgerTestSupport
import PropertyBased
import Testing

@testable import JSONLedger

/// JSON text staged as text: an object whose text the store holds as having made it what it
/// is is staged without being parsed or mapped (`SkimmedPayload`), and everything else is as
/// if the text had been parsed first.
@Suite("Staging JSON text: what the store holds is skimmed, the rest as parsed")
struct TextStagingTests {
  static let model = UnchangedPayloadTests.model

  func makeLedger(_ directory: TemporaryDirectory, _ name: String = "store") throws -> Ledger {
    try Ledger.open(at: directory.path + "/" + name, model: try Model(json: JSONParser.parse(Self.model)))
  }

  /// A document of bands and albums (with nested producers) read from `seed`: which albums,
  /// their labels and bands, the producers' countries, and the spacing of the text.
  static func document(_ seed: Int) -> [UInt8] {
    let spaced = seed % 11 == 0
    let colon = spaced ? ": " : ":"
    var albums: [String] = []
    for index in 0..<6 where (seed >> index) & 1 == 1 || index == seed % 6 {
      var members = [
        "\"name\"\(colon)\"a\(index)\"", "\"label\"\(colon)\"l\((seed / 64 + index) % 3)\"",
        "\"band\"\(colon)\"b\(index % 3)\"",
      ]
      if (seed / 192 + index) % 4 != 0 {
        members.append(
          "\"producer\"\(colon){\"name\"\(colon)\"p\(index % 3)\",\"country\"\(colon)\"c\((seed / 768) % 2)\"}")
      }
      albums.append("{" + members.joined(separator: ",") + "}")
    }
    let bands = (0..<3).map { "{\"name\"\(colon)\"b\($0)\",\"formed\"\(colon)\(1970 + (seed / 5 + $0) % 2)}" }
    return Array("{\"bands\":[\(bands.joined(separator: ","))],\"albums\":[\(albums.joined(separator: ","))]}".utf8)
  }

  /// One step of a history, applied to `ledger`, staging documents as text (in memory, or
  /// streamed from a file) or parsed first.
  static func apply(_ step: Int, to ledger: Ledger, asText: Bool, directory: String) throws -> String {
    var batch = ledger.makeBatch()
    switch step % 6 {
    case 0, 1, 2:
      let text = document(step / 6)
      if asText, step % 6 == 2 {
        let file = directory + "/document.json"
        try Data(text).write(to: URL(fileURLWithPath: file))
        let summary = try ledger.importFile(at: file)
        return "\(summary.created) \(summary.updated) \(summary.deleted)"
      } else if asText {
        try batch.stageDocument(json: text)
      } else {
        try batch.stageDocument(JSONParser.parse(text))
      }
    case 3:
      try batch.stage([["name": .string("p\(step % 3)"), "country": "elsewhere"]], as: "Producer")
    case 4:
      try batch.delete("Album", key: .string("a\((step / 6) % 6)"))
    default:
      let head = try ledger.head
      guard head > 0 else { return "nothing" }
      do {
        let result: RevertResult = try ledger.revert(UInt64(step / 6) % head + 1, force: true)
        return "\(result.summary.updated)"
      } catch let refused as LedgerError {
        return "refused \(refused.code)"
      }
    }
    let summary = try ledger.applySynchronously(batch)
    return "\(summary.created) \(summary.updated) \(summary.deleted)"
  }

  @Test func aHistoryStagedAsTextLeavesWhatTheParsedDocumentsLeave() async throws {
    await propertyCheck(count: 60, input: Gen.int(in: 0...9_999).array(of: 1...20)) { steps in
      do {
        let directory = try TemporaryDirectory()
        let parsed = try makeLedger(directory, "parsed")
        let text = try makeLedger(directory, "text")
        for step in steps {
          let expected = try Self.apply(step, to: parsed, asText: false, directory: directory.path)
          #expect(try Self.apply(step, to: text, asText: true, directory: directory.path) == expected, "step \(step)")
          let document = try parsed.read { view in try view.exportDocument() }
          #expect(try text.read { view in try view.exportDocument() } == document, "step \(step)")
        }
        _ = try text.verify()
      } catch {
        Issue.record("\(steps): \(error)")
      }
    }
  }

  /// Applies `text` (a document) to `ledger` as text, as one batch.
  @discardableResult
  func importText(_ text: [UInt8], into ledger: Ledger) throws -> BatchSummary {
    var batch = ledger.makeBatch()
    try batch.stageDocument(json: text)
    return try ledger.applySynchronously(batch)
  }

  /// The kinds of the objects staged in `batch`: "mapped" or "skimmed", in order.
  func stagedKinds(_ batch: ChangeBatch) -> [String] {
    batch.steps.flatMap { step -> [String] in
      guard case .collection(_, let objects, _, _) = step else { return [] }
      return objects.map { object in
        if case .skimmed = object { "skimmed" } else { "mapped" }
      }
    }
  }

  @Test func textImportedAgainIsSkimmedAndSkippedWithoutReadingAnObject() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let text = Self.document(63)
    var first = ledger.makeBatch()
    try first.stageDocument(json: text)
    #expect(Set(stagedKinds(first)) == ["mapped"])
    _ = try ledger.applySynchronously(first)

    var again = ledger.makeBatch()
    try again.stageDocument(json: text)
    #expect(stagedKinds(again) == Array(repeating: "skimmed", count: 9))
    let resolved = try UnchangedPayloadTests().resolve(again, in: ledger)
    #expect(resolved.changes.isEmpty)
    #expect(resolved.readIDs.isEmpty)
    let summary = try ledger.applySynchronously(again)
    #expect((summary.created, summary.updated, summary.deleted) == (0, 0, 0))
    #expect(summary.unchanged == 12)  // 3 bands, 6 albums, 3 producers
  }

  /// A store that imported the file `document.json` (`document(63)`), streamed; its path.
  func storeWithImportedFile(_ directory: TemporaryDirectory) throws -> (Ledger, String) {
    let ledger = try makeLedger(directory)
    let file = directory.path + "/document.json"
    try Data(Self.document(63)).write(to: URL(fileURLWithPath: file))
    _ = try ledger.importFile(at: file)
    return (ledger, file)
  }

  @Test func aFileStreamedAgainIsSkimmedChunkByChunk() throws {
    let directory = try TemporaryDirectory()
    let (ledger, file) = try storeWithImportedFile(directory)

    let chunks = JSONFileChunks(
      path: file, entity: nil, chunkSize: 4, options: StagingOptions(), makeBatch: { ledger.makeBatch() })
    var kinds: [String] = []
    try chunks.forEachChunk { batch, _, _ in kinds += stagedKinds(batch) }
    #expect(kinds == Array(repeating: "skimmed", count: 9))
    let summary = try ledger.importFile(at: file)
    #expect((summary.created, summary.updated, summary.deleted, summary.unchanged) == (0, 0, 0, 12))
    let parts = try ledger.importFile(at: file, chunkSize: 2)
    #expect(parts.allSatisfy { $0.created + $0.updated + $0.deleted == 0 })
  }

  @Test func aMalformedElementOfAStreamedFileIsPlacedInTheFile() throws {
    let directory = try TemporaryDirectory()
    let (ledger, file) = try storeWithImportedFile(directory)
    let good = String(decoding: Self.document(63), as: UTF8.self)
    for broken in [
      good.replacingOccurrences(of: "\"l0\"", with: "\"l0\\q\""),
      good.replacingOccurrences(of: "\"name\":\"a4\",", with: "\n\n  \"name\":\"a4\",,"),
    ] {
      try Data(broken.utf8).write(to: URL(fileURLWithPath: file))
      var stream = try JSONStream(path: file)
      let expected = #expect(throws: JSONSyntaxError.self) { try stream.forEachElement { _, _ in } }
      let error = #expect(throws: LedgerError.self) { try ledger.importFile(at: file) }
      if let expected {
        #expect(
          error?.description.contains(LedgerError.syntax(expected, source: file).description) == true,
          "\(String(describing: error))")
      }
    }
    #expect(try ledger.head == 1)
  }

  @Test func anObjectChangedBetweenStagingAndApplyingIsMappedAndApplied() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let text = Self.document(63)
    try importText(text, into: ledger)

    var again = ledger.makeBatch()
    try again.stageDocument(json: text)
    var meanwhile = ledger.makeBatch()
    try meanwhile.stage([["name": "a2", "label": "changed"]], as: "Album")
    try meanwhile.stage([["name": "p1", "country": "changed"]], as: "Producer")
    _ = try ledger.applySynchronously(meanwhile)

    let summary = try ledger.applySynchronously(again)
    #expect(summary.updated == 2)
    try ledger.read { view throws in
      #expect(try view.object("Album", key: "a2")?["label"] == .string("l2"))
      #expect(try view.object("Producer", key: "p1")?["country"] == .string("c0"))
    }
    _ = try ledger.verify()
  }

  @Test func aBatchStagedAgainstOneStoreIsCheckedAfreshByAnother() throws {
    let directory = try TemporaryDirectory()
    let one = try makeLedger(directory, "one")
    let other = try makeLedger(directory, "other")
    let text = Self.document(63)
    // Two batches each: the same head, the same identities under other object ids, and in
    // the other store an album changed since the text was applied.
    try importText(text, into: one)
    var unrelated = one.makeBatch()
    try unrelated.stage([["name": "p8"]], as: "Producer")
    _ = try one.applySynchronously(unrelated)
    var shifted = other.makeBatch()
    try shifted.stage([["name": "p9"]], as: "Producer")
    try shifted.stageDocument(json: text)
    _ = try other.applySynchronously(shifted)
    var relabel = other.makeBatch()
    try relabel.stage([["name": "a2", "label": "changed"]], as: "Album")
    _ = try other.applySynchronously(relabel)
    #expect(try one.head == other.head)

    var again = one.makeBatch()
    try again.stageDocument(json: text)
    #expect(stagedKinds(again).allSatisfy { $0 == "skimmed" })
    let summary = try other.applySynchronously(again)
    #expect(summary.updated == 1)
    try other.read { view throws in
      #expect(try view.object("Album", key: "a2")?["label"] == .string("l2"))
    }
    _ = try other.verify()
  }

  /// Into a store that holds a batch, objects are skimmed; into an empty one, each element is
  /// parsed and mapped in turn. Either way a malformed text is refused as the parser refuses it.
  @Test(arguments: [true, false])
  func malformedTextIsRefusedWithTheParsersErrorAndNothingStaged(storeHoldsABatch: Bool) throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    if storeHoldsABatch { try importText(Self.document(63), into: ledger) }

    let good = String(decoding: Self.document(63), as: UTF8.self)
    // A hundred problems fill the list before the malformed element: it is still read.
    let unnamed = Array(repeating: #"{"label": "l"}"#, count: MappingError.limit + 5).joined(separator: ",")
    let broken = [
      good.replacingOccurrences(of: "},{\"name\":\"a3\"", with: "} {\"name\":\"a3\""),
      good.replacingOccurrences(of: "\"l0\"", with: "\"l0\\q\""),
      good + " x", String(good.dropLast()), good.replacingOccurrences(of: "\"formed\":1970", with: "\"formed\":01970"),
      good.replacingOccurrences(of: "[{\"name\":\"a0\"", with: "[,{\"name\":\"a0\""),
      #"{"albums": [\#(unnamed), {"name": "a0",, }]}"#,
      // One level deeper than a parser goes, inside an element.
      #"{"albums": [{"name": "a0", "label": \#(String(repeating: "[", count: JSONParser.maximumDepth - 2))"#
        + String(repeating: "]", count: JSONParser.maximumDepth - 2) + "}]}",
    ]
    let head = try ledger.head
    for text in broken {
      let expected: JSONSyntaxError
      do {
        _ = try JSONParser.parse(text)
        Issue.record("\(text.prefix(80)) parses")
        continue
      } catch {
        expected = error
      }
      var batch = ledger.makeBatch()
      let error = #expect(throws: LedgerError.self) { try batch.stageDocument(json: Array(text.utf8)) }
      #expect(error?.description == LedgerError.syntax(expected, source: nil).description)
      #expect(batch.isEmpty)
    }
    #expect(try ledger.head == head)
  }

  @Test func textStagedIntoAnEmptyStoreHasTheProblemsAndObjectsOfTheParsedText() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let deepest =
      String(repeating: "[", count: JSONParser.maximumDepth - 3) + "1"
      + String(repeating: "]", count: JSONParser.maximumDepth - 3)
    let texts = [
      Array(
        #"{"bands": [{"name": "b0", "formed": 1970}, {"name": "b1", "formed": "soon"}, {"formed": 1}, 7],"#.utf8)
        + Array(
          #""albums": [{"name": "a0", "band": ["b0"]}, null, {"name": "a9", "producer": {"country": "x"}}]}"#.utf8),
      // One object for a collection, and an element as deep as a document may go.
      Array(#"{"bands": {"name": "b0", "formed": 1970}, "albums": [{"name": "a0", "label": \#(deepest)},]}"#.utf8),
      Self.document(63), Array(" \n".utf8) + Self.document(11) + Array("\n".utf8),
    ]
    for text in texts {
      var asText = ledger.makeBatch()
      try asText.stageDocument(json: text)
      var parsed = ledger.makeBatch()
      try parsed.stageDocument(JSONParser.parse(text))
      #expect(asText.problems.map(\.description) == parsed.problems.map(\.description))
      #expect(asText.ignoredKeys == parsed.ignoredKeys)
      #expect(stagedKinds(asText) == stagedKinds(parsed))
      #expect(nestedPaths(asText) == nestedPaths(parsed))
    }
  }

  /// Objects that are never skimmed (an entity mapper picks their sub-entity, a key path
  /// reaches into them) are parsed and mapped one element at a time: the store they make, and
  /// the problems found, are those of the parsed text, into an empty store and a full one.
  @Test func textOfEntitiesThatAreNeverSkimmedMakesWhatTheParsedTextMakes() throws {
    var abstract = Entity(
      "Abstract", identity: ["identifier"], abstract: true,
      attributes: [Attribute("identifier", .int64, jsonKey: "id"), Attribute("city", .string, jsonKey: "place.city")])
    abstract.entityMapper = "ByType"
    let model = try Model(entities: [
      abstract,
      Entity("ConcreteA", parent: "Abstract", attributes: [Attribute("foo", .string)]),
      Entity("ConcreteB", parent: "Abstract", attributes: [Attribute("bar", .int64)]),
    ])
    var options = Ledger.Options()
    options.transformers.registerEntityMapper("ByType") { object in object["type"]?.stringValue.map { "Concrete" + $0 }
    }
    let texts = [
      #"[{"id": 1, "type": "A", "foo": "a", "place": {"city": "Oslo"}}, {"id": 2, "type": "B", "bar": 2}]"#,
      #"[{"id": 1, "foo": "again"}, {"id": 3, "type": "B", "bar": "x", "place": 7}, 4, null,]"#,
      #"{"id": 5, "type": "A", "place": {"city": null}}"#,
    ]
    let directory = try TemporaryDirectory()
    let asText = try Ledger.open(at: directory.path + "/text", model: model, options: options)
    let parsed = try Ledger.open(at: directory.path + "/parsed", model: model, options: options)
    for text in texts {
      var textBatch = asText.makeBatch()
      try textBatch.stage(json: Array(text.utf8), as: "Abstract")
      var parsedBatch = parsed.makeBatch()
      try parsedBatch.stage(JSONParser.parse(text), as: "Abstract")
      #expect(textBatch.problems.map(\.description) == parsedBatch.problems.map(\.description))
      if textBatch.problems.isEmpty {
        _ = try asText.applySynchronously(textBatch)
        _ = try parsed.applySynchronously(parsedBatch)
      }
      let document = try parsed.read { view in try view.exportDocument() }
      #expect(try asText.read { view in try view.exportDocument() } == document)
    }
    #expect(try asText.head == 2)
  }

  @Test func problemsOfTextAreThoseOfTheParsedText() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    try importText(Self.document(63), into: ledger)

    let text =
      Array(
        #"{"bands": [{"name": "b0", "formed": 1970}, {"name": "b1", "formed": "soon"}, {"formed": 1}, 7],"#.utf8)
      + Array(#""albums": [{"name": "a0", "band": ["b0"]}, null, {"name": "a9", "producer": {"country": "x"}}]}"#.utf8)
    var asText = ledger.makeBatch()
    try asText.stageDocument(json: text)
    var parsed = ledger.makeBatch()
    try parsed.stageDocument(JSONParser.parse(text))
    #expect(asText.problems.map(\.description) == parsed.problems.map(\.description))
    #expect(asText.problems.count >= 3)
    #expect(asText.ignoredKeys == parsed.ignoredKeys)
  }

  /// The nested producer of each album staged in `batch`, by its path.
  func nestedPaths(_ batch: ChangeBatch) -> [String] {
    batch.steps.flatMap { step -> [String] in
      guard case .collection(_, let objects, _, _) = step else { return [] }
      return objects.flatMap { object -> [String] in
        guard case .mapped(let mapped) = object else { return [] }
        return mapped.relationships.compactMap { relationship in
          if case .toOne(.object(let nested)) = relationship.value { nested.object.path.description } else { nil }
        }
      }
    }
  }

  @Test func aNestedObjectRepeatedInTheTextIsPlacedWhereEachCopyIs() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let producer = #"{"name": "p0", "country": "c0"}"#
    let text = Array(
      (#"{"albums": [{"name": "a0", "producer": \#(producer)}, {"name": "a1", "producer": \#(producer)},"#
        + #" {"name": "a2", "producer": {"name": "p1"}}, {"name": "a3", "producer": \#(producer)}]}"#).utf8)
    var batch = ledger.makeBatch()
    try batch.stageDocument(json: text)
    #expect(
      nestedPaths(batch) == ["albums[0].producer", "albums[1].producer", "albums[2].producer", "albums[3].producer"])
    #expect(batch.problems.isEmpty)
    let summary = try ledger.applySynchronously(batch)
    #expect((summary.created, summary.updated) == (6, 0))
    try ledger.read { view throws in
      #expect(try view.count("Producer") == 2)
      let album = try #require(try view.object("Album", key: "a3"))
      #expect(try view.related(album, "producer").first?["country"] == .string("c0"))
    }
  }

  @Test func aNestedObjectRepeatedWithAProblemIsReportedAtEachPlace() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    let producer = #"{"name": "p0", "country": ["c0"]}"#
    let text = Array(
      (#"{"albums": [{"name": "a0", "producer": \#(producer)}, {"name": "a1", "producer": \#(producer)}]}"#).utf8)
    var asText = ledger.makeBatch()
    try asText.stageDocument(json: text)
    var parsed = ledger.makeBatch()
    try parsed.stageDocument(JSONParser.parse(text))
    #expect(asText.problems.map(\.description) == parsed.problems.map(\.description))
    #expect(asText.problems.map(\.path) == ["albums[0].producer.country", "albums[1].producer.country"])
  }

  /// What a skimmer learns of keys is handed from one batch of a ledger to the next: batches
  /// staged one after another, or at once from several tasks, each stage what a batch of a
  /// new ledger would, unknown keys reported each time.
  @Test func batchesOfOneLedgerStageAsANewLedgersWouldOneAfterAnotherOrAtOnce() async throws {
    let directory = try TemporaryDirectory()
    let shared = try makeLedger(directory, "shared")
    try importText(Self.document(63), into: shared)
    // Keys in an order of their own per text, an unknown one of three, and nested producers.
    func text(_ index: Int) -> [UInt8] {
      let members = [
        "\"name\": \"a\(index % 6)\"", "\"xyz\(index % 3)\": \(index)", "\"label\": \"l\(index % 4)\"",
        "\"producer\": {\"country\": \"c\(index % 2)\", \"name\": \"p\(index % 3)\"}",
      ]
      let rotated = Array(members[(index % 4)...] + members[..<(index % 4)])
      return Array("{\"albums\": [{\(rotated.joined(separator: ", "))}]}".utf8)
    }
    func staged(_ text: [UInt8], by ledger: Ledger) throws -> String {
      var batch = ledger.makeBatch()
      try batch.stageDocument(json: text)
      return "\(stagedKinds(batch)) \(batch.ignoredKeys.sorted()) \(batch.problems.map(\.description))"
    }
    var expected: [String] = []
    for index in 0..<24 {
      let alone = try makeLedger(directory, "alone-\(index)")
      try importText(Self.document(63), into: alone)
      expected.append(try staged(text(index), by: alone))
      alone.close()
      #expect(try staged(text(index), by: shared) == expected[index], "batch \(index), one after another")
    }
    let atOnce = try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for index in 0..<24 { group.addTask { (index, try staged(text(index), by: shared)) } }
      return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
    }
    for index in 0..<24 { #expect(atOnce[index] == expected[index], "batch \(index), at once") }
  }

  @Test func keysInAnyOrderAreReadForWhatTheyAre() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(directory)
    // Keys of one length ("name", "band", "xyzw": unknown), in a different order in each
    // object, and a nested object whose key "name" is its parent's too.
    let text = Array(
      (#"{"albums": [{"name": "a0", "band": "b0", "label": "l0"}, {"band": "b1", "xyzw": 1, "name": "a1"},"#
        + #" {"xyzw": 2, "label": "l2", "name": "a2", "producer": {"country": "c0", "name": "p0"}},"#
        + #" {"producer": {"name": "p1"}, "name": "a3", "band": "b0"}]}"#).utf8)
    try importText(text, into: ledger)
    var again = ledger.makeBatch()
    try again.stageDocument(json: text)
    var parsed = ledger.makeBatch()
    try parsed.stageDocument(JSONParser.parse(text))
    #expect(stagedKinds(again) == Array(repeating: "skimmed", count: 4))
    #expect(again.ignoredKeys == parsed.ignoredKeys)
    #expect(again.ignoredKeys == ["Album.xyzw"])
    let summary = try ledger.applySynchronously(again)
    #expect((summary.created, summary.updated, summary.deleted) == (0, 0, 0))
    try ledger.read { view throws in
      #expect(try view.object("Album", key: "a1")?["label"] == nil)
      #expect(try view.object("Producer", key: "p0")?["country"] == .string("c0"))
    }
  }

  @Test func theSameTextUnderAnotherModelIsNotTheSamePayload() throws {
    let model = try Model(json: JSONParser.parse(Self.model))
    let renamed = try Model(
      json: JSONParser.parse(
        Self.model.replacingOccurrences(
          of: #""label": "string""#, with: #""label": {"type": "string", "jsonKey": "publisher"}"#)))
    let text = JSONSkim(Array(#"{"name": "a0", "label": "l0"}"#.utf8))
    let one = Mapper(model: model, transformers: ValueTransformers())
    let other = Mapper(model: renamed, transformers: ValueTransformers())
    let album = try #require(model.resolved("Album"))
    #expect(
      SkimmedPayload.textFingerprint(of: text, 0..<text.bytes.count, entity: album, modelDigest: one.modelDigest)
        != SkimmedPayload.textFingerprint(of: text, 0..<text.bytes.count, entity: album, modelDigest: other.modelDigest)
    )
  }
}
