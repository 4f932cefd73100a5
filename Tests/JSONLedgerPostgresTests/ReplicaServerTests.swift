import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

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

  /// POSTs `body` as JSON to `url`, blocking this thread (`ServerProcess.kill(whileClients:…)`'s
  /// clients run on threads of their own): the status, or nil when no answer came.
  static func post(_ body: String, to url: String) -> Int? {
    guard let url = URL(string: url) else { return nil }
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data(body.utf8)
    let answer = Mutex<Int?>(nil)
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: request) { _, response, _ in
      answer.withLock { $0 = (response as? HTTPURLResponse)?.statusCode }
      done.signal()
    }.resume()
    done.wait()
    return answer.withLock { $0 }
  }

  /// - Reliability: `serve` on a replica killed with SIGKILL while 16 clients each POST one new album at a time
  ///   (applies that wait for the remote's lock together are appended in one PostgreSQL transaction): the
  ///   store verifies, catches up and verifies against the remote, every album a client was answered 201 for
  ///   is there, and every record is one client's whole batch
  /// - Size: 2 kills, after 30 and 60 answered writes
  @Test(.tags(.reliability)) func aReplicasServerKilledWhileItsWritesAreAppendedTogetherKeepsEveryWriteItAnswered()
    throws
  {
    let cluster = try PostgresCluster()
    for trial in 0..<2 {
      let directory = try TemporaryDirectory()
      let leader = try ReplicaFixtures.published(in: directory, cluster: cluster, ledger: "killed\(trial)")
      let clone = directory.path + "/clone"
      try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "killed\(trial)"])
      let before = try ReplicationTests.head(of: clone)
      let server = try ServerProcess(store: clone)
      let base = server.base
      // Killed once some writes were answered, with others in flight.
      let enough = 30 * (trial + 1)
      let acknowledged = server.kill(haveWritten: enough) { client, n -> String? in
        let name = "c\(client)-\(n)"
        let album = #"[{"name": "\#(name)", "band": "B\#(client % 3)"}]"#
        return Self.post(album, to: base + "/v1/batches?entity=Album") == 201 ? name : nil
      }
      #expect(acknowledged.count >= enough)

      try ReplicationTests.run(["verify", clone])
      // Caught up on what the remote committed and the store did not, and the same as the leader.
      try ReplicationTests.expectIdentical([clone, leader])
      let ledger = try Ledger.open(at: clone)
      defer { ledger.close() }
      let stored = try ledger.read { view in
        Set(
          try view.objects("Album").compactMap { album -> String? in
            guard case .string(let name)? = album["name"], name.hasPrefix("c") else { return nil }
            return name
          })
      }
      #expect(
        acknowledged.subtracting(stored).isEmpty, "answered 201 but not stored: \(acknowledged.subtracting(stored))")
      #expect(try ledger.head - before == UInt64(stored.count))
    }
  }
}
