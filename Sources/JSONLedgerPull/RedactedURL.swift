import Foundation

/// A URL as a pull writes it in records, errors and output: no user or password, and the
/// values of query parameters whose names hold a word of secrets (`token`, `api_key`,
/// `access_token`, `signature`, `password`, `secret`, `auth`, `key`, `sig`) replaced by
/// `REDACTED`: a harmless name caught too (`keyword`) costs less than a secret let through.
enum RedactedURL {
  static let secretNames = ["token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential"]

  static func text(_ url: URL) -> String { text(url.absoluteString) }

  static func text(_ string: String) -> String {
    guard var components = URLComponents(string: string) else { return "(a URL that does not parse)" }
    components.user = nil
    components.password = nil
    if let items = components.percentEncodedQueryItems {
      components.percentEncodedQueryItems = items.map { item in
        let name = item.name.lowercased()
        let secret = secretNames.contains { name.contains($0) }
        return secret ? URLQueryItem(name: item.name, value: "REDACTED") : item
      }
    }
    return components.string ?? "(a URL that does not parse)"
  }
}
