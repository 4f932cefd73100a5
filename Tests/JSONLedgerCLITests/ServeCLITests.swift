import Foundation
import JSONLedgerTestSupport
import Testing

/// `jsonledger serve` refuses the settings that would expose writes, before it binds anything,
/// and serves the store as it is when another process changes its model.
@Suite("jsonledger serve's arguments and store")
struct ServeCLITests {
  @Test func writesAreNeverOpenToAnotherAddressAndATokenMustBeLongEnough() throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", directory.storePath, "--model", model]).status == 0)
    let open = try CommandRunner.run(["serve", directory.storePath, "--host", "0.0.0.0", "--port", "0"])
    #expect(open.status != 0)
    #expect(open.error.contains("--token-file, or --read-only"), "\(open.error)")
    let short = try directory.write("token", "abc\n")
    let weak = try CommandRunner.run(["serve", directory.storePath, "--port", "0", "--token-file", short])
    #expect(weak.status != 0)
    #expect(weak.error.contains("use at least 16"), "\(weak.error)")
    let missing = try CommandRunner.run([
      "serve", directory.storePath, "--port", "0", "--token-file", directory.path + "/none",
    ])
    #expect(missing.status != 0)
    #expect(missing.error.contains("cannot read the token file"), "\(missing.error)")
    let reads = try CommandRunner.run(["serve", directory.storePath, "--token-for-reads"])
    #expect(reads.status != 0)
    #expect(reads.error.contains("--token-for-reads needs --token-file"), "\(reads.error)")
    let port = try CommandRunner.run(["serve", directory.storePath, "--port", "70000"])
    #expect(port.error.contains("--port must be from 0 to 65535"), "\(port.error)")
  }

  /// Regression: a server kept the model it opened with, and answered every request with
  /// `modelChanged` once `jsonledger migrate` (or a replica's follower) migrated the store.
  @Test func aServerReadsAndWritesUnderTheNewModelOnceAnotherProcessMigratesTheStore() async throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let first = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", store, first]).status == 0)
    let server = try ServerProcess(store: store)
    defer { server.stop() }
    let (before, entities) = try await server.get("/v1/entities")
    #expect(before == 200, "\(entities)")
    #expect(!entities.contains("Label"), "\(entities)")

    let newModel = CLIFixtures.model.replacingOccurrences(
      of: #""Album": {"identity": "name","#,
      with: #""Label": {"identity": "name", "attributes": {"name": "string"}}, "Album": {"identity": "name","#)
    let newPath = try directory.write("model-2.json", newModel)
    let migrate = try CommandRunner.run(["migrate", store, "--model", newPath])
    #expect(migrate.status == 0, "\(migrate.error)")

    let (after, migrated) = try await server.get("/v1/entities")
    #expect(after == 200, "\(migrated)")
    #expect(migrated.contains("Label"), "\(migrated)")
    let (page, console) = try await server.get("/entities/Label")
    #expect(page == 200, "\(console)")
    let (created, answer) = try await server.post("/v1/batches?entity=Label", #"[{"name": "Virgin"}]"#)
    #expect(created == 201, "\(answer)")
    let (read, label) = try await server.get("/v1/entities/Label/objects/Virgin")
    #expect(read == 200, "\(label)")
  }

  /// Regression: a request the HTTP parser refused (a 100 KB query string, bytes that are not
  /// HTTP) was answered `400` with an empty body, where every other error of the API is JSON
  /// with a code.
  @Test func aRequestTheParserRefusesIsAnsweredAsJSONWithACode() async throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let server = try ServerProcess(store: store)
    defer { server.stop() }
    let (long, answer) = try await server.get("/v1/entities?filler=" + String(repeating: "a", count: 100_000))
    #expect(long == 431, "\(answer)")
    #expect(answer.contains(#""code":"requestTooLarge""#), "\(answer)")

    let port = try #require(server.port)
    let garbage = try Self.exchange("NOT HTTP AT ALL\r\n\r\n", port: port)
    #expect(garbage.hasPrefix("HTTP/1.1 400"), "\(garbage)")
    #expect(garbage.contains(#""code":"badRequest""#), "\(garbage)")
    #expect(garbage.lowercased().contains("content-type: application/json"), "\(garbage)")
    // After a request still being answered, the answer to it comes whole, then the refusal.
    let pipelined = try Self.exchange(
      "GET /v1/entities HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nNOT HTTP\r\n\r\n", port: port)
    #expect(pipelined.hasPrefix("HTTP/1.1 200"), "\(pipelined)")
    #expect(pipelined.contains("Album"), "\(pipelined)")
    #expect(pipelined.contains("HTTP/1.1 400"), "\(pipelined)")
    // A body whose chunked encoding breaks part way: the client's doing (it was a 500 and a
    // server error in the log), and nothing written.
    let chunked = try Self.exchange(
      "POST /v1/batches?entity=Album HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Transfer-Encoding: chunked\r\n\r\nZZ\r\n[]\r\n0\r\n\r\n", port: port)
    #expect(chunked.hasPrefix("HTTP/1.1 400"), "\(chunked)")
    #expect(chunked.contains(#""code":"badRequest""#), "\(chunked)")
    let (logged, log) = try await server.get("/v1/log")
    #expect(logged == 200 && !log.contains(#""batch""#), "\(log)")

    let (after, entities) = try await server.get("/v1/entities")
    #expect(after == 200, "\(entities)")
  }

  /// Sends `request` as it is over a new TCP connection (bash's `/dev/tcp`) and returns all
  /// the server answers before it closes the connection, or within `waiting` seconds.
  static func exchange(_ request: String, port: UInt16, waiting: Int = 10) throws -> String {
    let directory = try TemporaryDirectory()
    let input = try directory.write("request", request)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [
      "-c", "exec 3<>/dev/tcp/127.0.0.1/\(port); cat \"$0\" >&3; timeout -s KILL \(waiting) cat <&3", input,
    ]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }
}
