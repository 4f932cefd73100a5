import Foundation
import JSONLedger

/// One URL a pull reads, page after page, and the entity its items are.
public struct PullSource: Sendable, Equatable {
  /// The first page's URL (`https://api.example.com/issues?state=all`).
  public var url: String
  /// The model's entity of the items.
  public var entity: String
  /// Where the items are inside an envelope (`results` of `{count, next, results}`); nil: the
  /// page is the array of items, or the entity's `collectionPath` says where.
  public var itemsAt: String?
  /// Where the next page's URL is inside the page (`next`, `links.next`); nil: only the
  /// `Link: <…>; rel="next"` header is followed, as GitHub pages.
  public var nextAt: String?
  /// Whether objects of the entity that no page of the run holds are deleted (a paged prune:
  /// placeholders others still refer to are kept).
  public var prune: Bool
  /// How the pages after the first are asked for; `.next` (the default) follows the `Link`
  /// header or `nextAt`.
  public var paging: PullPaging
  /// Where the page says how many items there are in all (`count`, `meta.total`): page numbers
  /// and offsets stop once that many were read.
  public var totalAt: String?
  /// An incremental source: the largest value of an item field a run saw is sent to the next
  /// run in a query parameter (`?since=2026-12-05T10:00:00Z`), which then reads only what
  /// changed. Such a run merges: it never prunes.
  public var since: Since?

  /// The item field whose largest value a run keeps, and the query parameter that sends it.
  public struct Since: Sendable, Equatable {
    /// A dotted path inside each item (`updated_at`, `meta.modified`); strings compare as text
    /// (ISO 8601 times in one form sort so), numbers as numbers.
    public var field: String
    public var parameter: String
    public init(field: String, parameter: String) {
      self.field = field
      self.parameter = parameter
    }
  }

  public init(
    url: String, entity: String, itemsAt: String? = nil, nextAt: String? = nil, prune: Bool = false,
    paging: PullPaging = .next, totalAt: String? = nil, since: Since? = nil
  ) {
    self.url = url
    self.entity = entity
    self.itemsAt = itemsAt
    self.nextAt = nextAt
    self.prune = prune
    self.paging = paging
    self.totalAt = totalAt
    self.since = since
  }
}

/// How a source's pages after the first are asked for: the ways APIs page.
public enum PullPaging: Sendable, Equatable {
  /// The `Link` header's `rel="next"`, or the URL at the source's `nextAt`.
  case next
  /// A page number in a query parameter (`?page=2`), from `first`; with a page size, sent in
  /// its own parameter (`per_page=100`). Ends at an empty page, a page shorter than the size,
  /// or the total.
  case pageNumber(parameter: String, first: Int = 1, size: PageSize? = nil)
  /// An offset in items in a query parameter (`?offset=200`), with the page size sent in its
  /// own parameter (`limit=100`). Ends at an empty or short page, or the total.
  case offset(parameter: String, size: PageSize)
  /// A cursor the page gives (at a dotted path of its body, or in a response header), sent
  /// back in a query parameter (`?cursor=…`). Ends when a page gives none.
  case cursor(parameter: String, from: CursorPlace)

  /// A page size and the query parameter that carries it.
  public struct PageSize: Sendable, Equatable {
    public var parameter: String
    public var size: Int
    public init(parameter: String, size: Int) {
      self.parameter = parameter
      self.size = size
    }
  }

  /// Where a page gives the next cursor.
  public enum CursorPlace: Sendable, Equatable {
    /// At a dotted path of the body (`meta.next_cursor`).
    case body(String)
    /// In a response header (`X-Next-Cursor`).
    case header(String)
  }
}

/// A request header every page is asked with (`Authorization: Bearer …`). Its value is never
/// written to the store, a record, an error or the output.
public struct PullHeader: Sendable, Equatable {
  public var name: String
  public var value: String

  public init(name: String, value: String) {
    self.name = name
    self.value = value
  }

  /// `Name: value`, as curl's `-H` takes it.
  public init(parsing line: String) throws(PullError) {
    guard let colon = line.firstIndex(of: ":") else {
      throw PullError(.invalidPlan, "a header is `Name: value`; this one has no colon")
    }
    let name = line[..<colon].trimmingCharacters(in: .whitespaces)
    guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
      throw PullError(.invalidPlan, "a header's name is letters, digits and punctuation, with no space")
    }
    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    guard !value.utf8.contains(where: { $0 == 10 || $0 == 13 }) else {
      throw PullError(.invalidPlan, "the value of header \(name) holds a line break")
    }
    self.init(name: name, value: value)
  }
}

/// How often and how long a pull tries a page that fails for a reason that passes (a lost
/// connection, 429, 502, 503, 504).
public struct RetryPolicy: Sendable, Equatable {
  /// Tries of one page, the first included.
  public var attempts: Int
  /// The wait before the second try; each later wait doubles, with jitter (a random part of
  /// up to half), up to `longestWait`. A `Retry-After` the server sends is waited instead.
  public var firstWait: Duration
  /// The longest wait between two tries, `Retry-After` included: a server asking for more is
  /// an error.
  public var longestWait: Duration

  public init(attempts: Int = 5, firstWait: Duration = .milliseconds(500), longestWait: Duration = .seconds(60)) {
    self.attempts = attempts
    self.firstWait = firstWait
    self.longestWait = longestWait
  }
}

/// What one pull reads: its sources, all staged into one batch, and its bounds.
public struct PullPlan: Sendable, Equatable {
  public var sources: [PullSource]
  /// Headers every request carries.
  public var headers: [PullHeader]
  /// The most pages one source may have: more is an error (a prune of a run cut short would
  /// delete what the pages not read hold).
  public var maxPages: Int
  /// The longest a run may take, retries and waits included.
  public var timeout: Duration
  public var retries: RetryPolicy

  public init(
    sources: [PullSource], headers: [PullHeader] = [], maxPages: Int = 1000, timeout: Duration = .seconds(600),
    retries: RetryPolicy = RetryPolicy()
  ) {
    self.sources = sources
    self.headers = headers
    self.maxPages = maxPages
    self.timeout = timeout
    self.retries = retries
  }

  /// A plan from a pull file: `{"sources": [{"url": …, "entity": …, "itemsAt": …, "nextAt":
  /// …, "prune": true}], "maxPages": 200}`, or the array of sources alone. An unknown key, a
  /// missing one or a value of the wrong type is an error naming its place; headers are not
  /// taken from the file (they hold secrets: give them to the run).
  public init(json: some Collection<UInt8>, source: String) throws(PullError) {
    let value: JSONValue
    do { value = try JSONParser.parse(json) } catch {
      throw PullError(.invalidPlan, "\(source): \(error)")
    }
    var reader = PlanReader(file: source)
    self = try reader.plan(value)
  }
}

/// Reads a pull file, naming each problem's place (`pull.json: sources[1].prune`).
private struct PlanReader {
  let file: String

  func fail(_ place: String, _ reason: String) -> PullError {
    PullError(.invalidPlan, "\(file): \(place.isEmpty ? "" : place + " ")\(reason)")
  }

  mutating func plan(_ value: JSONValue) throws(PullError) -> PullPlan {
    if case .array = value { return PullPlan(sources: try sources(value, at: "")) }
    guard let object = value.objectValue else { throw fail("", "is not a pull plan: an object or an array of sources") }
    try checkKeys(object, ["sources", "maxPages"], at: "")
    guard let list = object["sources"] else { throw fail("", "needs sources") }
    var plan = PullPlan(sources: try sources(list, at: "sources"))
    if let pages = object["maxPages"] {
      guard case .number(let number) = pages, let count = number.int64Value, count > 0, count <= Int32.max else {
        throw fail("maxPages", "must be a number of pages above 0")
      }
      plan.maxPages = Int(count)
    }
    return plan
  }

  func sources(_ value: JSONValue, at place: String) throws(PullError) -> [PullSource] {
    guard case .array(let items) = value, !items.isEmpty else { throw fail(place, "must be a list of sources") }
    var sources: [PullSource] = []
    for (index, item) in items.enumerated() {
      let here = "\(place)[\(index)]"
      guard let object = item.objectValue else { throw fail(here, "must be an object") }
      try checkKeys(
        object,
        [
          "url", "entity", "itemsAt", "nextAt", "prune", "pageParam", "firstPage", "perPageParam", "perPage",
          "offsetParam", "limitParam", "limit", "cursorAt", "cursorHeader", "cursorParam", "totalAt", "sinceField",
          "sinceParam",
        ], at: here)
      guard let url = object["url"]?.stringValue else { throw fail(here, "needs url, a string") }
      guard let entity = object["entity"]?.stringValue else { throw fail(here, "needs entity, a string") }
      var source = PullSource(url: url, entity: entity)
      var texts: [String: String] = [:]
      for key in [
        "itemsAt", "nextAt", "pageParam", "perPageParam", "offsetParam", "limitParam", "cursorAt", "cursorHeader",
        "cursorParam", "totalAt", "sinceField", "sinceParam",
      ] {
        guard let member = object[key], member != .null else { continue }
        guard let text = member.stringValue, !text.isEmpty else { throw fail("\(here).\(key)", "must be a string") }
        texts[key] = text
      }
      var numbers: [String: Int] = [:]
      for key in ["firstPage", "perPage", "limit"] {
        guard let member = object[key], member != .null else { continue }
        guard case .number(let number) = member, let value = number.int64Value, value >= 0, value <= Int32.max else {
          throw fail("\(here).\(key)", "must be a whole number, 0 or more")
        }
        numbers[key] = Int(value)
      }
      source.itemsAt = texts["itemsAt"]
      source.nextAt = texts["nextAt"]
      source.totalAt = texts["totalAt"]
      switch (texts["sinceField"], texts["sinceParam"]) {
      case (nil, nil): break
      case (let field?, let parameter?): source.since = PullSource.Since(field: field, parameter: parameter)
      default: throw fail(here, "sinceField and sinceParam go together")
      }
      do {
        source.paging = try PullPaging(
          pageParameter: texts["pageParam"], firstPage: numbers["firstPage"], perPageParameter: texts["perPageParam"],
          perPage: numbers["perPage"], offsetParameter: texts["offsetParam"], limitParameter: texts["limitParam"],
          limit: numbers["limit"], cursorAt: texts["cursorAt"], cursorHeader: texts["cursorHeader"],
          cursorParameter: texts["cursorParam"])
      } catch {
        throw fail(here, error.message)
      }
      if let prune = object["prune"] {
        guard case .bool(let flag) = prune else { throw fail("\(here).prune", "must be true or false") }
        source.prune = flag
      }
      sources.append(source)
    }
    return sources
  }

  func checkKeys(_ object: JSONObject, _ known: [String], at place: String) throws(PullError) {
    for key in object.members.map(\.key) where !known.contains(key) {
      throw fail(
        place.isEmpty ? key : "\(place).\(key)", "is not a key of a pull plan (known: \(known.joined(separator: ", ")))"
      )
    }
  }
}

extension PullPaging {
  /// Paging from the flat options of the command line and a pull file (`pageParam`,
  /// `perPage`, `offsetParam`, `limit`, `cursorAt`, `cursorParam`, …): at most one way, each
  /// with what it needs.
  public init(
    pageParameter: String? = nil, firstPage: Int? = nil, perPageParameter: String? = nil, perPage: Int? = nil,
    offsetParameter: String? = nil, limitParameter: String? = nil, limit: Int? = nil, cursorAt: String? = nil,
    cursorHeader: String? = nil, cursorParameter: String? = nil
  ) throws(PullError) {
    func refuse(_ reason: String) -> PullError { PullError(.invalidPlan, reason) }
    let ways = [pageParameter != nil, offsetParameter != nil, cursorParameter != nil].filter { $0 }.count
    guard ways <= 1 else { throw refuse("pages are asked for one way: a page number, an offset or a cursor") }
    if let pageParameter {
      guard limitParameter == nil, limit == nil, cursorAt == nil, cursorHeader == nil else {
        throw refuse("page numbers take a first page and a page size, not a limit or a cursor")
      }
      guard (perPageParameter == nil) == (perPage == nil), perPage.map({ $0 > 0 }) ?? true else {
        throw refuse("a page size is its parameter and a size above 0, both")
      }
      let size = perPageParameter.flatMap { name in perPage.map { PageSize(parameter: name, size: $0) } }
      self = .pageNumber(parameter: pageParameter, first: firstPage ?? 1, size: size)
    } else if let offsetParameter {
      guard perPageParameter == nil, perPage == nil, firstPage == nil, cursorAt == nil, cursorHeader == nil else {
        throw refuse("offsets take a limit, not page numbers or a cursor")
      }
      guard let limit, limit > 0 else { throw refuse("offsets need a limit above 0: the page size") }
      self = .offset(parameter: offsetParameter, size: PageSize(parameter: limitParameter ?? "limit", size: limit))
    } else if let cursorParameter {
      guard perPageParameter == nil, perPage == nil, firstPage == nil, limitParameter == nil, limit == nil else {
        throw refuse("a cursor takes where the page gives it, not page numbers or a limit")
      }
      switch (cursorAt, cursorHeader) {
      case (let path?, nil): self = .cursor(parameter: cursorParameter, from: .body(path))
      case (nil, let name?): self = .cursor(parameter: cursorParameter, from: .header(name))
      default: throw refuse("a cursor is given at a path of the page or in a header: one of the two")
      }
    } else {
      guard perPageParameter == nil, perPage == nil, firstPage == nil, limitParameter == nil, limit == nil,
        cursorAt == nil, cursorHeader == nil
      else { throw refuse("a page size, a limit or a cursor's place needs its parameter (page, offset or cursor)") }
      self = .next
    }
  }
}
