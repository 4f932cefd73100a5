import Foundation
import JSONLedger

/// Where the page after this one is: the `Link` header's `rel="next"` (RFC 8288, as GitHub
/// pages), or a URL inside the page at a dotted path (`next`, `links.next`).
enum NextPage {
  /// The target of `rel="next"` in a `Link` header's value, resolved against `base`.
  static func fromLinkHeader(_ values: [String], base: URL) -> URL? {
    for value in values {
      for link in splitLinks(value) {
        let parts = link.split(separator: ";", omittingEmptySubsequences: false)
        guard let target = parts.first?.trimmingCharacters(in: .whitespaces), target.hasPrefix("<"),
          target.hasSuffix(">")
        else { continue }
        let isNext = parts.dropFirst().contains { parameter in
          let pair = parameter.split(separator: "=", maxSplits: 1)
          guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "rel" else {
            return false
          }
          let relations = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\""])
          return relations.lowercased().split(separator: " ").contains("next")
        }
        if isNext { return URL(string: String(target.dropFirst().dropLast()), relativeTo: base)?.absoluteURL }
      }
    }
    return nil
  }

  /// The links of a `Link` value: split on commas outside `<…>` and quotes.
  private static func splitLinks(_ value: String) -> [String] {
    var links: [String] = []
    var current = ""
    var inTarget = false
    var inQuotes = false
    for character in value {
      switch character {
      case "<" where !inQuotes: inTarget = true
      case ">" where !inQuotes: inTarget = false
      case "\"" where !inTarget: inQuotes.toggle()
      case "," where !inTarget && !inQuotes:
        links.append(current)
        current = ""
        continue
      default: break
      }
      current.append(character)
    }
    links.append(current)
    return links
  }

  /// The next page's URL at `path` inside `page`: nil when the member is missing, null or
  /// empty (the last page); an error when it is something else than a URL.
  static func fromBody(_ page: JSONValue, at path: String, base: URL, pageURL: String) throws(PullError) -> URL? {
    var value: JSONValue? = page
    for name in path.split(separator: ".") { value = value?[String(name)] }
    guard let value, value != .null else { return nil }
    guard let text = value.stringValue else {
      throw PullError(
        .invalidPlan,
        "the page \(pageURL) has \(value.kindDescription) at \(path), where the next page's URL was expected",
        url: pageURL)
    }
    if text.isEmpty { return nil }
    guard let url = URL(string: text, relativeTo: base)?.absoluteURL, url.scheme == "http" || url.scheme == "https"
    else {
      throw PullError(
        .invalidURL, "the page \(pageURL) names a next page at \(path) that is no http URL: \(RedactedURL.text(text))",
        url: pageURL)
    }
    return url
  }
}
