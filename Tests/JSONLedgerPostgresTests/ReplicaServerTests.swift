import Foundation
import JSONLedgerTestSupport
import Testing

/// `jsonledger serve` on a replica: its API's writes go through the remote's head lock, as
/// the CLI's do, and a remote that is down is answered 503 with nothing written.
@Suite("A replica's server", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicaServerTests {
  /// - Reliability: `serve` on a replica: API writes land in PostgreSQL; with the server stopped they answer
  ///   503 with nothing written, and the retry with its key lands once
  /// - Size: 3 writes
  @Test(.tags(.reliability)) func aReplicasServerWritesThroughTheRemoteAndSays503WhileItIsDown() async throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let server = try ServerProcess(store: clone)
    defer { server.stop() }

    let albums = ReplicaFixtures.albums("http", count: 3)
    let (created, answer) = try await server.post(
      "/v1/batches?entity=Album", albums, headers: ["Idempotency-Key": "h1"])
    #expect(created == 201, "\(answer)")
    #expect(answer.contains("\"batch\":2") || answer.contains("\"batch\": 2"), "\(answer)")
    #expect(try cluster.psql("SELECT max(batch), count(*) FROM jsonledger_log") == "2|2")
    // The same key is the batch already applied, found under the remote's lock.
    let (again, _) = try await server.post("/v1/batches?entity=Album", albums, headers: ["Idempotency-Key": "h1"])
    #expect(again == 200)
    let (reverted, revertAnswer) = try await server.post("/v1/batches/2/revert")
    #expect(reverted == 201, "\(revertAnswer)")
    #expect(try cluster.psql("SELECT max(batch) FROM jsonledger_log") == "3")

    try cluster.stop()
    let (down, downAnswer) = try await server.post(
      "/v1/batches?entity=Album", ReplicaFixtures.albums("down", count: 1), headers: ["Idempotency-Key": "h2"])
    #expect(down == 503, "\(downAnswer)")
    #expect(downAnswer.contains("remoteUnavailable"), "\(downAnswer)")
    #expect(try ReplicationTests.run(["log", clone, "--json"]).output.contains("\"batch\": 4") == false)
    try cluster.start()
    let (landed, _) = try await server.post(
      "/v1/batches?entity=Album", ReplicaFixtures.albums("down", count: 1), headers: ["Idempotency-Key": "h2"])
    #expect(landed == 201)
    server.stop()
    try ReplicationTests.expectIdentical([leader, clone])
  }
}
