import Foundation
import JSONLedgerTestSupport
import Testing

/// The requests a web page could make through a user's browser, against a real `serve`
/// (reliability round four, H9): writes from another site, writes that are not JSON, and
/// requests addressed to another host name (DNS rebinding) are refused before any route runs.
@Suite("serve refuses what another site's page could send")
struct ServeTrustBoundaryTests {
  static func request(_ method: String, _ path: String, _ headers: [String], body: String = "") -> String {
    var lines = ["\(method) \(path) HTTP/1.1"] + headers
    if !body.isEmpty || method == "POST" { lines.append("Content-Length: \(body.utf8.count)") }
    lines.append("Connection: close")
    return lines.joined(separator: "\r\n") + "\r\n\r\n" + body
  }

  /// - Reliability: `serve` on loopback: a foreign `Host` is 421; a write with a cross-site `Origin` or
  ///   `Sec-Fetch-Site` is 403, a `text/plain` or form body 415, nothing written; `bearer` in
  ///   lower case is accepted (H9)
  /// - Size: 8 requests
  @Test(.tags(.reliability)) func crossSiteWritesNonJSONWritesAndForeignHostsAreRefused() async throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let server = try ServerProcess(store: store)
    defer { server.stop() }
    let port = try #require(server.port)
    let body = #"[{"name": "Tin Drum"}]"#
    let host = "Host: 127.0.0.1:\(port)"
    let json = "Content-Type: application/json"
    // A form or a text/plain body, which a page sends without asking first.
    let text = try ServeCLITests.exchange(
      Self.request("POST", "/v1/batches?entity=Album", [host, "Content-Type: text/plain"], body: body), port: port)
    #expect(text.hasPrefix("HTTP/1.1 415"), "\(text)")
    #expect(text.contains(#""code":"unsupportedMediaType""#), "\(text)")
    let rewind = try ServeCLITests.exchange(Self.request("POST", "/v1/rewind?to=0", [host]), port: port)
    #expect(rewind.hasPrefix("HTTP/1.1 415"), "\(rewind)")
    // A page of another origin.
    let foreign = try ServeCLITests.exchange(
      Self.request("POST", "/v1/batches?entity=Album", [host, json, "Origin: http://evil.example"], body: body),
      port: port)
    #expect(foreign.hasPrefix("HTTP/1.1 403"), "\(foreign)")
    #expect(foreign.contains(#""code":"crossSiteRequest""#), "\(foreign)")
    let crossSite = try ServeCLITests.exchange(
      Self.request("POST", "/v1/batches?entity=Album", [host, json, "Sec-Fetch-Site: cross-site"], body: body),
      port: port)
    #expect(crossSite.hasPrefix("HTTP/1.1 403"), "\(crossSite)")
    // DNS rebinding: a name that resolves to 127.0.0.1, reads included.
    let rebound = try ServeCLITests.exchange(
      Self.request("GET", "/v1/entities", ["Host: evil.example:\(port)"]), port: port)
    #expect(rebound.hasPrefix("HTTP/1.1 421"), "\(rebound)")
    let (logged, log) = try await server.get("/v1/log")
    #expect(logged == 200 && !log.contains(#""batch""#), "nothing was written: \(log)")
    // The console's own requests, and a client such as curl, go through.
    let own = try ServeCLITests.exchange(
      Self.request(
        "POST", "/v1/batches?entity=Album",
        ["Host: localhost:\(port)", json, "Origin: http://localhost:\(port)", "Sec-Fetch-Site: same-origin"],
        body: body), port: port)
    #expect(own.hasPrefix("HTTP/1.1 201"), "\(own)")
  }

  @Test func theBearerSchemeIsCaseInsensitive() async throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let token = try directory.write("token", "0123456789abcdef0123")
    chmod(token, 0o600)
    let server = try ServerProcess(store: store, arguments: ["--token-file", token])
    defer { server.stop() }
    let (lower, answer) = try await server.post(
      "/v1/batches?entity=Album", #"[{"name": "a"}]"#, headers: ["Authorization": "bearer 0123456789abcdef0123"])
    #expect(lower == 201, "\(answer)")
  }
}

/// Round four of the new user's list: an interrupt stops a chunked import between two parts,
/// and the error names the parts applied.
@Suite("A chunked import stopped by a signal")
struct ChunkedImportSignalTests {
  /// - Reliability: A chunked import sent SIGINT: it stops between parts, names the parts applied and the key
  ///   to resume with; the re-run finishes
  /// - Size: 1 signal
  @Test(.tags(.reliability)) func anInterruptStopsBetweenPartsAndNamesThePartsApplied() throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let albums = (0..<3000).map { #"{"name": "album \#($0)"}"# }.joined(separator: ",")
    let file = try directory.write("albums.json", "[" + albums + "]")
    let process = Process()
    process.executableURL = CommandRunner.executable
    process.arguments = ["import", store, file, "--entity", "Album", "--chunk-size", "1", "--idempotency-key", "k"]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    // Once some parts are in, an interrupt.
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline,
      !((try? CommandRunner.run(["log", store, "--limit", "1"]).output.hasPrefix("batch")) ?? false)
    {
      usleep(50_000)
    }
    kill(process.processIdentifier, SIGINT)
    let error = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 1, "\(error)")
    #expect(error.contains("asked to stop before part"), "\(error)")
    #expect(error.contains("are applied as batches"), "\(error)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }
}
