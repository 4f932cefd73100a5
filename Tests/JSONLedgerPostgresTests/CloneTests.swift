import Foundation
import JSONLedgerTestSupport
import Testing

/// `clone --reset` moves the old store aside (`PATH.replaced`), then the new one into place,
/// then removes the old one. Killed between its two moves it leaves the old store aside and no
/// store at `PATH`: running it again builds the replica and removes what was left aside.
@Suite(
  "Cloning: what an interrupted reset left aside goes",
  .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct CloneTests {
  /// - Reliability: A `clone --reset` interrupted between its two moves (the old store left at `PATH.replaced`,
  ///   none at `PATH`): a clone builds the replica and removes what was left aside
  /// - Size: 1 case
  @Test(.tags(.reliability)) func aCloneRemovesTheStoreAnInterruptedResetLeftAside() throws {
    let directory = try TemporaryDirectory()
    let cluster = try PostgresCluster()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let target = directory.path + "/follower"
    let aside = target + ".replaced"
    // What a reset killed between its moves leaves: an old store aside, none at the target.
    try FileManager.default.copyItem(atPath: leader, toPath: aside)
    let cloned = try CommandRunner.run(["clone", cluster.url, target, "--ledger", "main", "--reset"])
    #expect(cloned.status == 0, "\(cloned.error)")
    #expect(!FileManager.default.fileExists(atPath: aside))
    let exported = try CommandRunner.run(["export", target])
    #expect(exported.status == 0, "\(exported.error)")
    #expect(exported.output == (try CommandRunner.run(["export", leader])).output)
  }
}
