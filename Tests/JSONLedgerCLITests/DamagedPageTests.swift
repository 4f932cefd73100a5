import Foundation
import JSONLedgerTestSupport
import Testing

/// Bytes flipped inside the data file's pages (B-tree pages, node headers, overflow runs, the
/// free list), one trial each in a copy of one store: `stats`, `export`, `get` and `verify`
/// end with exit 0 or an error, never a signal. More with JSONLEDGER_PAGE_TRIALS.
@Suite("Damaged pages: an error, never a crash")
struct DamagedPageTests {
  static var trials: Int { Int(ProcessInfo.processInfo.environment["JSONLEDGER_PAGE_TRIALS"] ?? "") ?? 40 }

  /// - Reliability: A byte flipped in a random page of `data.mdb` (half of them in page and node headers):
  ///   `stats`, `export`, `get` and `verify` exit 0 or 1 with an error, never a signal (without
  ///   the page walk, 7 of 400 runs died of SIGSEGV or SIGBUS)
  /// - Size: 40 trials in CI; 300 with `JSONLEDGER_PAGE_TRIALS=300`; last by hand: 300: 2026-12-05
  @Test(.tags(.reliability)) func flippedBytesInPagesAreErrorsNotCrashes() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    // Thirty batches rewriting the same albums, so that the file has branch pages, overflow
    // runs (the records) and a free list.
    for _ in 0..<6 { _ = try CommandRunner.run(["stress", store, "--batches", "5", "--objects", "300"]) }
    let original = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
    let pageSize = 4096
    let pages = original.count / pageSize
    #expect(pages > 8)
    var generator = SeededGenerator(seed: 24)
    var outcomes: [String: Int] = [:]
    for trial in 0..<Self.trials {
      let copy = directory.path + "/copy\(trial)"
      try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
      var bytes = original
      // Page headers and node headers are where LMDB trusts most: aim there half the time.
      let page = Int.random(in: 2..<pages, using: &generator)
      let offset =
        Bool.random(using: &generator)
        ? Int.random(in: 0..<64, using: &generator) : Int.random(in: 0..<pageSize, using: &generator)
      bytes[page * pageSize + offset] ^= UInt8.random(in: 1...255, using: &generator)
      try bytes.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
      for command in [["stats", copy], ["export", copy], ["get", copy, "Album", "album 1"], ["verify", copy]] {
        let result = try CommandRunner.run(command)
        outcomes["\(command[0]) \(result.status)", default: 0] += 1
        #expect(
          result.status == 0 || result.status == 1,
          "page \(page) byte \(offset): `\(command[0])` ended with status \(result.status): \(result.error)")
        if result.status == 1 { #expect(result.error.hasPrefix("error: "), "\(result.error)") }
      }
      try FileManager.default.removeItem(atPath: copy)
    }
    #expect(outcomes.keys.contains("verify 1"), "\(outcomes)")
  }

  /// Regression: a free list long enough to be kept on overflow pages was taken for damage.
  @Test func anIntactStoreWithALongFreeListPassesThePageWalk() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "40", "--objects", "400", "--durability", "noSync"])
    let verify = try CommandRunner.run(["verify", store])
    #expect(verify.status == 0, "\(verify.error)")
  }
}
