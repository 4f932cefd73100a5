import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("End to end: JSON in, log and projections, JSON out")
struct EndToEndTests {
  @Test func importThenReadAnObjectWithItsRelationships() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsModel(), documents: [try Fixtures.json("bands-initial.json")])
    try ledger.read { view throws in
      let japan = try #require(try view.object("Band", key: "Japan"))
      #expect(japan["formed"] == .integer(1974))
      #expect(japan["bandDescription"] == .string("English new wave band from Catford"))
      #expect(japan["homepageURL"] == .url(URL(string: "https://example.org/japan")!))
      #expect(japan["city"] == .string("London"))
      #expect(
        Set(try view.related(japan, "albums").map { $0.key.identity }) == [
          [.string("Tin Drum")], [.string("Gentlemen Take Polaroids")],
        ])
      #expect(
        try view.related(japan, "members").map(\.key.identity) == [
          [.string("David Sylvian in Japan")], [.string("Mick Karn in Japan")],
        ])
      #expect(try view.count("Album") == 4)
      #expect(try view.count("Musician") == 3)
    }
  }

  @Test func secondBatchMergesAndTheLogKeepsBoth() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsModel(),
      documents: [try Fixtures.json("bands-initial.json"), try Fixtures.json("bands-update.json")])
    let log = try ledger.log()
    #expect(log.map(\.batchID) == [2, 1])
    #expect(log[0].statistics.created == 1)
    try ledger.read { view throws in
      let tinDrum = try #require(try view.object("Album", key: "Tin Drum"))
      #expect(tinDrum["label"] == .string("Virgin Records"))
      #expect(tinDrum["released"] != nil)  // absent key: untouched
      let japan = try #require(try view.object("Band", key: "Japan"))
      #expect(try view.related(japan, "albums").count == 3)
      #expect(try view.object("Band", key: "Roxy Music")?["disbanded"] == .integer(1983))
    }
    let report = try ledger.verify()
    #expect(report.batches == 2)
  }

  @Test func exportWritesKeysBackInTheJSONCasing() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsModel(), documents: [try Fixtures.json("bands-initial.json")])
    let bands = try ledger.read { view in try view.exportJSON("Band") }
    let japan = try #require(bands.arrayValue?.first { $0["name"] == "Japan" })
    #expect(japan["description"] == "English new wave band from Catford")
    #expect(japan["other_names"] == "Rain Tree Crow")
    #expect(japan["homepage_url"] == "https://example.org/japan")
    #expect(japan["info"]?["city"] == "London")
    #expect(japan["info"]?["founded"] == "1974-03-01T00:00:00Z")
    #expect(japan["internal_note"] == nil)
    #expect(japan["albums"]?.arrayValue?.count == 2)
    #expect(japan["members"] == ["David Sylvian in Japan", "Mick Karn in Japan"])
    let roxy = try #require(bands.arrayValue?.first { $0["name"] == "Roxy Music" })
    #expect(roxy["disbanded"] == .null)
  }
}
