import Dispatch
import Hummingbird
import JSONLedger
import NIOCore
import Synchronization

/// An export written as it is read: one read transaction on a thread of its own (LMDB keeps a
/// read transaction on the thread that began it) exports object by object into chunks of
/// about 64 KB, and the response writes each chunk as it comes. At most four chunks wait: a
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
      DispatchQueue.global().async {
        do {
          var bytes: [UInt8] = []
          bytes.reserveCapacity(chunkBytes + 4096)
          func flush() throws {
            room.wait()
            if stopped.load(ordering: .relaxed) { throw CancellationError() }
            continuation.yield(ByteBuffer(bytes: bytes))
            bytes.removeAll(keepingCapacity: true)
          }
          let json = JSONWriter(options: [])
          var firstCollection = true
          var firstObject = true
          var inCollection = false
          let body: (borrowing View) throws -> Void = { view in
            bytes.append(entity == nil ? UInt8(ascii: "{") : UInt8(ascii: "["))
            try view.export(entity, options: options) { piece in
              switch piece {
              case .collection(let key):
                if inCollection { bytes.append(UInt8(ascii: "]")) }
                if !firstCollection { bytes.append(UInt8(ascii: ",")) }
                bytes += json.bytes(from: .string(key))
                bytes += Array(":[".utf8)
                firstCollection = false
                firstObject = true
                inCollection = true
              case .object(let object):
                if !firstObject { bytes.append(UInt8(ascii: ",")) }
                bytes += json.bytes(from: object)
                firstObject = false
              }
              if bytes.count >= chunkBytes { try flush() }
            }
            if inCollection { bytes.append(UInt8(ascii: "]")) }
            bytes.append(entity == nil ? UInt8(ascii: "}") : UInt8(ascii: "]"))
          }
          if let asOf { try ledger.read(asOf: asOf, body) } else { try ledger.read(body) }
          try flush()
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
