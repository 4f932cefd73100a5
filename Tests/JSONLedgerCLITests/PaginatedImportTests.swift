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

@Suite("--as-of takes a time")
struct AsOfTimeTests {
  @Test func asOfATimeReadsTheLastBatchAppliedByThen() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "3", "--objects", "2"])
    let now = try CommandRunner.run(["export", store, "--entity", "Album"]).output
    let later = try CommandRunner.run(["export", store, "--entity", "Album", "--as-of", "2999-01-01"])
    #expect(later.status == 0, "\(later.error)")
    #expect(later.output == now)
    let before = try CommandRunner.run(["get", store, "Album", "album 1", "--as-of", "2000-01-01T00:00:00Z"])
    #expect(before.status == 1)
    #expect(before.error.contains("no batch was applied at or before 2000-01-01T00:00:00Z"), "\(before.error)")
    let diff = try CommandRunner.run(["diff", store, "2000-01-01", "2999-01-01", "--json"])
    #expect(diff.status == 0, "\(diff.error)")
    #expect(diff.output.contains("\"from\": 0") && diff.output.contains("\"to\": 3"), "\(diff.output)")
    let junk = try CommandRunner.run(["export", store, "--as-of", "yesterday"])
    #expect(junk.status != 0)
  }
}

@Suite("revert --keep-later")
struct RevertKeepLaterCLITests {
  @Test func keepLaterRevertsWhatNoLaterBatchChangedAndSaysWhatItKept() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    // Each stress batch sets every album's label: batch 3 changed what batch 2 set.
    _ = try CommandRunner.run(["stress", store, "--batches", "3", "--objects", "2"])
    let refused = try CommandRunner.run(["revert", store, "2"])
    #expect(refused.status == 3)
    #expect(refused.error.contains("--keep-later"), "\(refused.error)")
    let both = try CommandRunner.run(["revert", store, "2", "--force", "--keep-later"])
    #expect(both.status != 0)
    let kept = try CommandRunner.run(["revert", store, "2", "--keep-later"])
    #expect(kept.status == 0, "\(kept.error)")
    #expect(kept.output.contains("kept 2 later changes (not reverted)"), "\(kept.output)")
    // The labels batch 3 set stay; the album batch 2 created, untouched since, is gone.
    let album = try CommandRunner.run(["get", store, "Album", "album 0", "--json"]).output
    #expect(album.contains("round 3"), "\(album)")
    #expect(try CommandRunner.run(["get", store, "Album", "extra 2"]).status == 1)
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }
}
