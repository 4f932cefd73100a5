import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Testing

/// The README's Swift examples, as written (only file paths differ), so they keep compiling.
@Suite("README examples")
struct ReadmeExamplesTests {
  /// The README's Swift blocks, as written, run as one program in the order printed: the
  /// lines between the markers below are compared with them (file paths aside), then run.
  @Test func theSwiftExamplesRunAsOneProgramInTheOrderPrinted() async throws {
    let directory = try TemporaryDirectory()
    let responseData = try Data(contentsOf: Fixtures.url("bands-initial.json"))
    let albumsData = Data(#"[{"name": "Tin Drum", "label": "Virgin Records"}]"#.utf8)
    let modelPath = try Fixtures.url("bands-model.json").path
    let storePath = directory.storePath
    let albumsPath = try directory.write("albums.json", #"[{"name": "Assemblage", "band": "Japan"}]"#)

    // README begin

    let model = try Model(contentsOf: modelPath)  // or .xcdatamodeld, or the builder below
    let ledger = try Ledger.open(at: storePath, model: model)  // creates or opens

    // Stage (a value: nothing is written yet), then apply as one batch, all or nothing. Staged as
    // text, an object the store already holds from the same text is neither parsed nor mapped.
    var batch = ledger.makeBatch()
    try batch.stageDocument(json: responseData)  // {"bands": [...], "albums": [...]}
    let summary = try await ledger.apply(batch, message: "nightly import", idempotencyKey: "2026-11-22")
    print(summary.batchID, summary.created, summary.updated, summary.deleted, summary.unchanged)

    // Watch applied batches as they happen (the stream ends when the task is cancelled).
    let watcher = Task { for await applied in ledger.changes { print("applied", applied.batchID) } }

    var update = ledger.makeBatch()
    try update.stage(try JSONParser.parse(albumsData), as: "Album")  // [{"name": …, "label": …}]
    try update.delete("Album", key: "Stranded")
    _ = try await ledger.apply(update, message: "relabel")

    // Read: a View exists only inside the closure (it is non-copyable).
    let albums = try await ledger.read { view in  // in synchronous code: try ledger.read { … }
      guard let japan = try view.object("Band", key: "Japan") else { return [ObjectSnapshot]() }
      return try view.related(japan, "albums")  // ObjectSnapshot values: key, attributes, relationship keys
    }
    let then = try await ledger.read(asOf: 1) { view in try view.object("Album", key: "Tin Drum")?.string("label") }
    let json = try await ledger.read { view in
      try view.exportJSON("Band", options: .init(relationships: .nested(depth: 2)))
    }

    // History.
    let entries = try await ledger.log()  // newest first
    let changed = try await ledger.diff(from: 1, to: 2)
    let result = try await ledger.revert(2)  // a LedgerError with code .revertConflicts lists them
    _ = try await ledger.rewind(to: 1)
    let report = try await ledger.verify()
    watcher.cancel()

    // A file larger than memory, streamed in batches of 20,000 objects.
    let parts = try await ledger.importFile(
      at: albumsPath, entity: "Album", chunkSize: 20_000, idempotencyKey: "albums-2026-11-22")

    let query = Query("Album", where: "released", .between("1980-01-01", nil)).sorted(by: "released").limited(to: 20)
    var cursor: QueryCursor?
    repeat {
      let next = query.after(cursor)
      let page = try await ledger.read { view in try view.objects(next) }
      print(page.objects.map(\.key))
      cursor = page.next  // nil after the last page
    } while cursor != nil
    let recent = try await ledger.read { view in try view.objects(try Query("Album").filter("label = Virgin")) }

    // README end

    struct Album: Codable {
      var name: String
      var released: Date?
      var label: String?
      var band: String?
    }

    // 1. Import a backend response.
    var response = ledger.makeBatch()
    try response.stageDocument(try JSONParser.parse(responseData))
    _ = try await ledger.apply(response, message: "GET /albums")

    // 2. Read a typed object.
    let tinDrum = try await ledger.read { view in try view.decode(Album.self, from: "Album", key: "Tin Drum") }

    // 3. Export a changed object for a PUT: the backend's keys, date format and custom keys.
    let putBody = try await ledger.read { view in
      try view.object("Album", key: "Tin Drum").map { try JSONWriter().bytes(from: view.exportJSON($0)) }
    }

    // 4. Export a new struct for a POST: stage it, then export it like any object.
    var post = ledger.makeBatch()
    try post.stage(Album(name: "Assemblage", released: nil, label: "Hansa", band: "Japan"), as: "Album")
    _ = try await ledger.apply(post, message: "created locally")
    let postBody = try await ledger.read { view in
      try view.object("Album", key: "Assemblage").map { try view.exportJSON($0) }
    }

    let (label, byJapan) = try await ledger.read { view in
      let label = try view.withObject("Album", key: "Tin Drum") { album in try album["label"] }  // nil: no such album
      var byJapan = 0
      try view.forEachObjectInPlace("Album") { album in
        if try album.relatedKeys("band").first?.identity == [.string("Japan")] { byJapan += 1 }
      }
      return (label, byJapan)
    }

    // The examples of DocC's Getting started and Querying and observing.
    let twoAtATime = Query("Album", where: "released", .between("1980-01-01", nil)).sorted(by: "released").limited(
      to: 2)
    let page = try await ledger.read { view in try view.objects(twoAtATime) }  // page.objects, page.next
    let more = try await ledger.read { view in try view.objects(twoAtATime.after(page.next)) }
    let count = try await ledger.read(asOf: 1) { view in try view.count(twoAtATime) }

    for try await album in ledger.observe("Album", key: "Tin Drum") {  // ObjectSnapshot?, now and after changes
      print(album?.string("label") ?? "deleted")
      break  // or keep watching
    }
    for try await firstPage in ledger.observe(twoAtATime) {  // [ObjectSnapshot]
      print(firstPage.map(\.key))
      break
    }

    // The model in Swift of DocC's Getting started.
    let modelInCode = try Model(keyCase: .snakeCase) {
      Entity("Band", identity: ["name"], collectionKey: "bands") {
        Attribute("name", .string)
        Attribute("bandDescription", .string)
        Attribute("founded", .date, jsonKey: "info.founded", exported: false)
        Relationship("albums", to: "Album", many: true, inverse: "band")
      }
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("band", to: "Band", inverse: "albums")
      }
    }

    #expect(summary.batchID == 1)
    #expect(albums.count == 2)
    #expect(then != "Virgin Records")
    #expect(json.arrayValue?.count == 2)
    #expect(entries.map(\.batchID) == [2, 1])
    #expect(changed.changes.count == 3)  // Tin Drum relabelled; Stranded deleted, and unlinked from its band
    #expect(result.overridden.isEmpty)
    #expect(report.batches == 4)
    #expect(parts.map(\.batchID) == [5])
    _ = await watcher.value
    #expect(tinDrum?.band == "Japan")
    #expect(putBody.map { String(decoding: $0, as: UTF8.self) }?.contains("\"released_as\":null") == true)
    #expect(postBody?["band"] == "Japan")
    #expect(postBody?["label"] == "Hansa")
    #expect(label != nil)
    #expect(byJapan >= 1)
    #expect(page.objects.count == 2)
    #expect(page.next != nil)
    #expect(!more.objects.isEmpty)
    #expect(count >= page.objects.count + more.objects.count)
    #expect(modelInCode.entities.map(\.name) == ["Band", "Album"])
    #expect(cursor == nil)
    #expect(recent.objects.count == 2)

    // The block above is the README's, line for line.
    let source = try String(contentsOfFile: #filePath, encoding: .utf8)
    let readme = try String(
      contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../../README.md"
      ).standardizedFileURL.path, encoding: .utf8)
    #expect(Self.normalized(Self.block(in: source)) == Self.normalized(Self.readmeBlock(in: readme)))
  }

  /// The lines between `// README begin` and `// README end` of this file.
  static func block(in source: String) -> [String] {
    let lines = source.components(separatedBy: "\n")
    guard let begin = lines.firstIndex(where: { $0.contains("// README" + " begin") }),
      let end = lines.firstIndex(where: { $0.contains("// README" + " end") })
    else { return [] }
    return Array(lines[(begin + 1)..<end])
  }

  /// The README's Swift blocks in order, without their `import` lines, with the test's file
  /// paths; the frame they run in (an `async` function, as this test is) aside.
  static func readmeBlock(in readme: String) -> [String] {
    var lines = readme.components(separatedBy: "\n")[...]
    var result: [String] = []
    while let start = lines.firstIndex(of: "```swift"), let stop = lines[(start + 1)...].firstIndex(of: "```") {
      defer { lines = lines[(stop + 1)...] }
      if lines[start + 1].hasPrefix("@main") { continue }
      result += lines[(start + 1)..<stop].filter { $0 != "import JSONLedger" }.map {
        $0.replacingOccurrences(of: #""bands-model.json""#, with: "modelPath")
          .replacingOccurrences(of: #""/var/cache/bands""#, with: "storePath")
          .replacingOccurrences(of: #""albums.json""#, with: "albumsPath")
      }
    }
    return result
  }

  static func normalized(_ lines: [String]) -> [String] {
    lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }.filter {
      !$0.isEmpty
    }
  }
}
