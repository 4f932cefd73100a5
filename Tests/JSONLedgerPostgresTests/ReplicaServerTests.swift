import Foundation
import JSONLedgerTestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `jsonledger serve` on a replica: its API's writes go through the remote's head lock, as
/// the CLI's do, and a remote that is down is answered 503 with nothing written.
@Suite("A replica's server", .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is installed"))
struct ReplicaServerTests {
  /// A running `jsonledger serve` and the base URL it printed.
  struct Server {
    let process: Process
    let base: String

    init(store: String) throws {
      process = Process()
      process.executableURL = CommandRunner.executable
      process.arguments = ["serve", store, "--port", "0"]
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      // The first line names the port: "serving STORE at http://127.0.0.1:PORT/".
      var line = Data()
      let deadline = Date().addingTimeInterval(30)
      while !line.contains(UInt8(ascii: "\n")), Date() < deadline {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line += chunk
      }
      let text = String(decoding: line, as: UTF8.self)
      guard let range = text.range(of: "http://") else {
        process.terminate()
        throw ClusterFailure("serve did not say where it serves: \(text)")
      }
      base = String(text[range.lowerBound...].prefix { !$0.isWhitespace }).trimmingCharacters(in: ["/"])
    }

    func stop() {
      process.terminate()
      process.waitUntilExit()
    }

    /// POSTs `body` to `path`; the status and the body of the answer.
    func post(_ path: String, _ body: String = "", headers: [String: String] = [:]) async throws -> (Int, String) {
      var request = URLRequest(url: try #require(URL(string: base + path)))
      request.httpMethod = "POST"
      request.httpBody = Data(body.utf8)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
      for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
      let (data, response) = try await URLSession.shared.data(for: request)
      return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
  }

  @Test func aReplicasServerWritesThroughTheRemoteAndSays503WhileItIsDown() async throws {
    let cluster = try PostgresCluster()
    let directory = try TemporaryDirectory()
    let leader = try ReplicaFixtures.published(in: directory, cluster: cluster)
    let clone = directory.path + "/clone"
    try ReplicationTests.run(["clone", cluster.url, clone, "--ledger", "main"])
    let server = try Server(store: clone)
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
