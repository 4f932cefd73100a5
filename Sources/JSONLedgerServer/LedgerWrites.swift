public import HTTPTypes
public import JSONLedger

/// A failure of a write path, answered with its status and code (a replica's remote failures,
/// `RemoteError`, are answered through `init(_:)`).
public struct WriteFailure: Error, Sendable, CustomStringConvertible {
  public var status: HTTPResponse.Status
  public var code: String
  public var message: String

  public init(status: HTTPResponse.Status, code: String, message: String) {
    self.status = status
    self.code = code
    self.message = message
  }

  public var description: String { message }
}

extension WriteFailure {
  /// How the API answers a replica's remote failure: a remote that does not answer is
  /// `503 remoteUnavailable`, one whose history differs `409 diverged`.
  public init(_ error: RemoteError) {
    switch error.code {
    case .unavailable, .timedOut, .schema, .ledgerNotFound, .invalidLocation:
      self.init(status: .serviceUnavailable, code: "remoteUnavailable", message: error.description)
    case .diverged: self.init(status: .conflict, code: "diverged", message: error.description)
    case .unsupported, .ledgerExists:
      self.init(status: .conflict, code: "remoteUnsupported", message: error.description)
    default: self.init(status: .badGateway, code: "remoteFailed", message: error.description)
    }
  }
}
