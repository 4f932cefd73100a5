import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Testing

/// The README's Swift examples, as written (only file paths differ), so they keep compiling.
@Suite("README examples")
struct ReadmeExamplesTests {
  @Test func theSwiftAPIExample() async throws {
    let directory = try TemporaryDirectory()
    let responseData = try Data(contentsOf: Fixtures.url("bands-initial.json"))
    let albumsData = Data(#"[{"name": "Tin Drum", "band": "Japan"}, {"name": "Avalon", "band": "Roxy Music"}]"#.utf8)

    let model = try Model(contentsOf: try Fixtures.url("bands-model.json").path)
    let ledger = try Ledger.open(at: directory.storePath, model: model)

    var batch = ledger.makeBatch()
    try batch.stageDocument(try JSONParser.parse(responseData))
    try batch.stage(try JSONParser.parse(albumsData), as: "Album", options: StagingOptions(prune: true))
    try batch.delete("Album", key: "Tin Drum")
    let summary = try await ledger.apply(batch, message: "nightly import", idempotencyKey: "2026-11-22")
    print(summary.batchID, summary.created, summary.updated, summary.deleted, summary.unchanged)

    let albums = try await ledger.read { view in
      guard let japan = try view.object("Band", key: "Japan") else { return [ObjectSnapshot]() }
      return try view.related(japan, "albums")
    }
    let then = try await ledger.read(asOf: 1) { view in try view.object("Album", key: "Tin Drum")?["label"] }
    let json = try await ledger.read { view in
      try view.exportJSON("Band", options: .init(relationships: .nested(depth: 2)))
    }
    #expect(albums.isEmpty)
    #expect(then == nil)
    #expect(json.arrayValue?.count == 2)

    let entries = try await ledger.log()
    let changed = try await ledger.diff(from: 0, to: 1)
    #expect(entries.count == 1 && !changed.changes.isEmpty)
    var second = ledger.makeBatch()
    try second.stage([["name": "Avalon", "label": "EG"]], as: "Album")
    _ = try await ledger.apply(second)
    let result = try await ledger.revert(2)
    #expect(result.overridden.isEmpty)
    _ = try await ledger.rewind(to: 1)
    let report = try await ledger.verify()
    #expect(report.batches == 4)
  }

  struct Album: Codable {
    var name: String
    var released: Date?
    var label: String?
    var band: String?
  }

  @Test func theCodableExamples() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Fixtures.bandsModel())
    let responseBody = try Data(contentsOf: Fixtures.url("bands-initial.json"))

    // 1. Import a backend response.
    var batch = ledger.makeBatch()
    try batch.stageDocument(try JSONParser.parse(responseBody))
    _ = try await ledger.apply(batch, message: "GET /albums")

    // 2. Read a typed object.
    let tinDrum = try await ledger.read { view in try view.decode(Album.self, from: "Album", key: "Tin Drum") }

    // 3. Export a changed object for a PUT: the backend's keys, date format and custom keys.
    let putBody = try await ledger.read { view in
      try JSONWriter().bytes(from: view.exportJSON(try view.object("Album", key: "Tin Drum")!))
    }

    // 4. Export a new struct for a POST: stage it, then export it like any object.
    var post = ledger.makeBatch()
    try post.stage(Album(name: "Assemblage", released: nil, label: "Hansa", band: "Japan"), as: "Album")
    _ = try await ledger.apply(post, message: "created locally")
    let postBody = try await ledger.read { view in try view.exportJSON(try view.object("Album", key: "Assemblage")!) }

    #expect(tinDrum?.band == "Japan")
    #expect(String(decoding: putBody, as: UTF8.self).contains("\"released_as\":null"))
    #expect(postBody["band"] == "Japan")
    #expect(postBody["label"] == "Hansa")
  }
}
