import Dispatch
import Hummingbird
import JSONLedger
import JSONLedgerSupport
import NIOCore
import Synchronization

/// An export written as it is read: one read transaction on a thread of its own (LMDB keeps a
/// read transaction on the thread that began it) writes the JSON text into chunks of about
/// 64 KB (`View.writeJSON`), and the response writes each chunk as it comes. At most four chunks wait: a
/// slow client slows the reader, not the server's memory. A client that goes away stops it.
enum ExportStream {
  static let chunkBytes = 64 << 10

  static func body(ledger: Ledger, asOf: UInt64?, entity: String?, options: ExportOptions) -> ResponseBody {
    ResponseBody { writer in
      let room = DispatchSemaphore(value: 4)
      let stopped = Atomic(false)
      let (chunks, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
      continuation.onTermination = { _ in
        stopped.store(true, ordering: .relaxed)
        room.signal()
      }
      // A thread of its own: a slow client holds it, and nothing else.
      startBlocking("JSONLedgerServer.export") {
        do {
          let body: (borrowing View) throws -> Void = { view in
            try view.writeJSON(entity, options: options, writer: JSONWriter(options: []), chunkSize: chunkBytes) {
              chunk in
              room.wait()
              if stopped.load(ordering: .relaxed) { throw CancellationError() }
              continuation.yield(ByteBuffer(bytes: chunk))
            }
          }
          if let asOf { try ledger.read(asOf: asOf, body) } else { try ledger.read(body) }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      do {
        for try await chunk in chunks {
          try await writer.write(chunk)
          room.signal()
        }
      } catch {
        stopped.store(true, ordering: .relaxed)
        room.signal()
        throw error
      }
      try await writer.finish(nil)
    }
  }
}
