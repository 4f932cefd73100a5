public import Foundation
import PostgresNIO

/// Where a replicated ledger's log lives: a PostgreSQL database and the ledger's name in it.
///
/// The URL is `postgres://user[:password]@host[:port]/database`, with `?host=/socket/dir` for a
/// Unix socket; the libpq variables `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD` and `PGDATABASE`
/// fill what it leaves out. `description` never holds the password.
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
    if let url {
      guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "")
      else {
        throw .invalidLocation(
          "\(Self.redacted(url)) is not a PostgreSQL URL (postgres://user@host:port/database)")
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
        case "dbname": database = item.value
        default:
          throw .invalidLocation("\(Self.redacted(url)): unknown parameter \"\(item.name)\" (host, port, user, dbname)")
        }
      }
    }
    guard let user, !user.isEmpty else {
      throw .invalidLocation("no user: give one in the URL (postgres://user@host/database) or PGUSER")
    }
    guard !ledger.isEmpty, ledger.utf8.count <= 200 else {
      throw .invalidLocation("a ledger name has 1 to 200 bytes")
    }
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
    self.user = user
    self.password = password
    self.database = database ?? user
    self.ledger = ledger
  }

  /// The location without its password, as a URL: what a replica remembers and what is printed.
  public var description: String {
    var text = "postgres://\(percentEncoded(user))@"
    if socketDirectory != nil {
      text += "/\(percentEncoded(database))?host=\(socketDirectory ?? "")&port=\(port)"
    } else {
      text += "\(host):\(port)/\(percentEncoded(database))"
    }
    return text
  }

  /// What a replica stores of its remote: the URL without password, and the ledger.
  var remembered: String { "\(description)#\(ledger)" }

  /// The location a replica remembered, its password (if any) from `PGPASSWORD`.
  static func remembered(
    _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(RemoteError) -> RemoteLocation {
    guard let mark = text.lastIndex(of: "#") else {
      throw .invalidLocation("the replica's remote \"\(text)\" does not read as URL#ledger")
    }
    return try RemoteLocation(
      url: String(text[..<mark]), ledger: String(text[text.index(after: mark)...]), environment: environment)
  }

  /// The channel a ledger's appends are announced on: an identifier whatever the ledger's name.
  var channel: String { "jsonledger_" + String(Hex.string(Insecure_MD5.digest(Array(ledger.utf8))).prefix(24)) }

  var configuration: PostgresConnection.Configuration {
    var configuration: PostgresConnection.Configuration
    if let socketDirectory {
      configuration = .init(
        unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
    } else {
      configuration = .init(
        host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }
    configuration.options.connectTimeout = .seconds(5)
    return configuration
  }

  private func percentEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/?#")))
      ?? text
  }

  /// A URL with any password replaced by `***`, for messages.
  static func redacted(_ url: String) -> String {
    guard var components = URLComponents(string: url), components.password != nil else { return url }
    components.password = "***"
    return components.string ?? "the URL"
  }
}
