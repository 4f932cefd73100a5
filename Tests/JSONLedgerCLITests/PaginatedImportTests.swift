import Foundation
import JSONLedgerTestSupport
import Testing

/// The pages of a paginated response imported as one batch with --prune keep every object
/// any page holds; an empty payload with --prune deletes everything and says so.
@Suite("jsonledger import of paginated responses")
struct PaginatedImportTests {
  @Test func pagesImportedTogetherWithPruneKeepEveryPageAndAnEmptyPayloadSaysItDeletedAll() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    let model = try directory.write(
      "model.json", #"{"entities": {"Issue": {"identity": "id", "attributes": {"id": "int64", "title": "string"}}}}"#)
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let all = try directory.write("all.json", #"[{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}, {"id": 5}]"#)
    #expect(try CommandRunner.run(["import", store, all, "--entity", "Issue"]).status == 0)
    let first = try directory.write("page1.json", #"[{"id": 1}, {"id": 2}]"#)
    let second = try directory.write("page2.json", #"[{"id": 3}, {"id": 4}]"#)
    let pages = try CommandRunner.run(["import", store, first, second, "--entity", "Issue", "--prune", "--json"])
    #expect(pages.status == 0, "\(pages.error)")
    #expect(pages.output.contains("\"deleted\": 1"), "\(pages.output)")
    #expect(pages.output.contains("\"batch\": 2"), "\(pages.output)")
    let export = try CommandRunner.run(["export", store, "--entity", "Issue"]).output
    for id in 1...4 { #expect(export.contains("\"id\": \(id)"), "\(export)") }
    #expect(!export.contains("\"id\": 5"))
    let empty = try CommandRunner.run(["import", store, "-", "--entity", "Issue", "--prune"], input: "[]")
    #expect(empty.status == 0, "\(empty.error)")
    #expect(empty.output.contains("deleted all Issue objects"), "\(empty.output)")
  }
}
