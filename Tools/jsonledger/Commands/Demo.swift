import ArgumentParser
import Foundation
import JSONLedger
import JSONLedgerPull

struct Demo: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "demo",
    abstract: "Run the main job end to end on a built-in example, narrating each step.")

  @Argument(help: "Where to create the demo store (missing or empty); default: a new temporary directory.")
  var store: String?

  func run() async throws {
    let path =
      store
      ?? FileManager.default.temporaryDirectory.appendingPathComponent("jsonledger-demo-\(UUID().uuidString.prefix(8))")
      .path
    let model = try Model(json: JSONParser.parse(DemoData.model))
    let ledger = try Ledger.open(at: path, model: model)
    Output.line("JSONLedger demo: bands, albums, band members and musicians.")
    Output.line("Store: \(path)\n")

    Output.line("1. The model has \(model.entities.map(\.name).joined(separator: ", ")); JSON keys are snake_case,")
    Output.line("   \"description\" lands in Band.bandDescription, relationships come as keys (\"band\": \"Japan\").\n")

    Output.line("2. Import the first batch (every collection of the document, in one LMDB transaction):")
    let one = try await apply(DemoData.firstBatch, message: "initial import", to: ledger)
    Output.line("   batch \(one.batchID): \(Describe.counts(one))\n")

    Output.line("3. Import a second batch: a new album, a changed label, a new member and musician.")
    Output.line("   Keys the payload leaves out stay as they are.")
    let two = try await apply(DemoData.secondBatch, message: "nightly update", to: ledger)
    Output.line("   batch \(two.batchID): \(Describe.counts(two))\n")

    Output.line("4. The log, newest first (jsonledger log \(path)):")
    for entry in try await ledger.log() {
      Output.line(
        "   batch \(entry.batchID)  \(entry.kind)  \(Describe.counts(entry.statistics))  \"\(entry.metadata.message ?? "")\""
      )
    }
    Output.line("")

    Output.line("5. One object with its relationships (jsonledger get \(path) Band Japan):")
    let japan = try await ledger.read { view in try view.object("Band", key: "Japan") }
    if let japan {
      for line in Describe.object(japan) { Output.line("   " + line) }
    }
    Output.line("")

    Output.line("6. What batch 2 changed (jsonledger show \(path) 2):")
    let record = try await ledger.record(2)
    for lines in try Describe.changes(record.changes.filter { $0.entity == "Album" }, from: 1, to: 2, ledger: ledger) {
      for line in lines { Output.line("   " + line) }
    }
    Output.line("")

    Output.line("7. Albums exported back to the backend's JSON (jsonledger export \(path) --entity Album):")
    let albums = try await ledger.read { view in try view.exportJSON("Album") }
    for line in JSONWriter(options: [.prettyPrinted, .sortedKeys]).string(from: albums).split(separator: "\n") {
      Output.line("   " + line)
    }
    Output.line("")

    Output.line("8. Time travel: Tin Drum's label as of batch 1 and now:")
    let before = try await ledger.read(asOf: 1) { view in try view.object("Album", key: "Tin Drum")?["label"] }
    let now = try await ledger.read { view in try view.object("Album", key: "Tin Drum")?["label"] }
    Output.line("   as of batch 1: \(before?.description ?? "nil"); now: \(now?.description ?? "nil")\n")

    try await pull(albums, into: ledger, store: path)

    let report = try await ledger.verify()
    Output.line(
      "10. Verify: replaying the log rebuilt \(report.entriesCompared) projection entries, byte for byte identical.\n")
    Output.line(
      "Explore it: jsonledger log \(path)   |   jsonledger diff \(path) 1 2   |   jsonledger revert \(path) 2")
  }

  /// Step 9: the albums served by a live API of the demo's own, pulled twice: a run that
  /// finds what the store holds writes nothing; one after the backend changed writes only that.
  func pull(_ albums: JSONValue, into ledger: Ledger, store: String) async throws {
    let api = DemoAPI(items: albums.arrayValue ?? [])
    try await api.serving(at: "albums") { url in
      Output.line("9. Pull a live API: the albums above, served at \(url) two a page with a Link header.")
      Output.line("   jsonledger pull \(store) \(url) --entity Album")
      let plan = PullPlan(sources: [PullSource(url: url, entity: "Album")])
      let first = try await ledger.pull(plan, author: "demo")
      Output.line(
        "   read \(first.pages) pages: \(first.batch.wroteRecord ? "batch \(first.batch.batchID)" : "nothing changed, no batch written")"
      )
      Output.line("   Again: the pages came with ETags, so the pull asks whether they changed (If-None-Match):")
      let again = try await ledger.pull(plan, author: "demo")
      Output.line(
        "   \(again.notModified) of \(again.pages) pages not modified (304): \(again.batch.wroteRecord ? "batch \(again.batch.batchID)" : "no batch written")"
      )
      api.update { albums in
        guard let index = albums.firstIndex(where: { $0["name"] == "Tin Drum" }),
          case .object(var album) = albums[index]
        else { return }
        album["label"] = "Virgin Records Ltd"
        albums[index] = .object(album)
      }
      Output.line("   The backend changes one label; the same pull again:")
      let second = try await ledger.pull(plan, author: "demo")
      Output.line("   read \(second.pages) pages: batch \(second.batch.batchID): \(Describe.counts(second.batch))")
      let record = try await ledger.record(second.batch.batchID)
      let from = second.batch.batchID - 1
      for lines in try Describe.changes(record.changes, from: from, to: second.batch.batchID, ledger: ledger) {
        for line in lines { Output.line("   " + line) }
      }
      Output.line("")
    }
  }

  /// Stages a document keyed by collections and applies it as one batch.
  func apply(_ document: String, message: String, to ledger: Ledger) async throws -> BatchSummary {
    var batch = ledger.makeBatch()
    try batch.stageDocument(try JSONParser.parse(document))
    return try await ledger.apply(batch, message: message, author: "demo")
  }
}
