import Foundation
import JSONLedgerTestSupport
import Testing

/// `pull` on replicas: a write through the remote like any import.
@Suite("A pull through a replica", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicaPullTests {
  /// A real HTTP server (Python's `http.server`) serving `directory` on a free loopback port.
  static func serve(_ directory: String) throws -> (Process, Int) {
    let port = try PostgresCluster.freePort()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", directory]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Up once it answers.
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline,
      (try? CommandRunner.run(
        ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"], program: URL(fileURLWithPath: "/usr/bin/env")
      ).status) != 0
    {
      usleep(100_000)
    }
    return (process, port)
  }

  /// Two machines pulling the same pages at the same head write one batch: the second is
  /// answered as already applied, through the remote's idempotency keys; once both follow,
  /// they are identical.
  @Test func twoMachinesPullingTheSamePagesWriteOneBatch() throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let site = directory.path + "/site"
    try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
    _ = try directory.write("site/albums.json", ReplicaFixtures.albums("pulled", count: 4))
    let (server, port) = try Self.serve(site)
    defer { kill(server.processIdentifier, SIGKILL) }
    let url = "http://127.0.0.1:\(port)/albums.json"
    let first = try ReplicationTests.run(["pull", leader, url, "--entity", "Album"])
    #expect(first.output.contains("batch 2: 4 created"), "\(first.output)")
    let second = try ReplicationTests.run(["pull", clone, url, "--entity", "Album"])
    #expect(second.output.contains("already applied as batch 2"), "\(second.output)")
    #expect(try cluster.psql("SELECT max(batch) FROM jsonledger_log") == "2")
    try ReplicationTests.run(["follow", clone, "--until-caught-up"])
    try ReplicationTests.run(["follow", leader, "--until-caught-up"])
    try ReplicationTests.expectIdentical([leader, clone])
  }
}
