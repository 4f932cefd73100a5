import HTTPTypes
import JSONLedger
public import NIOCore
import NIOHTTP1
public import NIOHTTPTypes

/// Answers a request that the HTTP parser refuses (a request line and headers over its limit,
/// 80 KB unless the app sets another; bytes that are not HTTP) as the API answers its other
/// errors: a status, and JSON with a code and a message that says why. The connection is then
/// closed, as HTTP/1.1 requires once the stream cannot be read on.
///
/// Without it the server answers such a request `400` with an empty body. Add one to each
/// connection's pipeline; `additionalChannelHandlers` makes one for each:
///
/// ```swift
/// let app = Application(
///   router: router,
///   server: .http1(configuration: .init(additionalChannelHandlers: [MalformedRequestHandler()])))
/// ```
///
/// An error met while an earlier request of the connection is still being answered is left to
/// the server: an answer written then would fall inside the one being written.
public final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
  public typealias InboundIn = HTTPRequestPart
  public typealias InboundOut = HTTPRequestPart
  public typealias OutboundIn = HTTPResponsePart
  public typealias OutboundOut = HTTPResponsePart

  /// Requests whose head has come in and whose answer has not ended.
  private var unanswered = 0

  public init() {}

  public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if case .head = unwrapInboundIn(data) { unanswered += 1 }
    context.fireChannelRead(data)
  }

  public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if case .end = unwrapOutboundIn(data), unanswered > 0 { unanswered -= 1 }
    context.write(data, promise: promise)
  }

  public func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let parserError = error as? HTTPParserError, unanswered == 0 else {
      context.fireErrorCaught(error)
      return
    }
    let failure = APIFailure.refusedByParser(parserError)
    let bytes = JSONWriter(options: []).bytes(from: failure.body)
    let head = HTTPResponse(
      status: failure.status,
      headerFields: [
        .contentType: JSONResponse.contentType, .contentLength: String(bytes.count), .connection: "close",
      ])
    context.write(wrapOutboundOut(.head(head)), promise: nil)
    context.write(wrapOutboundOut(.body(ByteBuffer(bytes: bytes))), promise: nil)
    // Closed once the answer is written, on this event loop (where a handler's context lives).
    context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
      context.close(promise: nil)
    }
  }
}
