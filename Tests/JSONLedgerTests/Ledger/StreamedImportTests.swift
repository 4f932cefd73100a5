import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// `Ledger.importFile(at:…)` as one batch: read as a stream, resolved part by part.
@Suite("Importing a file as one streamed batch")
struct StreamedImportTests {
  /// A document of 2,500 albums and 300 bands (more than two parts of 1,000 elements), where
  /// albums name bands defined in other parts, before and after them, some nested, and
  /// musicians are named by key only.
  static func document() -> String {
    var albums: [String] = []
    for index in 0..<2_500 {
      let band = index % 7 == 0 ? #"{"name": "nested \#(index % 50)", "formed": 1990}"# : #""band \#(index % 300)""#
      albums.append(#"{"name": "album \#(index)", "label": "L\#(index % 13)", "band": \#(band)}"#)
    }
    let bands = (0..<300).map { #"{"name": "band \#($0)", "formed": \#(1950 + $0 % 60), "members": ["p\#($0 % 40)"]}"# }
    return #"{"albums": [\#(albums.joined(separator: ","))], "bands": [\#(bands.joined(separator: ","))]}"#
  }

  @Test func aStreamedImportStoresWhatStagingTheWholeDocumentStores() throws {
    let directory = try TemporaryDirectory()
    let file = try directory.write("document.json", Self.document())
    let streamed = try Ledger.open(at: directory.path + "/streamed", model: HistoryPropertyTests.model)
    let summary = try streamed.importFile(at: file, message: "nightly")
    let whole = try Ledger.open(at: directory.path + "/whole", model: HistoryPropertyTests.model)
    var batch = whole.makeBatch()
    try batch.stageDocument(try JSONParser.parse(Array(Self.document().utf8)))
    let expected = try whole.applySynchronously(batch)
    #expect(summary.batchID == 1)
    #expect(summary.created == expected.created)
    #expect(summary.updated == expected.updated)
    #expect(summary.unchanged == expected.unchanged)
    for entity in ["Band", "Album", "Musician"] {
      func exported(_ ledger: Ledger) throws -> [String] {
        guard case .array(let objects) = try ledger.read({ view in try view.exportJSON(entity) }) else { return [] }
        return objects.map { JSONWriter().string(from: $0) }.sorted()
      }
      #expect(try exported(streamed) == exported(whole), "\(entity)")
    }
    #expect(try streamed.record(1).metadata.source == file)
    #expect(try streamed.verify().batches == 1)
    // Importing the same file again changes nothing.
    #expect(try streamed.importFile(at: file).unchanged == 2_850)
  }

  /// A batch read in parts holds the objects it created and went past packed: the record and
  /// the states it writes are those of the same document staged whole. Some are left alone
  /// once made (bands with ordered lists, their members), others are linked again from
  /// later parts (an album as a musician's favourite, a hidden reverse link).
  @Test func aStreamedImportWritesTheRecordOfTheDocumentStagedWhole() throws {
    var albums: [String] = []
    // More objects than a batch holds before it packs any (`WorkingSet.objectsBeforePacking`).
    for index in 0..<16_000 {
      let band = index % 7 == 0 ? #"{"name": "nested \#(index % 50)"}"# : #""band \#(index % 300)""#
      albums.append(#"{"name": "album \#(index)", "label": "L\#(index % 13)", "band": \#(band)}"#)
    }
    let musicians = (0..<1_200).map {
      #"{"name": "m\#($0)", "favourite": "album \#($0 * 2)", "bands": ["band \#($0 % 300)", "nested \#($0 % 50)"]}"#
    }
    // Bands first: 1,200 with ordered members no later part names, then those the albums
    // name.
    let solo = (0..<1_200).map { #"{"name": "solo \#($0)", "members": ["s\#($0 + 1)", "s\#($0)"]}"# }
    let bands = (0..<300).map { #"{"name": "band \#($0)", "formed": 1970, "members": ["m\#($0 + 600)", "m\#($0)"]}"# }
    let document =
      #"{"bands": [\#((solo + bands).joined(separator: ","))], "albums": [\#(albums.joined(separator: ","))], "#
      + #""musicians": [\#(musicians.joined(separator: ","))]}"#
    let directory = try TemporaryDirectory()
    let file = try directory.write("document.json", document)
    let streamed = try Ledger.open(at: directory.path + "/streamed", model: HistoryPropertyTests.model)
    _ = try streamed.importFile(at: file)
    let whole = try Ledger.open(at: directory.path + "/whole", model: HistoryPropertyTests.model)
    var batch = whole.makeBatch()
    // Staged from its text, as a file is: the payload fingerprints are the text's.
    try batch.stageDocument(json: Array(document.utf8))
    _ = try whole.applySynchronously(batch)
    let (streamedRecord, wholeRecord) = (try streamed.record(1), try whole.record(1))
    #expect(streamedRecord.changes.count == wholeRecord.changes.count)
    // The first change that differs, if any (the whole lists are long to print).
    let differing = zip(streamedRecord.changes, wholeRecord.changes).first { $0 != $1 }
    #expect(differing == nil)
    #expect(streamedRecord.statistics == wholeRecord.statistics)
    for entity in ["Band", "Album", "Musician"] {
      func exported(_ ledger: Ledger) throws -> JSONValue { try ledger.read { view in try view.exportJSON(entity) } }
      #expect(try exported(streamed) == exported(whole), "\(entity)")
    }
    // Each state as written is what replaying the record writes.
    #expect(try streamed.verify().batches == 1)
  }

  /// Over `Ledger.largeBatch` changes, a batch hands back the memory it freed while it
  /// resolves and folds: what it stores is unchanged by that.
  @Test func aBatchLargeEnoughToHandBackItsMemoryStoresEveryObject() throws {
    let count = Ledger.largeBatch + 4_000
    let directory = try TemporaryDirectory()
    let albums = (0..<count).map { #"{"name": "album \#($0)", "label": "L\#($0 % 13)", "band": "band \#($0 % 700)"}"# }
    let file = try directory.write("many.json", #"{"albums": [\#(albums.joined(separator: ","))]}"#)
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    let summary = try ledger.importFile(at: file)
    #expect(summary.created == count + 700)
    try ledger.read { (view: borrowing View) throws in
      let album = try view.object("Album", key: .string("album \(count - 1)"))
      #expect(album?["label"] == .string("L\((count - 1) % 13)"))
      #expect(try view.count("Album") == count)
    }
    #expect(try ledger.verify().batches == 1)
  }

  @Test func aProblemInALaterPartNamesItsPlaceAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    var albums = (0..<1_600).map { #"{"name": "album \#($0)"}"# }
    albums[1_234] = #"{"name": ["not", "a", "key"]}"#
    let file = try directory.write("bad.json", #"{"albums": [\#(albums.joined(separator: ","))]}"#)
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    #expect {
      try ledger.importFile(at: file)
    } throws: { error in
      "\(error)".contains("albums[1234]")
    }
    #expect(try ledger.statistics().batches == 0)
  }

  @Test func brokenJSONNamesTheFileLineAndColumn() throws {
    let directory = try TemporaryDirectory()
    let file = try directory.write("broken.json", "{\"albums\": [\n  {\"name\": }\n]}")
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    #expect {
      try ledger.importFile(at: file)
    } throws: { error in
      "\(error)".contains(file) && "\(error)".contains("line 2")
    }
    #expect(try ledger.statistics().batches == 0)
  }

  @Test func oneObjectOfAnEntityAndPrunedImportsAreReadWhole() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    let one = try directory.write("one.json", #"{"name": "Gang", "formed": 1977}"#)
    #expect(try ledger.importFile(at: one, entity: "Band").created == 1)
    let two = try directory.write("two.json", #"[{"name": "Wire"}]"#)
    let pruned = try ledger.importFile(at: two, entity: "Band", options: StagingOptions(prune: true))
    #expect(pruned.created == 1)
    #expect(pruned.deleted == 1)
  }
}

extension StreamedImportTests {
  /// A file saved with a byte order mark (as some editors on Windows save UTF-8) imports as
  /// it would without, read as a stream, read whole, and as text skimmed against the store.
  @Test func aDocumentThatBeginsWithAByteOrderMarkImportsAsOneWithout() throws {
    let directory = try TemporaryDirectory()
    let text =
      "\u{FEFF}" + #"{"bands": [{"name": "Wire", "formed": 1976}], "albums": [{"name": "Pink Flag", "band": "Wire"}]}"#
    let file = try directory.write("marked.json", text)
    let streamed = try Ledger.open(at: directory.path + "/streamed", model: HistoryPropertyTests.model)
    #expect(try streamed.importFile(at: file).created == 2)
    // The same text again: skimmed, and found unchanged.
    var again = streamed.makeBatch()
    try again.stageDocument(json: Array(text.utf8))
    #expect(try streamed.applySynchronously(again).unchanged == 2)
    let read = try Ledger.open(at: directory.path + "/whole", model: HistoryPropertyTests.model)
    var batch = read.makeBatch()
    try batch.stage(fileAt: file)
    #expect(try read.applySynchronously(batch).created == 2)
    let bands = try directory.write("bands.json", "\u{FEFF}" + #"[{"name": "Gang"}]"#)
    #expect(try streamed.importFile(at: bands, entity: "Band").created == 1)
    // Before an element, it is not skipped.
    let inside = try directory.write("inside.json", "[\u{FEFF}" + #"{"name": "Gang"}]"#)
    #expect(throws: LedgerError.self) { try streamed.importFile(at: inside, entity: "Band") }
    var whole = streamed.makeBatch()
    #expect(throws: LedgerError.self) { try whole.stage(fileAt: inside, as: "Band") }
    // The document staged again changed nothing, and wrote no record.
    #expect(try streamed.statistics().batches == 2)
  }

  /// A document of one value that is neither an object nor an array is refused for what it
  /// is, read as a stream as when read whole.
  @Test(arguments: ["42", #""Wire""#, "true", "null"])
  func aDocumentThatIsOneScalarIsRefusedForWhatItIs(text: String) throws {
    let directory = try TemporaryDirectory()
    let file = try directory.write("scalar.json", text)
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    var batch = ledger.makeBatch()
    var whole: LedgerError?
    do { try batch.stageDocument(json: Array(text.utf8)) } catch { whole = error }
    let message = try #require(whole).description
    #expect(message.contains("expected a JSON object whose keys name collections"))
    #expect {
      try ledger.importFile(at: file)
    } throws: { error in
      "\(error)" == message
    }
    #expect(try ledger.statistics().batches == 0)
  }

  @Test func progressCountsObjectsAndBytesUpToTheWholeFile() throws {
    let directory = try TemporaryDirectory()
    let text = Self.document()
    let file = try directory.write("document.json", text)
    let ledger = try Ledger.open(at: directory.storePath, model: HistoryPropertyTests.model)
    var reports: [ImportProgress] = []
    _ = try ledger.importFile(at: file) { reports.append($0) }
    // Parts of 1,000 top-level objects, whatever their collection.
    #expect(reports.map(\.objects) == [1_000, 2_000, 2_800])
    #expect(reports.map(\.bytesRead) == reports.map(\.bytesRead).sorted())
    #expect(reports.allSatisfy { $0.totalBytes == text.utf8.count })
    #expect(reports.last.map { $0.totalBytes - $0.bytesRead } == 2)  // all but the closing "]}"
  }
}
