/// An error of a pull: a ``Code`` to branch on, a message naming the URL (its secrets
/// redacted) and the reason, and the HTTP status when there was one. Nothing was written.
public struct PullError: Error, Sendable, CustomStringConvertible {
  public var code: Code
  public var message: String
  /// The page's URL, redacted (`?token=…`): what the error concerns.
  public var url: String?
  /// The HTTP status the server answered, when the error is one.
  public var status: Int?

  public var description: String { message }

  init(_ code: Code, _ message: String, url: String? = nil, status: Int? = nil) {
    self.code = code
    self.message = message
    self.url = url
    self.status = status
  }

  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A URL that does not parse, or is not http or https.
    public static let invalidURL = Code(rawValue: "invalidURL")
    /// A plan (a file, a header, a bound) that cannot be run.
    public static let invalidPlan = Code(rawValue: "invalidPlan")
    /// The server answered a status that is no page (a 404, a 401, a 500 after every retry).
    public static let httpStatus = Code(rawValue: "httpStatus")
    /// The server could not be reached, or the connection failed, after every retry.
    public static let unreachable = Code(rawValue: "unreachable")
    /// The run took longer than the plan's timeout.
    public static let timedOut = Code(rawValue: "timedOut")
    /// A next page that is one the run already read.
    public static let pageLoop = Code(rawValue: "pageLoop")
    /// More pages than the plan's bound.
    public static let tooManyPages = Code(rawValue: "tooManyPages")
    /// A page larger than a page may be.
    public static let pageTooLarge = Code(rawValue: "pageTooLarge")
    /// The TLS handshake failed: a certificate not trusted or for another name, or a server
    /// that does not speak TLS. Not tried again: another try meets the same certificate.
    public static let tls = Code(rawValue: "tls")

    public static func ~= (code: Code, error: any Error) -> Bool { (error as? PullError)?.code == code }
  }
}
