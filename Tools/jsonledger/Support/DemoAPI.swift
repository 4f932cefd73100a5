import Foundation
import Hummingbird
import JSONLedger
import Logging
import ServiceLifecycle
import Synchronization

/// The demo's live API: a list of objects served on a loopback port in pages of two, each
/// with a `Link` header to the next, as GitHub pages; the list can change between pulls.
final class DemoAPI: Sendable {
  private let items: Mutex<[JSONValue]>

  init(items: [JSONValue]) {
    self.items = Mutex(items)
  }

  /// Changes the served list.
  func update(_ change: (inout [JSONValue]) -> Void) { items.withLock { change(&$0) } }

  /// Runs `body` with the API served at `http://127.0.0.1:PORT/PATH`, given the URL.
  func serving(at path: String, _ body: (String) async throws -> Void) async throws {
    let router = Router()
    router.get(RouterPath(path)) { request, _ -> Response in
      let page = max(1, request.uri.queryParameters.get("page").flatMap { Int($0) } ?? 1)
      let all = self.items.withLock { $0 }
      let slice = Array(all.dropFirst((page - 1) * 2).prefix(2))
      let body = JSONWriter(options: []).bytes(from: .array(slice))
      // An ETag of the page's bytes (stable within this process): a pull asks with it again.
      let etag = "\"\(String(UInt(bitPattern: body.hashValue), radix: 16))\""
      var headers: HTTPFields = [.contentType: "application/json", .eTag: etag]
      if page * 2 < all.count { headers[.init("Link")!] = "</\(path)?page=\(page + 1)>; rel=\"next\"" }
      if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: headers) }
      return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
    // Quiet: the demo narrates what it does.
    var logger = Logger(label: "jsonledger.demo")
    logger.logLevel = .warning
    let (ports, port) = AsyncStream<Int>.makeStream()
    let app = Application(
      router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "jsonledger-demo"),
      onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) },
      logger: logger)
    let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
    let running = Task { try await group.run() }
    defer { running.cancel() }
    var iterator = ports.makeAsyncIterator()
    guard let bound = await iterator.next(), bound > 0 else {
      throw CommandFailure(message: "the demo's API did not start", exitCode: 1)
    }
    do {
      try await body("http://127.0.0.1:\(bound)/\(path)")
    } catch {
      await group.triggerGracefulShutdown()
      throw error
    }
    await group.triggerGracefulShutdown()
    _ = try? await running.value
  }
}
