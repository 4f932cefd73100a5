public import Foundation
public import JSONLedger
import NIOSSL
import PostgresNIO

/// Where a replicated ledger's log lives: a PostgreSQL database and the ledger's name in it.
///
/// The URL is `postgres://user[:password]@host[:port]/database`, with `?host=/socket/dir` for a
/// Unix socket; the libpq variables `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`,
/// `PGSSLMODE` and `PGSSLROOTCERT` fill what it leaves out. `description` never holds the
/// password, and neither does any error about a URL.
///
/// TLS follows libpq's `sslmode` (`?sslmode=require`): `disable`; `allow` and `prefer` (the
/// default: encrypted when the server offers it); `require` (encrypted, the certificate not
/// checked); `verify-ca` (signed by `sslrootcert`, else the system's roots); `verify-full`
/// (also issued to the host). A Unix socket is never encrypted.
public struct RemoteLocation: Sendable, Equatable, CustomStringConvertible {
  public var host: String
  public var port: Int
  /// The folder of the server's Unix socket, when connecting through one.
  public var socketDirectory: String?
  public var user: String
  public var password: String?
  public var database: String
  /// The ledger's name: one database holds many ledgers.
  public var ledger: String
  /// How the connection is encrypted (libpq's `sslmode`).
  public var tlsMode: TLSMode
  /// The certificates a server's certificate must be signed by (`sslrootcert`), for
  /// `verify-ca` and `verify-full`; nil: the system's.
  public var rootCertificates: String?

  /// libpq's `sslmode`.
  public enum TLSMode: String, Sendable, CaseIterable {
    case disable, allow, prefer, require
    case verifyCA = "verify-ca"
    case verifyFull = "verify-full"
  }

  /// Reads a URL (nil: the libpq variables alone), with `environment` filling its gaps.
  public init(
    url: String?, ledger: String = "default",
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(RemoteError) {
    var host = environment["PGHOST"]
    var port = environment["PGPORT"].flatMap { Int($0) }
    var user = environment["PGUSER"]
    var password = environment["PGPASSWORD"]
    var database = environment["PGDATABASE"]
    var mode = environment["PGSSLMODE"]
    var rootCertificates = environment["PGSSLROOTCERT"]
    if let url {
      guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "")
      else {
        throw .invalidLocation(
          "\(Self.redacted(url)) is not a PostgreSQL URL (postgres://user@host:port/database; "
            + "characters such as # ? [ @ in a password are written %23 %3F %5B %40)")
      }
      // A `#` ends a URL's address: one in a password would cut the URL there.
      guard components.fragment == nil else {
        throw .invalidLocation(
          "\(Self.redacted(url)) has a # in it: write # in a user name or password as %23, the ledger with --ledger")
      }
      if let value = components.host, !value.isEmpty { host = value }
      if let value = components.port { port = value }
      if let value = components.user, !value.isEmpty { user = value.removingPercentEncoding ?? value }
      if let value = components.password { password = value.removingPercentEncoding ?? value }
      let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
      if !path.isEmpty { database = path.removingPercentEncoding ?? path }
      for item in components.queryItems ?? [] {
        switch item.name {
        case "host": host = item.value
        case "port": port = item.value.flatMap { Int($0) }
        case "user": user = item.value
        case "password": password = item.value
        case "dbname": database = item.value
        case "sslmode": mode = item.value
        case "sslrootcert": rootCertificates = item.value
        default:
          throw .invalidLocation(
            "\(Self.redacted(url)): unknown parameter \"\(item.name)\" "
              + "(host, port, user, password, dbname, sslmode, sslrootcert)")
        }
      }
    }
    guard let user, !user.isEmpty else {
      throw .invalidLocation("no user: give one in the URL (postgres://user@host/database) or PGUSER")
    }
    try Self.check(ledger: ledger)
    let hostValue = host ?? "localhost"
    if hostValue.hasPrefix("/") {
      self.host = "localhost"
      self.socketDirectory = hostValue
    } else {
      self.host = hostValue
      self.socketDirectory = nil
    }
    self.port = port ?? 5432
    guard (1...65535).contains(self.port) else { throw .invalidLocation("port \(self.port) is not a TCP port") }
    guard let tlsMode = TLSMode(rawValue: mode ?? "prefer") else {
      throw .invalidLocation(
        "sslmode \"\(mode ?? "")\" is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    self.tlsMode = tlsMode
    self.rootCertificates = rootCertificates
    self.user = user
    self.password = password
    self.database = database ?? user
    self.ledger = ledger
  }

  /// A ledger's name: 1 to 200 bytes of UTF-8, no control characters.
  static func check(ledger: String) throws(RemoteError) {
    guard !ledger.isEmpty, ledger.utf8.count <= 200 else { throw .invalidLocation("a ledger name has 1 to 200 bytes") }
    guard !ledger.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      throw .invalidLocation("a ledger name has no control characters")
    }
  }

  /// The location without its password, as a URL: what a replica remembers and what is printed.
  public var description: String {
    var components = URLComponents()
    components.scheme = "postgres"
    components.percentEncodedUser = Self.encoded(user)
    var query: [URLQueryItem] = []
    if let socketDirectory {
      components.percentEncodedPath = "/" + Self.encoded(database)
      query += [URLQueryItem(name: "host", value: socketDirectory), URLQueryItem(name: "port", value: "\(port)")]
    } else {
      components.host = host
      components.port = port
      components.percentEncodedPath = "/" + Self.encoded(database)
    }
    if tlsMode != .prefer { query.append(URLQueryItem(name: "sslmode", value: tlsMode.rawValue)) }
    if let rootCertificates { query.append(URLQueryItem(name: "sslrootcert", value: rootCertificates)) }
    if !query.isEmpty {
      // Every character that means something in a URL is escaped: a socket folder with `&`,
      // `#` or `+` in it reads back as itself.
      components.percentEncodedQueryItems = query.map {
        URLQueryItem(
          name: $0.name, value: $0.value?.addingPercentEncoding(withAllowedCharacters: Self.unreserved.union(["/"])))
      }
    }
    return components.string ?? "postgres://\(Self.encoded(user))@\(host):\(port)/\(Self.encoded(database))"
  }

  /// What a replica stores of its remote: the URL without password, `#`, and the ledger's
  /// name percent-encoded (a name may hold `#` itself).
  var remembered: String { "\(description)#\(Self.encoded(ledger))" }

  /// The location a replica remembered, its password (if any) from `PGPASSWORD`.
  static func remembered(
    _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(RemoteError) -> RemoteLocation {
    // The URL part escapes every `#` of its own, so the first one ends it.
    guard let mark = text.firstIndex(of: "#") else {
      throw .invalidLocation("the replica's remote \"\(redacted(text))\" does not read as URL#ledger")
    }
    let name = String(text[text.index(after: mark)...])
    return try RemoteLocation(
      url: String(text[..<mark]), ledger: name.removingPercentEncoding ?? name, environment: environment)
  }

  /// Whether `other` names the same ledger in the same database, reached the same way (the
  /// password aside): what a replica checks the remote it is given against the one it has.
  func isSameLedger(as other: RemoteLocation) -> Bool {
    (host, port, socketDirectory, user, database, ledger)
      == (other.host, other.port, other.socketDirectory, other.user, other.database, other.ledger)
  }

  /// Whether the remote a replica remembered (`remembered`) is this one (`isSameLedger`).
  func isRemembered(_ text: String) -> Bool {
    (try? Self.remembered(text, environment: [:]))?.isSameLedger(as: self) ?? (text == remembered)
  }

  /// The channel a ledger's appends are announced on: an identifier whatever the ledger's name.
  var channel: String { "jsonledger_" + String(Hex.string(Insecure_MD5.digest(Array(ledger.utf8))).prefix(24)) }

  /// How postgres-nio connects: the socket or host, and TLS as `tlsMode` says.
  func configuration() throws(RemoteError) -> PostgresConnection.Configuration {
    var configuration: PostgresConnection.Configuration
    if let socketDirectory {
      configuration = .init(
        unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
    } else {
      configuration = .init(
        host: host, port: port, username: user, password: password, database: database, tls: try tls())
    }
    configuration.options.connectTimeout = .seconds(5)
    return configuration
  }

  private func tls() throws(RemoteError) -> PostgresConnection.Configuration.TLS {
    var tls = TLSConfiguration.makeClientConfiguration()
    switch tlsMode {
    case .disable: return .disable
    case .allow, .prefer, .require: tls.certificateVerification = .none
    case .verifyCA: tls.certificateVerification = .noHostnameVerification
    case .verifyFull: tls.certificateVerification = .fullVerification
    }
    if let rootCertificates, tlsMode == .verifyCA || tlsMode == .verifyFull {
      guard FileManager.default.isReadableFile(atPath: rootCertificates) else {
        throw .invalidLocation("sslrootcert \(rootCertificates) cannot be read")
      }
      tls.trustRoots = .file(rootCertificates)
    }
    let context: NIOSSLContext
    do { context = try NIOSSLContext(configuration: tls) } catch {
      throw .invalidLocation("the TLS settings do not load (sslrootcert \(rootCertificates ?? "none")): \(error)")
    }
    return tlsMode == .allow || tlsMode == .prefer ? .prefer(context) : .require(context)
  }

  /// `text` with every character outside the unreserved set of URLs percent-encoded.
  private static func encoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
  }

  private static let unreserved = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

  /// A URL for messages: its password, in the authority or as a `password` parameter,
  /// replaced by `***`. Done on the text, so that a URL that does not parse (a `#`, `?` or
  /// `[` in its password) is redacted all the same.
  static func redacted(_ url: String) -> String {
    var text = url
    if let scheme = text.range(of: "://") {
      let rest = text[scheme.upperBound...]
      // The authority's user information ends at the last `@` before the path; a password
      // with `/` or `?` in it is taken whole (the last `@` of the text then).
      if let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
        text.replaceSubrange(text.index(after: colon)..<at, with: "***")
      }
    }
    // `password=…` up to the next `&` or `#`.
    var searchStart = text.startIndex
    while let found = text.range(of: "password=", options: .caseInsensitive, range: searchStart..<text.endIndex) {
      let end = text[found.upperBound...].firstIndex { $0 == "&" || $0 == "#" } ?? text.endIndex
      text.replaceSubrange(found.upperBound..<end, with: "***")
      searchStart = text.index(found.upperBound, offsetBy: 3)
    }
    return text
  }
}
