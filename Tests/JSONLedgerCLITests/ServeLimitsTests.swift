import Foundation
import JSONLedgerTestSupport
import Testing

/// What a real `serve` process takes at once, and what its feed of changes says of batches it
/// can no longer send.
@Suite("jsonledger serve: limits and gaps")
struct ServeLimitsTests {
  static func post(length: Int) -> String {
    "POST /v1/batches?entity=Album HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + "Connection: close\r\nContent-Length: \(length)\r\n\r\n"
  }

  struct NoPort: Error {
    let base: String
  }

  /// `serve` over a new store of the CLI fixtures' model in `directory`, and its port.
  static func serve(in directory: TemporaryDirectory) throws -> (ServerProcess, UInt16) {
    let store = directory.storePath
    let created = try CommandRunner.run([
      "init", store, "--model", try directory.write("model.json", CLIFixtures.model),
    ])
    #expect(created.status == 0, "\(created.error)")
    let server = try ServerProcess(store: store)
    guard let port = server.port else {
      server.stop()
      throw NoPort(base: server.base)
    }
    return (server, port)
  }

  /// Regression: a `Content-Length` over the 64 MB limit was refused only once 64 MB had
  /// arrived; the header says it, so the answer comes before a byte of the body.
  @Test func aBodyDeclaredTooLargeIsRefusedOnItsHeader() async throws {
    let directory = try TemporaryDirectory()
    let (server, port) = try Self.serve(in: directory)
    defer { server.stop() }
    let answer = try ServeCLITests.exchange(Self.post(length: (64 << 20) + 1), port: port, waiting: 5)
    #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
    #expect(answer.contains(#""code":"bodyTooLarge""#), "\(answer)")
  }

  /// Regression: three 20 MB bodies at once took 936 MB. The bodies all requests hold are
  /// bounded (256 MB, four bodies of the largest size): a request over it is `503` with
  /// `Retry-After`, and the bytes of requests that end, answered or cut off, are given back.
  ///
  /// Synchronous on purpose: an `await` here could leave the test waiting for a thread of a
  /// loaded test run for longer than the server waits for the holders' bodies (60 s).
  ///
  /// - Reliability: `serve`, a real process: a `Content-Length` of 64 MB + 1 is 413 with no body sent; four
  ///   connections that declare 64 MB each (and send none) hold the 256 MB of bodies in flight, a
  ///   fifth request is 503 `busy` with `Retry-After: 1`, and once they are cut off a batch is
  ///   201; resuming `/v1/changes` before a compaction's checkpoint sends `event: gap` naming the
  ///   batches archived, then the batches after the checkpoint
  /// - Size: 3 cases
  @Test(.tags(.reliability)) func bodiesHeldAtOnceAreBoundedAcrossRequests() throws {
    let directory = try TemporaryDirectory()
    let (server, port) = try Self.serve(in: directory)
    defer { server.stop() }
    // Four requests that declare 64 MB and send none of it hold the whole budget.
    let headers = try directory.write("headers", Self.post(length: 64 << 20))
    var holders: [Process] = []
    // SIGKILL: a test run may ignore SIGTERM, and its children with it.
    defer {
      for holder in holders where holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
    }
    for _ in 0..<4 {
      let holder = Process()
      holder.executableURL = URL(fileURLWithPath: "/bin/bash")
      holder.arguments = ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port); cat \"$0\" >&3; exec sleep 30", headers]
      try holder.run()
      holders.append(holder)
    }
    var busy = ""
    // The holders are other processes: on a loaded machine they may take seconds to connect.
    let deadline = Date().addingTimeInterval(30)
    while !busy.hasPrefix("HTTP/1.1 503"), Date() < deadline {
      usleep(100_000)
      busy = try ServeCLITests.exchange(Self.post(length: 2) + "[]", port: port, waiting: 3)
    }
    #expect(busy.hasPrefix("HTTP/1.1 503"), "\(busy)")
    #expect(busy.lowercased().contains("retry-after: 1"), "\(busy)")
    #expect(busy.contains(#""code":"busy""#), "\(busy)")
    // The connections cut off give their bytes back.
    for holder in holders {
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
    }
    let batch = #"[{"name": "Tin Drum"}]"#
    var answer = ""
    for _ in 0..<50 where !answer.hasPrefix("HTTP/1.1 201") {
      usleep(100_000)
      answer = try ServeCLITests.exchange(Self.post(length: batch.utf8.count) + batch, port: port, waiting: 3)
    }
    #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")
  }

  /// Regression: resuming the feed before the batches `compact` archived sent the checkpoint
  /// as if it were a batch, and the client never knew it had missed any.
  @Test func resumingTheFeedBeforeACompactionSaysWhatWasMissed() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "10", "--objects", "5"])
    let compact = try CommandRunner.run(["compact", store, "--keep-batches", "3", "--discard"])
    #expect(compact.status == 0, "\(compact.error)")
    let server = try ServerProcess(store: store)
    defer { server.stop() }
    let port = try #require(server.port)
    let request = "GET /v1/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nLast-Event-ID: 2\r\n\r\n"
    let feed = try ServeCLITests.exchange(request, port: port, waiting: 2)
    #expect(feed.contains("id: 7\nevent: gap\n"), "\(feed)")
    #expect(feed.contains(#""firstBatch":7"#), "\(feed)")
    #expect(feed.contains("batches 3 to 7 were archived by compact"), "\(feed)")
    // Then the batches after the checkpoint, and not the checkpoint itself.
    #expect(!feed.contains("id: 7\nevent: batch"), "\(feed)")
    #expect(feed.contains("id: 8\nevent: batch"), "\(feed)")
    #expect(feed.contains("id: 10\nevent: batch"), "\(feed)")
    // A client that saw every batch the log holds is told of no gap.
    let caughtUp = try ServeCLITests.exchange(
      "GET /v1/changes?after=8 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port, waiting: 2)
    #expect(!caughtUp.contains("event: gap"), "\(caughtUp)")
    #expect(caughtUp.contains("id: 9\nevent: batch"), "\(caughtUp)")
  }
}
