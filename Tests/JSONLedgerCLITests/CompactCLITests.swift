import Foundation
import JSONLedgerTestSupport
import Testing

@Suite("jsonledger compact and restore-log")
struct CompactCLITests {
  @Test func compactThenRestoreGivesBackTheArchivedBatches() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "10", "--objects", "20"])
    let before = try CommandRunner.run(["export", store, "--as-of", "4"]).output
    let refused = try CommandRunner.run(["compact", store, "--keep-batches", "3"])
    #expect(refused.status == 1)
    #expect(refused.error.contains("needs an archive"), "\(refused.error)")
    let archive = directory.path + "/archive"
    let compact = try CommandRunner.run(["compact", store, "--keep-batches", "3", "--archive", archive, "--json"])
    #expect(compact.status == 0, "\(compact.error)")
    #expect(compact.output.contains("\"horizon\": 7"), "\(compact.output)")
    let old = try CommandRunner.run(["get", store, "Album", "album 1", "--as-of", "4"])
    #expect(old.status == 1)
    #expect(old.error.contains("archived by compact"), "\(old.error)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    let restored = directory.path + "/restored"
    let restore = try CommandRunner.run(["restore-log", restored, archive])
    #expect(restore.status == 0, "\(restore.error)")
    #expect(try CommandRunner.run(["export", restored, "--as-of", "4"]).output == before)
    #expect(try CommandRunner.run(["verify", restored]).status == 0)
  }
}
