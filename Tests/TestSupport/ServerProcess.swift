import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A running `jsonledger serve` process and the base URL it printed: what the tests of a
/// server over a store another process changes talk to.
public struct ServerProcess {
  public struct Failure: Error, CustomStringConvertible {
    public let description: String
  }

  let process: Process
  /// `http://127.0.0.1:PORT`, no slash at the end.
  public let base: String
  /// The server's process id.
  public var processIdentifier: Int32 { process.processIdentifier }
  /// The port it serves, from `base`.
  public var port: UInt16? { UInt16(base.split(separator: ":").last ?? "") }

  /// Starts `jsonledger serve STORE --port 0` and waits (up to 30 seconds) for the line that
  /// names its port.
  public init(store: String, arguments: [String] = []) throws {
    let process = Process()
    process.executableURL = CommandRunner.executable
    process.arguments = ["serve", store, "--port", "0"] + arguments
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
      throw Failure(description: "serve did not say where it serves: \(text)")
    }
    self.process = process
    base = String(text[range.lowerBound...].prefix { !$0.isWhitespace }).trimmingCharacters(in: ["/"])
  }

  public func stop() {
    process.terminate()
    process.waitUntilExit()
  }

  /// Kills the server with SIGKILL while `clients` threads write through it, each calling
  /// `write(client, n)` for n = 0, 1, … until then: once `enough` writes were answered (or a
  /// minute passed), with others in flight. `write` returns the key of what it wrote when the
  /// server answered it written, else nil. Returns the keys answered; the process is reaped.
  /// Threads of their own, not tasks: the test runner's shared threads may all be busy with
  /// other tests for a minute.
  public func kill<Key: Hashable & Sendable>(
    whileClients clients: Int = 16, haveWritten enough: Int,
    _ write: @escaping @Sendable (_ client: Int, _ n: Int) -> Key?
  ) -> Set<Key> {
    let answered = Mutex<(keys: Set<Key>, isStopping: Bool)>(([], false))
    let running = DispatchGroup()
    for client in 0..<clients {
      running.enter()
      Thread {
        defer { running.leave() }
        var n = 0
        while !answered.withLock({ $0.isStopping }) {
          if let key = write(client, n) { answered.withLock { _ = $0.keys.insert(key) } }
          n += 1
        }
      }.start()
    }
    let deadline = ContinuousClock.now + .seconds(60)
    while answered.withLock({ $0.keys.count }) < enough, ContinuousClock.now < deadline { usleep(1_000) }
    Foundation.kill(processIdentifier, SIGKILL)
    answered.withLock { $0.isStopping = true }
    running.wait()
    stop()
    return answered.withLock { $0.keys }
  }

  /// GETs `path`; the status and the body of the answer.
  public func get(_ path: String) async throws -> (Int, String) {
    guard let url = URL(string: base + path) else { throw Failure(description: "not a URL: \(base + path)") }
    return try await send(URLRequest(url: url))
  }

  /// POSTs `body` to `path`; the status and the body of the answer.
  public func post(_ path: String, _ body: String = "", headers: [String: String] = [:]) async throws -> (Int, String) {
    guard let url = URL(string: base + path) else { throw Failure(description: "not a URL: \(base + path)") }
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return try await send(request)
  }

  private func send(_ request: URLRequest) async throws -> (Int, String) {
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
  }
}
