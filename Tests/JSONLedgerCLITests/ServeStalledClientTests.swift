import Foundation
import JSONLedgerTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `jsonledger serve` with clients that ask for an export and stop reading: each holds the
/// thread reading its export, and nothing else; other requests are answered at once. And a
/// burst of writes, which wait for LMDB's one writer in turn, as queued work.
@Suite("Serving beside clients that stopped reading, and a burst of writes")
struct ServeStalledClientTests {
  /// A TCP connection to 127.0.0.1:`port` that receives little (a small receive buffer) and
  /// waits at most `timeout` seconds for a read. -1 when it cannot connect.
  static func connect(port: UInt16, receiveBuffer: Int32? = nil, timeout: Int = 5) -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return -1 }
    if var size = receiveBuffer {
      setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var wait = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(socket)
      return -1
    }
    return socket
  }

  static func send(_ text: String, on socket: Int32) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// The first line of the answer to GET `path` on a new connection, and how long it took,
  /// waited for on this thread (not through the test runner's tasks).
  static func statusLine(of path: String, port: UInt16) -> (String, Duration) {
    let start = ContinuousClock.now
    let socket = connect(port: port)
    guard socket >= 0 else { return ("no connection", ContinuousClock.now - start) }
    defer { close(socket) }
    send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", on: socket)
    var buffer = [UInt8](repeating: 0, count: 512)
    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    let text = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : "no answer"
    return (String(text.prefix { $0 != "\r" }), ContinuousClock.now - start)
  }

  /// A store of notes (`notes` of them) in `directory`, created with the tool.
  static func makeNotes(_ notes: Int, in directory: TemporaryDirectory) throws -> String {
    let model = try directory.write(
      "model.json", #"{"entities": {"Note": {"identity": "id", "attributes": {"id": "int64", "text": "string"}}}}"#)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    guard notes > 0 else { return store }
    let text = String(repeating: "words and more words ", count: 20)
    let list = (0..<notes).map { #"{"id": \#($0), "text": "\#(text)"}"# }.joined(separator: ",")
    let data = try directory.write("notes.json", "[" + list + "]")
    #expect(try CommandRunner.run(["import", store, data, "--entity", "Note"]).status == 0)
    return store
  }

  @Test func aServerAnswersAtOnceWhileClientsHoldExportsUnread() throws {
    let directory = try TemporaryDirectory()
    // About 1 MB of JSON: more than the chunks an export holds for a client that stops reading.
    let server = try ServerProcess(store: try Self.makeNotes(2_500, in: directory))
    defer { server.stop() }
    let port = try #require(server.port, "no port in \(server.base)")
    #expect(Self.statusLine(of: "/healthz", port: port).0.contains("200"))

    // More such clients than the threads a process's tasks share on this machine.
    let stalled = (0..<(2 * ProcessInfo.processInfo.activeProcessorCount + 6)).map { _ in
      Self.connect(port: port, receiveBuffer: 4_096)
    }
    defer { for socket in stalled where socket >= 0 { close(socket) } }
    #expect(stalled.allSatisfy { $0 >= 0 })
    for socket in stalled { Self.send("GET /v1/export HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: socket) }
    usleep(1_500_000)

    let (status, took) = Self.statusLine(of: "/healthz", port: port)
    #expect(status.contains("200"), "\(status)")
    #expect(took < .seconds(2), "/healthz took \(took) beside \(stalled.count) stalled exports")
  }

  /// The threads of process `pid` now (`/proc/PID/status`).
  static func threads(of pid: Int32) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
    return Int(line.split(separator: "\t").last ?? "") ?? 0
  }

  @Test func aBurstOfWritesWaitsForTheWriterAsQueuedWorkNotAThreadEach() throws {
    let directory = try TemporaryDirectory()
    let store = try Self.makeNotes(0, in: directory)
    let server = try ServerProcess(store: store)
    defer { server.stop() }
    let port = try #require(server.port, "no port in \(server.base)")
    #expect(Self.statusLine(of: "/healthz", port: port).0.contains("200"))
    let before = Self.threads(of: server.processIdentifier)

    let writers = 150
    let sockets = (0..<writers).map { _ in Self.connect(port: port, timeout: 30) }
    defer { for socket in sockets where socket >= 0 { close(socket) } }
    #expect(sockets.allSatisfy { $0 >= 0 })
    for (index, socket) in sockets.enumerated() {
      let body = #"[{"id": \#(index), "text": "note \#(index)"}]"#
      Self.send(
        "POST /v1/batches?entity=Note HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)", on: socket)
    }
    // The thread count while the writes are answered, sampled on this thread.
    var peak = before
    let deadline = ContinuousClock.now + .seconds(2)
    while ContinuousClock.now < deadline {
      peak = max(peak, Self.threads(of: server.processIdentifier))
      usleep(2_000)
    }
    var created = 0
    for socket in sockets {
      var buffer = [UInt8](repeating: 0, count: 64)
      let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
      if count > 0, String(decoding: buffer[0..<count], as: UTF8.self).hasPrefix("HTTP/1.1 201") { created += 1 }
    }
    #expect(created == writers)
    // The pool of Swift's tasks may grow to one thread a core while the requests are answered.
    let allowance = 16 + ProcessInfo.processInfo.activeProcessorCount
    #expect(peak <= before + allowance, "\(peak) threads at the peak of \(writers) writes, \(before) before")
    let log = try CommandRunner.run(["log", store, "--json"])
    #expect(log.output.components(separatedBy: "\"batch\"").count - 1 == writers)
  }
}
