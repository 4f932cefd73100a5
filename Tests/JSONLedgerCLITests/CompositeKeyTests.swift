import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Testing

/// A key given on the command line reads one way in every command: one rule in the library
/// (`CallerKey`) turns the comma form of a composite key into an identity.
@Suite("Composite keys on the command line")
struct CompositeKeyTests {
  @Test func getAndLogFindACompositeKeyObjectByTheSameCommaForm() throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write(
      "cards.json",
      #"{"entities": {"Card": {"identity": ["suit", "rank"], "attributes": {"suit": "string", "rank": "string", "owner": "string"}}}}"#
    )
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let cards = try directory.write("cards-1.json", #"[{"suit": "Hearts", "rank": "J", "owner": "ann"}]"#)
    #expect(try CommandRunner.run(["import", store, cards, "--entity", "Card"]).status == 0)
    let moved = try directory.write("cards-2.json", #"[{"suit": "Hearts", "rank": "J", "owner": "bob"}]"#)
    #expect(try CommandRunner.run(["import", store, moved, "--entity", "Card"]).status == 0)
    let get = try CommandRunner.run(["get", store, "Card", "Hearts,J"])
    #expect(get.status == 0, "\(get.error)")
    #expect(get.output.contains("bob"), "\(get.output)")
    let log = try CommandRunner.run(["log", store, "--entity", "Card", "--key", "Hearts,J"])
    #expect(log.status == 0, "\(log.error)")
    #expect(log.output.contains("batch 2") && log.output.contains("batch 1"), "\(log.output)")
    let wrong = try CommandRunner.run(["log", store, "--entity", "Card", "--key", "Hearts"])
    #expect(wrong.status == 1)
    #expect(wrong.error.contains("give 2 key values"), "\(wrong.error)")
    // blame: the owner was set by batch 2, suit and rank by batch 1.
    let blame = try CommandRunner.run(["blame", store, "Card", "Hearts,J", "--json"])
    #expect(blame.status == 0, "\(blame.error)")
    let fields = try JSONParser.parse(Array(blame.output.utf8)).arrayValue ?? []
    #expect(fields.map { $0["field"] } == ["owner", "rank", "suit"])
    #expect(fields.map { $0["batch"] } == [2, 1, 1])
  }
}
