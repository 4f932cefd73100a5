/// What a ledger's HTTP routes allow, and how much they take.
public struct LedgerServerOptions: Sendable {
  /// The bearer token that writes (and, with `tokenForReads`, reads) must carry; nil: none is
  /// asked for.
  public var token: String?
  /// Whether reads need the token too.
  public var tokenForReads = false
  /// Whether every write is refused (405).
  public var readOnly = false
  /// The largest request body taken, in bytes (413 above it).
  public var maxBodyBytes = 64 << 20
  /// The request bodies all requests may hold at once, in bytes, while they arrive and until
  /// their batch is applied: a request that would go over it is answered `503` with
  /// `Retry-After` (several large bodies at once do not take the server's memory). Read when
  /// `LedgerRoutes` is made; never less than `maxBodyBytes`.
  public var maxBodyBytesInFlight = 256 << 20
  /// How long a request body may take to arrive whole (408 after it): a client that sends its
  /// body a byte at a time does not hold a write open for longer.
  public var bodyTimeout: Duration = .seconds(60)
  /// The largest page of objects or batches one request may ask for.
  public var maxPageSize = 1000
  /// The page size when a request names none.
  public var defaultPageSize = 50
  /// The host names (`Host`, its port aside) requests may be addressed to; nil: any. A server
  /// on loopback gives its loopback names (`loopbackHosts`), so that a page whose domain is
  /// made to resolve to 127.0.0.1 (DNS rebinding) is refused.
  public var allowedHosts: Set<String>?

  /// The names a loopback server is reached by.
  public static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "[::1]", "::1"]

  /// Options that allow reads and writes without a token.
  public init(token: String? = nil, tokenForReads: Bool = false, readOnly: Bool = false) {
    self.token = token
    self.tokenForReads = tokenForReads
    self.readOnly = readOnly
  }

  /// Whether `header` (an `Authorization` value) carries the token, compared in constant time
  /// for tokens of the same length: how long the comparison takes does not tell how many
  /// leading bytes were right.
  func authorizes(_ header: String?) -> Bool {
    guard let token else { return true }
    // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` is `Bearer`.
    guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return false }
    let given = Array(header.utf8.dropFirst("Bearer ".utf8.count))
    let expected = Array(token.utf8)
    var difference = UInt8(given.count == expected.count ? 0 : 1)
    for index in expected.indices {
      difference |= expected[index] ^ (index < given.count ? given[index] : 0)
    }
    return difference == 0
  }
}
