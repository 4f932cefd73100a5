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

  /// The items of a page: the array at `itemsAt`, or the page itself when it is an array.
  static func items(in page: JSONValue, at itemsAt: String?) -> [JSONValue]? {
    (itemsAt.map { value(in: page, at: $0) } ?? page)?.arrayValue
  }

  /// The value at a dotted path (`meta.next_cursor`), or nil.
  static func value(in page: JSONValue, at path: String) -> JSONValue? {
    var value: JSONValue? = page
    for name in path.split(separator: ".") { value = value?[String(name)] }
    return value
  }

  /// The next page's URL at `path` inside `page`: nil when the member is missing, null or
  /// empty (the last page); an error when it is something else than a URL.
  static func fromBody(_ page: JSONValue, at path: String, base: URL, pageURL: String) throws(PullError) -> URL? {
    guard let value = value(in: page, at: path), value != .null else { return nil }
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

/// The pages of one source, one after the other: the URL of the first and, after each page,
/// the URL of the next (nil: that was the last), by the source's paging.
struct Pager {
  let source: PullSource
  private let base: URL
  private(set) var pagesRead = 0
  private(set) var itemsRead = 0

  init(source: PullSource, base: URL) {
    self.source = source
    self.base = base
  }

  /// Whether the next page is found from the page's body, parsed.
  var readsBody: Bool {
    switch source.paging {
    case .next: source.nextAt != nil
    case .pageNumber, .offset: true
    case .cursor(_, let place): if case .body = place { true } else { false }
    }
  }

  /// The first page's URL: the source's, with the paging's parameters set.
  func first() -> URL {
    switch source.paging {
    case .next, .cursor: base
    case .pageNumber(let parameter, let first, let size):
      with([(parameter, String(first))] + (size.map { [($0.parameter, String($0.size))] } ?? []))
    case .offset(let parameter, let size): with([(parameter, "0"), (size.parameter, String(size.size))])
    }
  }

  /// The next page's URL after `page` (its body parsed when `readsBody`), or nil.
  mutating func next(after page: FetchedPage, body: JSONValue?, shown: String) throws(PullError) -> URL? {
    pagesRead += 1
    switch source.paging {
    case .next:
      let linked = NextPage.fromLinkHeader(page.headers[canonicalForm: "Link"].map(String.init), base: page.url)
      guard let path = source.nextAt, let body else { return linked }
      return try NextPage.fromBody(body, at: path, base: page.url, pageURL: shown) ?? linked
    case .pageNumber(let parameter, let first, let size):
      let count = try items(of: body, shown: shown)
      itemsRead += count
      let reachedTotal = try totalReached(body, shown: shown)
      if count == 0 || size.map({ count < $0.size }) == true || reachedTotal { return nil }
      return with([(parameter, String(first + pagesRead))] + (size.map { [($0.parameter, String($0.size))] } ?? []))
    case .offset(let parameter, let size):
      let count = try items(of: body, shown: shown)
      itemsRead += count
      let reachedTotal = try totalReached(body, shown: shown)
      if count == 0 || count < size.size || reachedTotal { return nil }
      return with([(parameter, String(itemsRead)), (size.parameter, String(size.size))])
    case .cursor(let parameter, let place):
      let cursor: String?
      switch place {
      case .header(let name): cursor = page.headers.first(name: name)
      case .body(let path):
        switch body.flatMap({ NextPage.value(in: $0, at: path) }) {
        case .string(let text): cursor = text
        case .number(let number): cursor = number.literal
        case nil, .null: cursor = nil
        case let other?:
          throw PullError(
            .invalidPlan, "the page \(shown) has \(other.kindDescription) at \(path), where a cursor was expected",
            url: shown)
        }
      }
      guard let cursor, !cursor.isEmpty else { return nil }
      return with([(parameter, cursor)])
    }
  }

  /// How many items `body` holds: the array at `itemsAt`, or the page itself.
  private func items(of body: JSONValue?, shown: String) throws(PullError) -> Int {
    guard let list = body.flatMap({ NextPage.items(in: $0, at: source.itemsAt) }) else {
      throw PullError(
        .invalidPlan,
        "the page \(shown) has no array of items\(source.itemsAt.map { " at \($0)" } ?? ""): page numbers and offsets count them",
        url: shown)
    }
    return list.count
  }

  /// Whether the items read reach the total the page gives at `totalAt`.
  private func totalReached(_ body: JSONValue?, shown: String) throws(PullError) -> Bool {
    guard let path = source.totalAt else { return false }
    guard case .number(let number) = body.flatMap({ NextPage.value(in: $0, at: path) }), let total = number.int64Value
    else {
      throw PullError(.invalidPlan, "the page \(shown) has no whole number at \(path), the total", url: shown)
    }
    return Int64(itemsRead) >= total
  }

  /// The source's URL with `parameters` set (replacing the same names), the others kept.
  private func with(_ parameters: [(String, String)]) -> URL {
    guard var components = URLComponents(url: base, resolvingAgainstBaseURL: true) else { return base }
    var items = (components.queryItems ?? []).filter { item in !parameters.contains { $0.0 == item.name } }
    items += parameters.map { URLQueryItem(name: $0.0, value: $0.1) }
    components.queryItems = items
    return components.url ?? base
  }
}
