import Foundation
import JSONLedgerTestSupport
import Testing

/// `jsonledger pull`, a real process, against a real HTTP server of the tests' own.
@Suite("jsonledger pull")
struct PullCLITests {
  /// Runs the tool on a thread of its own: the server answering it runs in this process.
  static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> CommandRunner.Result {
    let result = await withCheckedContinuation { continuation in
      Thread {
        continuation.resume(returning: Result { try CommandRunner.run(arguments, environment: environment) })
      }.start()
    }
    return try result.get()
  }

  /// Every byte of every file under `path`, as one text (binary parts and all).
  static func bytes(under path: String) throws -> String {
    var text = ""
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
      if let data = FileManager.default.contents(atPath: path + "/" + name) {
        text += String(decoding: data, as: UTF8.self)
      }
    }
    return text
  }

  /// The token a pull sends, in a header and in the URL, appears nowhere: not in the store's
  /// files, the record, `log`, `show`, nor the tool's output or errors.
  @Test func aTokenIsWrittenNowhere() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["init", store, "--model", try directory.write("model.json", PullTests.model)])
    let api = TestAPI()
    let token = "tok-5f2b9c0e-never-written"
    let secret = "qs-8d1e-never-written"
    try await api.serve { base in
      api.set(
        "/issues?access_token=\(secret)", json: PullTests.issues(1...2),
        headers: ["Link": #"</issues?access_token=\#(secret)&page=2>; rel="next""#])
      api.set("/issues?access_token=\(secret)&page=2", json: PullTests.issues(3...3))
      let url = base + "/issues?access_token=\(secret)"
      let pulled = try await Self.run(
        ["pull", store, url, "--entity", "Issue", "--header-env", "Authorization=PULL_TOKEN"],
        environment: ["PULL_TOKEN": "Bearer \(token)"])
      #expect(pulled.status == 0, "\(pulled.error)")
      #expect(pulled.output.contains("read 2 pages"), "\(pulled.output)")
      #expect(pulled.output.contains("batch 1: 3 created"), "\(pulled.output)")
      #expect(api.requests.allSatisfy { $0.headers["authorization"] == "Bearer \(token)" })
      let again = try await Self.run([
        "pull", store, url, "--entity", "Issue", "--header", "Authorization: Bearer \(token)", "--json",
      ])
      #expect(again.status == 0, "\(again.error)")
      #expect(again.output.contains(#""changedNothing": true"#), "\(again.output)")
      let failed = try await Self.run([
        "pull", store, base + "/nothing?token=\(secret)", "--entity", "Issue", "--attempts", "1",
      ])
      #expect(failed.status == 1)
      #expect(failed.error.contains("404"), "\(failed.error)")
      let log = try CommandRunner.run(["log", store, "--json"])
      let show = try CommandRunner.run(["show", store, "1"])
      #expect(log.output.contains("access_token=REDACTED"), "\(log.output)")
      for text in [
        pulled.output, pulled.error, again.output, failed.error, log.output, show.output, try Self.bytes(under: store),
      ] {
        #expect(!text.contains(token))
        #expect(!text.contains(secret))
      }
    }
  }

  @Test(arguments: [
    (["--entity", "Issue"], "give the first page's URL, or --plan FILE"),
    (["http://127.0.0.1:1/x"], "--entity names the entity"),
    (["http://127.0.0.1:1/x", "--entity", "Issue", "--header", "NoColon"], "no colon"),
    (
      ["http://127.0.0.1:1/x", "--entity", "Issue", "--header-env", "Authorization=JSONLEDGER_NO_SUCH"],
      "the environment has no"
    ),
    (["--plan", "/nonexistent/pull.json"], "cannot read the pull file"),
  ])
  func badArgumentsAreNamedAndNothingIsWritten(arguments: [String], message: String) async throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["init", store, "--model", try directory.write("model.json", PullTests.model)])
    let result = try await Self.run(["pull", store] + arguments)
    #expect(result.status != 0)
    #expect(result.error.contains(message), "\(result.error)")
    let log = try CommandRunner.run(["log", store])
    #expect(!log.output.contains("batch 1"), "\(log.output)")
  }

  /// `--every` pulls again after each run, a run that fails is said and the next tried, and an
  /// interrupt ends it with exit 0 once the run under way is whole.
  @Test func aScheduledPullRunsAgainUntilInterrupted() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["init", store, "--model", try directory.write("model.json", PullTests.model)])
    let api = TestAPI()
    try await api.serve { base in
      api.set(
        "/issues", TestAPI.Answer(body: PullTests.issues(1...2)),
        TestAPI.Answer(status: .badRequest, body: "{}"), TestAPI.Answer(body: PullTests.issues(1...3)))
      let process = Process()
      process.executableURL = CommandRunner.executable
      process.arguments = ["pull", store, base + "/issues", "--entity", "Issue", "--every", "1s", "--attempts", "1"]
      let (output, errors) = (Pipe(), Pipe())
      process.standardOutput = output
      process.standardError = errors
      try process.run()
      let deadline = Date().addingTimeInterval(120)
      while api.requests.count < 4, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
      kill(process.processIdentifier, SIGINT)
      let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      #expect(process.terminationStatus == 0, "\(said)")
      #expect(printed.contains("batch 1: 2 created"), "\(printed)")
      #expect(said.contains("this run failed, nothing written"), "\(said)")
      #expect(said.contains("400"), "\(said)")
      #expect(printed.contains("batch 2: 1 created"), "\(printed)")
    }
  }

  /// `serve --pull` pulls a plan's sources beside the API on a schedule; its batches are in
  /// the log the API serves.
  @Test func aServerPullsBesideItsAPI() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["init", store, "--model", try directory.write("model.json", PullTests.model)])
    let api = TestAPI()
    try await api.serve { base in
      api.set("/issues", TestAPI.Answer(body: PullTests.issues(1...2)), TestAPI.Answer(body: PullTests.issues(1...3)))
      let plan = try directory.write("pull.json", #"{"sources": [{"url": "\#(base)/issues", "entity": "Issue"}]}"#)
      let server = try ServerProcess(store: store, arguments: ["--pull", plan, "--pull-every", "1s"])
      defer { server.stop() }
      var log = ""
      let deadline = Date().addingTimeInterval(120)
      while !log.contains(#""batch":2"#), Date() < deadline {
        try await Task.sleep(for: .milliseconds(200))
        log = try await server.get("/v1/log").1
      }
      #expect(log.contains(#""batch":2"#), "\(log)")
      #expect(log.contains("pull: 1 page"), "\(log)")
    }
  }

  /// The plan's headers go to the first URL's origin only: a next page or a redirect on
  /// another origin (another port here) is asked for without them.
  @Test func headersAreNotHandedToAnotherOrigin() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["init", store, "--model", try directory.write("model.json", PullTests.model)])
    let (home, elsewhere) = (TestAPI(), TestAPI())
    try await elsewhere.serve { other in
      try await home.serve { base in
        home.set("/issues", json: PullTests.issues(1...1), headers: ["Link": #"<\#(base)/moved>; rel="next""#])
        home.set("/moved", TestAPI.Answer(status: .temporaryRedirect, headers: ["Location": "\(other)/page"], body: ""))
        elsewhere.set("/page", json: PullTests.issues(2...2), headers: ["Link": #"<\#(other)/last>; rel="next""#])
        elsewhere.set("/last", json: PullTests.issues(3...3))
        let pulled = try await Self.run([
          "pull", store, base + "/issues", "--entity", "Issue", "--header", "Authorization: Bearer home-token",
          "--header", "X-Api-Key: home-key",
        ])
        #expect(pulled.status == 0, "\(pulled.error)")
        #expect(pulled.output.contains("read 3 pages"), "\(pulled.output)")
        #expect(home.requests.allSatisfy { $0.headers["x-api-key"] == "home-key" })
        #expect(elsewhere.requests.count == 2)
        #expect(elsewhere.requests.allSatisfy { $0.headers["authorization"] == nil && $0.headers["x-api-key"] == nil })
      }
    }
  }
}
