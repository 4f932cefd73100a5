import Hummingbird
import JSONLedger
import NIOHTTP1

/// A failed request as the API answers it: a status, and a JSON body with the error's code,
/// message and fields (`LedgerError.jsonValue`), never a stack or a path on the server beyond
/// what the error names.
struct APIFailure: HTTPResponseError {
  var status: HTTPResponse.Status
  var body: JSONValue
  var headers: HTTPFields = [:]

  init(status: HTTPResponse.Status, code: String, message: String) {
    self.status = status
    body = ["code": .string(code), "message": .string(message)]
  }

  init(_ error: LedgerError, dateFormat: DateFormat) {
    status = Self.status(for: error.code)
    body = error.jsonValue(dateFormat: dateFormat)
    if var object = body.objectValue {
      // The server's own paths are not the client's business.
      object["path"] = nil
      body = .object(object)
    }
  }

  func response(from request: Request, context: some RequestContext) throws -> Response {
    var response = JSONResponse.make(body, status: status)
    response.headers.append(contentsOf: headers)
    return response
  }

  /// The HTTP status of each ledger error code: the caller's mistakes are 4xx, the server's
  /// trouble 5xx.
  static func status(for code: LedgerError.Code) -> HTTPResponse.Status {
    switch code {
    case .unknownEntity, .objectNotFound, .batchNotFound: .notFound
    case .batchArchived: .gone
    case .headMoved, .revertConflicts, .alreadyReverted, .storeChanged, .modelChanged, .replicaWrite: .conflict
    case .invalidPayload, .invalidBatch, .unknownCollection, .envelope, .transformerFailed: .unprocessableContent
    case .invalidJSON, .invalidQuery, .invalidKey, .invalidArgument, .decodingFailed: .badRequest
    case .readOnly: .methodNotAllowed
    case .closed: .serviceUnavailable
    default: .internalServerError
    }
  }

  static let unauthorized = APIFailure(
    status: .unauthorized, code: "unauthorized",
    message: "this request needs the server's token: Authorization: Bearer …"
  ).with { $0.headers[.wwwAuthenticate] = "Bearer" }

  static let readOnly = APIFailure(
    status: .methodNotAllowed, code: "readOnly", message: "this server is read-only: it takes no writes")

  static func bodyTooLarge(limit: Int) -> APIFailure {
    APIFailure(
      status: .contentTooLarge, code: "bodyTooLarge", message: "the request body is larger than \(limit) bytes")
  }

  /// The bodies of requests being read or applied hold `limit` bytes already.
  static func busy(limit: Int) -> APIFailure {
    APIFailure(
      status: .serviceUnavailable, code: "busy",
      message: "the server holds \(limit) bytes of request bodies already; send this one again shortly"
    ).with { $0.headers[.retryAfter] = "1" }
  }

  static func badRequest(_ message: String) -> APIFailure {
    APIFailure(status: .badRequest, code: "badRequest", message: message)
  }

  /// A request the HTTP parser refused, before a route (`MalformedRequestHandler`) or while a
  /// route read its body: the client's doing. The size is not named: an app may set its
  /// decoder's limits (`serve` keeps Hummingbird's 80 KB).
  static func refusedByParser(_ error: HTTPParserError) -> APIFailure {
    if case .headerOverflow = error {
      return APIFailure(
        status: .requestHeaderFieldsTooLarge, code: "requestTooLarge",
        message: "the request line and headers are longer than this server reads")
    }
    return .badRequest("the request is not valid HTTP/1.1: \(error.debugDescription)")
  }

  func with(_ change: (inout APIFailure) -> Void) -> APIFailure {
    var copy = self
    change(&copy)
    return copy
  }
}

/// JSON bodies.
enum JSONResponse {
  static let contentType = "application/json; charset=utf-8"

  static func make(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
    let bytes = JSONWriter(options: []).bytes(from: value)
    return Response(
      status: status, headers: [.contentType: contentType],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
  }
}
