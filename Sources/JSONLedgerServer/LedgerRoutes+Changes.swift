import HTTPTypes
import Hummingbird
@_spi(Replication) import JSONLedger
import NIOCore
import ServiceLifecycle

extension LedgerRoutes {
  /// `GET /v1/changes`: Server-Sent Events, one `batch` event per applied batch (this
  /// process's or another's), its id the batch id, so that a client that reconnects with
  /// `Last-Event-ID` (or `?after=`) misses none, or is told which it missed: resuming before
  /// the batches `compact` archived sends a `gap` event first. A comment every 15 seconds keeps idle
  /// connections open through proxies and the server's idle timeout.
  func addChangeRoutes<Routes: RouterMethods>(to router: Routes) {
    router.get("v1/changes") { request, context in
      try await reading(request, context) { values in
        // Named as the request gave it: the header (a reconnecting client's) wins.
        let resume =
          request.headers[Self.lastEventID].map { ($0, "Last-Event-ID") } ?? values.query("after").map { ($0, "after") }
        let after = try resume.map { try values.batchID($0.0, name: $0.1) }
        let head = try ledger.head
        if let after, after > head {
          throw APIFailure.badRequest("batch \(after) is past the head (\(head))")
        }
        // Batches compact archived cannot be sent: the feed says so first (`gap`, its id the
        // checkpoint's), then goes on after the checkpoint, whose state a client reads again.
        let first = try ledger.logExtent().firstBatch
        let startsAtCheckpoint = try ledger.log(limit: 1, before: first + 1).first?.kind == .checkpoint
        let gap: String? =
          if let after, startsAtCheckpoint, after < first {
            "id: \(first)\nevent: gap\ndata: "
              + JSONWriter(options: []).string(from: [
                "after": .number(JSONNumber(after)), "firstBatch": .number(JSONNumber(first)),
                "message": .string(
                  "batches \(after + 1) to \(first) were archived by compact; the log starts at a checkpoint of the state after batch \(first): read the state again"
                ),
              ]) + "\n\n"
          } else { nil }
        let batches = ledger.batches(after: gap == nil ? after ?? head : first)
        let ledger = ledger
        let (events, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let feed = Task {
          do {
            // A server shutting down ends the feed, so that its open connections do not hold
            // the shutdown up; a client reconnects with Last-Event-ID.
            try await withGracefulShutdownHandler {
              for try await entry in batches {
                let json = try ledger.logEntryJSON(entry)
                let data = JSONWriter(options: []).string(from: json)
                continuation.yield(ByteBuffer(string: "id: \(entry.batchID)\nevent: batch\ndata: \(data)\n\n"))
              }
            } onGracefulShutdown: {
              continuation.finish()
            }
          } catch {
            let message = (error as? LedgerError)?.message ?? "\(error)"
            continuation.yield(
              ByteBuffer(string: "event: error\ndata: \(message.replacingOccurrences(of: "\n", with: " "))\n\n"))
          }
          continuation.finish()
        }
        let keepAlive = Task {
          while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(15))
            continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
          }
        }
        continuation.onTermination = { _ in
          feed.cancel()
          keepAlive.cancel()
        }
        continuation.yield(ByteBuffer(string: ": jsonledger changes after batch \(after ?? head)\n\n"))
        if let gap { continuation.yield(ByteBuffer(string: gap)) }
        return Response(
          status: .ok,
          headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
          body: ResponseBody(asyncSequence: events))
      }
    }
  }

  static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
