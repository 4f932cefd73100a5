public import AsyncHTTPClient
import Crypto
import Foundation
public import JSONLedger
import NIOHTTP1

/// The pages a pull read, staged into one batch and not applied yet: what `Ledger.pull(_:…)`
/// applies, and what a replica applies through its remote.
public struct PulledBatch: Sendable {
  /// Every page of every source, staged in the order read.
  public var batch: ChangeBatch
  /// Pages read, over all sources.
  public var pages: Int
  /// Bytes of the pages' bodies.
  public var bytes: Int
  /// Tries after one failed (a 429, a 503, a lost connection).
  public var retries: Int
  /// The sources' first URLs, redacted.
  public var sources: [String]
  /// A key for the batch: the log's head when the run started and a digest of every page's
  /// URL and body. Two machines pulling the same plan at the same head write one batch; a run
  /// at a later head applies even when its pages are those of an earlier run (a change undone
  /// by the backend is undone in the store).
  public var idempotencyKey: String
  /// `pull: 3 pages (12 KB) from https://…`: the record's message unless the caller gives one.
  public var summary: String
  /// Pages the server said had not changed (304) since the copy an earlier run kept.
  public var notModified: Int
  /// The pages that came with a validator, as the local values that keep them
  /// (`PageCache.encode`): encoded as each page arrives, so that a run holds each kept page
  /// once, not its body and then its encoding beside it.
  let pagesToKeep: [(key: String, value: [UInt8])]
  /// The largest value of each incremental source's field, kept once the batch is applied.
  let sinceToKeep: [(key: String, value: JSONValue)]

  /// What the next run asks with, as the store's local values: the pages that came with an
  /// `ETag` or `Last-Modified` (asked whether they changed) and each incremental source's
  /// largest value (sent as its `since`). Give them to `apply(_:…keeping:)` with the batch:
  /// kept in its transaction, so that a run that failed keeps nothing (its next run asks for
  /// all again) and one that applied never asks for less than it wrote.
  public var localValues: [(key: String, value: [UInt8]?)] {
    pagesToKeep.map { ($0.key, $0.value) } + sinceToKeep.map { ($0.key, JSONWriter(options: []).bytes(from: $0.value)) }
  }

  /// Keeps `localValues` in a transaction of their own: for a batch applied some other way
  /// than with them (call once it is applied).
  public func keepState(in ledger: Ledger) throws {
    // One transaction for all of them: a run's pages are kept together or not at all.
    try ledger.setLocalValues(localValues)
  }
}

/// How far a run is: what a progress line shows.
public struct PullProgress: Sendable {
  /// Pages read so far, over all sources.
  public var pages: Int
  /// Bytes of the pages' bodies.
  public var bytes: Int
  /// Pages not modified (304) among them.
  public var notModified: Int
  /// Tries after one failed.
  public var retries: Int
}

/// A pull's outcome: the batch applied (or found to change nothing) and what the run read.
public struct PullSummary: Sendable {
  public var batch: BatchSummary
  public var pages: Int
  /// Pages the server said had not changed (304).
  public var notModified: Int
  public var bytes: Int
  public var retries: Int
  public var sources: [String]
}

extension Ledger {
  /// Reads every page of every source of `plan` and applies them as one batch: all or
  /// nothing, and a run that finds what the store holds writes no record
  /// (`BatchSummary.wroteRecord`). A page that fails after its retries fails the run with
  /// nothing written. The record's source is the redacted URLs; headers are never written.
  ///
  /// `client`: the HTTP client to use; nil makes one for the run. The pull follows up to 5
  /// redirects itself, sending the plan's headers to the first URL's origin only; give a
  /// client made with `redirectConfiguration: .disallow` to keep that rule (one that follows
  /// redirects itself forwards headers as AsyncHTTPClient does).
  public func pull(
    _ plan: PullPlan, client: HTTPClient? = nil, message: String? = nil, author: String? = nil,
    idempotencyKey: String? = nil
  ) async throws -> PullSummary {
    let pulled = try await fetch(plan, client: client)
    let summary = try await apply(
      pulled.batch, message: message ?? pulled.summary, author: author, source: pulled.sources.joined(separator: ", "),
      idempotencyKey: idempotencyKey ?? pulled.idempotencyKey, keeping: pulled.localValues)
    return PullSummary(
      batch: summary, pages: pulled.pages, notModified: pulled.notModified, bytes: pulled.bytes,
      retries: pulled.retries, sources: pulled.sources)
  }

  /// Reads every page of every source of `plan` into one staged batch, applying nothing: what
  /// `pull` applies. Pages are staged as they arrive; a page that is not JSON is an error
  /// naming its URL (redacted), line and column.
  ///
  /// `progress` is called after each page.
  public func fetch(
    _ plan: PullPlan, client given: HTTPClient? = nil, progress: (@Sendable (PullProgress) -> Void)? = nil
  ) async throws -> PulledBatch {
    guard !plan.sources.isEmpty else { throw PullError(.invalidPlan, "a pull needs at least one source") }
    guard plan.maxPages > 0 else { throw PullError(.invalidPlan, "maxPages must be above 0") }
    for source in plan.sources where model.entity(named: source.entity) == nil {
      throw LedgerError.unknownEntity(source.entity, known: model.entities.map(\.name))
    }
    for source in plan.sources where source.since != nil && source.prune {
      throw PullError(
        .invalidPlan,
        "\(RedactedURL.text(source.url)) is read incrementally (since): its pages hold only what changed, so a prune would delete the rest"
      )
    }
    let urls = try plan.sources.map { source throws(PullError) in try Self.httpURL(source.url) }
    // Redirects are followed by the fetcher, which sends the plan's headers to their origin
    // only; and it tries a connection again by the plan's policy, so the client's pool does
    // not (it kept a TLS failure waiting for its 10 s connect timeout, on every try).
    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    configuration.connectionPool.retryConnectionEstablishment = false
    let client = given ?? HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
      let pulled = try await fetch(plan, urls: urls, client: client, progress: progress)
      if given == nil { try await client.shutdown() }
      return pulled
    } catch {
      if given == nil { try? await client.shutdown() }
      throw error
    }
  }

  private func fetch(
    _ plan: PullPlan, urls: [URL], client: HTTPClient, progress: (@Sendable (PullProgress) -> Void)?
  ) async throws -> PulledBatch {
    let start = try head
    let fetcher = PageFetcher(client: client, plan: plan, deadline: .now + plan.timeout)
    var batch = makeBatch()
    var digest = SHA256()
    var (pages, bytes, notModified, retries) = (0, 0, 0, 0)
    var pagesToKeep: [(key: String, value: [UInt8])] = []
    // The record's account of the run: each page's URL, status, validator and bytes.
    var pageRecords: [JSONValue] = []
    let started = ContinuousClock.now
    var sinceToKeep: [(key: String, value: JSONValue)] = []
    // Each source's pager, its first URL asking for what changed since the largest value the
    // last run saw when the source is incremental.
    var pagers: [Pager] = []
    var largestValues: [JSONValue?] = []
    for (source, first) in zip(plan.sources, urls) {
      let largest = try source.since.flatMap { since in
        try localValue(forKey: Self.sinceKey(source.url, since)).flatMap { try? JSONParser.parse($0) }
      }
      var base = first
      if let since = source.since, let largest, let text = Self.queryText(largest) {
        base = Self.url(first, setting: since.parameter, to: text)
      }
      pagers.append(Pager(source: source, base: base))
      largestValues.append(largest)
    }
    // Pages asked for before they are staged, so that the network and the mapping overlap:
    // the next page of the source being read once this one names it, and the first pages of
    // the sources after it, up to `pagesAhead` at once.
    var upcoming: [PageRequest] = []
    var firstAskedFor = Set<Int>()
    do {
      for (index, source) in plan.sources.enumerated() {
        let options = StagingOptions(prune: source.prune, itemsAt: source.itemsAt)
        let first = urls[index]
        var next: URL? = pagers[index].first()
        var seen: Set<String> = []
        while let url = next {
          try Task.checkCancellation()
          let shown = RedactedURL.text(url)
          guard seen.insert(url.absoluteString).inserted else {
            throw PullError(
              .pageLoop, "the pages of \(RedactedURL.text(first)) lead back to \(shown), a page read already",
              url: shown)
          }
          guard pagers[index].pagesRead < plan.maxPages else {
            throw PullError(
              .tooManyPages,
              "the pages of \(RedactedURL.text(first)) go on past \(plan.maxPages) (the plan's maxPages)",
              url: shown)
          }
          let request: PageRequest
          if let asked = upcoming.firstIndex(where: { $0.url == url }) {
            request = upcoming.remove(at: asked)
          } else {
            request = try PageRequest(url, origin: first, fetcher, self)
          }
          firstAskedFor.insert(index)
          var later = index + 1
          while upcoming.count < Self.pagesAhead, later < pagers.count {
            if firstAskedFor.insert(later).inserted {
              upcoming.append(try PageRequest(pagers[later].first(), origin: urls[later], fetcher, self))
            }
            later += 1
          }
          var page = try await request.task.value
          retries += page.retries
          var pageRecord: JSONObject = [
            "url": .string(RedactedURL.text(page.url)), "status": page.notModified ? 304 : 200,
            "bytes": .number(JSONNumber(page.body.count)),
          ]
          if let etag = page.headers.first(name: "ETag") ?? (page.notModified ? request.kept?.etag : nil) {
            pageRecord["etag"] = .string(etag)
          }
          if page.retries > 0 { pageRecord["retries"] = .number(JSONNumber(page.retries)) }
          pageRecords.append(.object(pageRecord))
          // A page kept from a run before was asked for with its validators; a 304 stands for it.
          if page.notModified, let kept = request.kept {
            notModified += 1
            let headers = HTTPHeaders(kept.link.map { [("Link", $0)] } ?? [])
            page = FetchedPage(url: page.url, headers: headers, body: kept.body, notModified: true)
          } else if let entry = PageCache.entry(for: page) {
            pagesToKeep.append((PageCache.key(url), PageCache.encode(entry)))
          }
          let pageShown = RedactedURL.text(page.url)
          // The page is parsed here only when the next page or the since value is in it;
          // staging reads its text on its own.
          let body: JSONValue? =
            pagers[index].readsBody || source.since != nil ? try JSONParser.parse(page.body) : nil
          next = try pagers[index].next(after: page, body: body, shown: pageShown)
          if let following = next, !upcoming.contains(where: { $0.url == following }) {
            upcoming.insert(try PageRequest(following, origin: first, fetcher, self), at: 0)
          }
          try batch.stage(json: page.body, as: source.entity, options: options, source: pageShown)
          digest.update(data: Array(page.url.absoluteString.utf8) + [0])
          digest.update(data: page.body)
          pages += 1
          bytes += page.notModified ? 0 : page.body.count
          progress?(PullProgress(pages: pages, bytes: bytes, notModified: notModified, retries: retries))
          if let since = source.since, let body {
            for item in NextPage.items(in: body, at: source.itemsAt) ?? [] {
              guard let value = NextPage.value(in: item, at: since.field),
                Self.isLarger(value, than: largestValues[index])
              else { continue }
              largestValues[index] = value
            }
          }
        }
        if let since = source.since, let largest = largestValues[index] {
          sinceToKeep.append((Self.sinceKey(source.url, since), largest))
        }
      }
    } catch {
      for request in upcoming { request.task.cancel() }
      throw error
    }
    let elapsed = ContinuousClock.now - started
    let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    batch.run = [
      "pull": ["pages": .array(pageRecords), "durationMs": .number(JSONNumber(milliseconds))]
    ]
    let hash = digest.finalize().prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    let sources = urls.map(RedactedURL.text)
    return PulledBatch(
      batch: batch, pages: pages, bytes: bytes, retries: retries, sources: sources,
      idempotencyKey: "pull@\(start)#\(hash)",
      summary:
        "pull: \(pages) page\(pages == 1 ? "" : "s") (\(bytes) bytes\(notModified > 0 ? ", \(notModified) not modified" : "")) from \(sources.joined(separator: ", "))",
      notModified: notModified, pagesToKeep: pagesToKeep, sinceToKeep: sinceToKeep)
  }

  /// The most pages a run asks for before it stages them (besides the one it waits for).
  static let pagesAhead = 4

  /// The local value's key of an incremental source's largest value.
  static func sinceKey(_ url: String, _ since: PullSource.Since) -> String {
    let name = [url, since.field, since.parameter].joined(separator: "\n")
    return "pull.since." + PageCache.hex(SHA256.hash(data: Array(name.utf8)))
  }

  /// Whether `value` sorts after `current`: numbers as numbers, strings as text; a value of
  /// another kind than the current one, or not a number or a string, never does.
  static func isLarger(_ value: JSONValue, than current: JSONValue?) -> Bool {
    switch (value, current) {
    case (.string, nil), (.number, nil): return true
    case (.string(let text), .string(let old)?): return text > old
    case (.number(let number), .number(let old)?):
      return (Double(number.literal) ?? -.infinity) > (Double(old.literal) ?? -.infinity)
    default: return false
    }
  }

  /// A since value as a query parameter's text.
  static func queryText(_ value: JSONValue) -> String? {
    switch value {
    case .string(let text): text
    case .number(let number): number.literal
    default: nil
    }
  }

  /// `url` with the query parameter `name` set to `value` (replacing one of that name).
  static func url(_ url: URL, setting name: String, to value: String) -> URL {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
    components.queryItems =
      (components.queryItems ?? []).filter { $0.name != name } + [URLQueryItem(name: name, value: value)]
    return components.url ?? url
  }

  /// `text` as an http or https URL with a host, or an error naming it (redacted).
  static func httpURL(_ text: String) throws(PullError) -> URL {
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      url.host?.isEmpty == false
    else {
      throw PullError(.invalidURL, "\(RedactedURL.text(text)) is no http or https URL with a host")
    }
    return url
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}

/// A page asked for, its answer to come: the kept copy it was asked with, and the fetch.
private struct PageRequest {
  let url: URL
  let kept: PageCache.Entry?
  let task: Task<FetchedPage, any Error>

  /// Asks for `url`; the plan's headers go to `origin` only (the source's first URL).
  init(_ url: URL, origin: URL, _ fetcher: PageFetcher, _ ledger: Ledger) throws {
    let kept = try PageCache.entry(for: url, in: ledger)
    self.url = url
    self.kept = kept
    let validators = kept?.validators ?? []
    task = Task { try await fetcher.fetch(url, validators: validators, origin: origin) }
  }
}
