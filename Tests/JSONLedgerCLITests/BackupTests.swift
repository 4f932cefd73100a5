import Foundation
import JSONLedgerTestSupport
import Testing

@Suite("jsonledger backup")
struct BackupTests {
  /// - Reliability: A backup taken while a writer process commits: the copy opens, verifies and takes writes
  /// - Size: 200 batches
  @Test(.tags(.reliability)) func aBackupTakenWhileAWriterRunsOpensAndVerifies() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let writer = try CommandRunner.startWriter(store: store, batches: 200)
    usleep(200_000)
    let copy = directory.path + "/copy"
    let backup = try CommandRunner.run(["backup", store, copy, "--json"])
    writer.waitUntilExit()
    #expect(backup.status == 0, "\(backup.error)")
    #expect(backup.output.contains("\"head\""), "\(backup.output)")
    let verify = try CommandRunner.run(["verify", copy])
    #expect(verify.status == 0, "\(verify.error)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    // The copy is a store of its own: it takes writes.
    let more = try CommandRunner.run(["stress", copy, "--batches", "1", "--objects", "5"])
    #expect(more.status == 0, "\(more.error)")
  }

  @Test func aBackupIntoADirectoryThatHoldsFilesIsRefused() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "1", "--objects", "5"])
    try FileManager.default.createDirectory(atPath: directory.path + "/full", withIntermediateDirectories: true)
    _ = try directory.write("full/file.txt", "x")
    let result = try CommandRunner.run(["backup", store, directory.path + "/full"])
    #expect(result.status != 0)
    #expect(result.error.contains("not an empty directory"), "\(result.error)")
  }
}
