public import AsyncHTTPClient
import Crypto
public import Foundation
public import JSONLedger
import NIOHTTP1

/// The pages a pull read, staged into one batch and not applied yet: what ``Ledger/pull(_:client:message:author:idempotencyKey:)``
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
  /// The pages that came with a validator, kept once the batch is applied (`keepPages(in:)`).
  let pagesToKeep: [(URL, PageCache.Entry)]

  /// Keeps the pages that came with an `ETag` or `Last-Modified` as the store's local values,
  /// so that the next run asks whether they changed: call once the batch is applied.
  public func keepPages(in ledger: Ledger) throws {
    for (url, entry) in pagesToKeep { try PageCache.keep(entry, for: url, in: ledger) }
  }
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
  /// `client`: the HTTP client to use; nil makes one for the run (redirects followed, up to 5).
  public func pull(
    _ plan: PullPlan, client: HTTPClient? = nil, message: String? = nil, author: String? = nil,
    idempotencyKey: String? = nil
  ) async throws -> PullSummary {
    let pulled = try await fetch(plan, client: client)
    let summary = try await apply(
      pulled.batch, message: message ?? pulled.summary, author: author, source: pulled.sources.joined(separator: ", "),
      idempotencyKey: idempotencyKey ?? pulled.idempotencyKey)
    try pulled.keepPages(in: self)
    return PullSummary(
      batch: summary, pages: pulled.pages, notModified: pulled.notModified, bytes: pulled.bytes,
      retries: pulled.retries, sources: pulled.sources)
  }

  /// Reads every page of every source of `plan` into one staged batch, applying nothing: what
  /// `pull` applies. Pages are staged as they arrive; a page that is not JSON is an error
  /// naming its URL (redacted), line and column.
  public func fetch(_ plan: PullPlan, client given: HTTPClient? = nil) async throws -> PulledBatch {
    guard !plan.sources.isEmpty else { throw PullError(.invalidPlan, "a pull needs at least one source") }
    guard plan.maxPages > 0 else { throw PullError(.invalidPlan, "maxPages must be above 0") }
    for source in plan.sources where model.entity(named: source.entity) == nil {
      throw LedgerError.unknownEntity(source.entity, known: model.entities.map(\.name))
    }
    let urls = try plan.sources.map { source throws(PullError) in try Self.httpURL(source.url) }
    let client =
      given
      ?? HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false)))
    do {
      let pulled = try await fetch(plan, urls: urls, client: client)
      if given == nil { try await client.shutdown() }
      return pulled
    } catch {
      if given == nil { try? await client.shutdown() }
      throw error
    }
  }

  private func fetch(_ plan: PullPlan, urls: [URL], client: HTTPClient) async throws -> PulledBatch {
    let start = try head
    var fetcher = PageFetcher(client: client, plan: plan, deadline: .now + plan.timeout)
    var batch = makeBatch()
    var digest = SHA256()
    var (pages, bytes, notModified) = (0, 0, 0)
    var pagesToKeep: [(URL, PageCache.Entry)] = []
    for (source, first) in zip(plan.sources, urls) {
      let options = StagingOptions(prune: source.prune, itemsAt: source.itemsAt)
      var pager = Pager(source: source, base: first)
      var next: URL? = pager.first()
      var seen: Set<String> = []
      while let url = next {
        try Task.checkCancellation()
        let shown = RedactedURL.text(url)
        guard seen.insert(url.absoluteString).inserted else {
          throw PullError(
            .pageLoop, "the pages of \(RedactedURL.text(first)) lead back to \(shown), a page read already", url: shown)
        }
        guard pager.pagesRead < plan.maxPages else {
          throw PullError(
            .tooManyPages, "the pages of \(RedactedURL.text(first)) go on past \(plan.maxPages) (the plan's maxPages)",
            url: shown)
        }
        // A page kept from a run before is asked for with its validators; a 304 stands for it.
        let kept = try PageCache.entry(for: url, in: self)
        var page = try await fetcher.fetch(url, validators: kept?.validators ?? [])
        if page.notModified, let kept {
          notModified += 1
          let headers = HTTPHeaders(kept.link.map { [("Link", $0)] } ?? [])
          page = FetchedPage(url: page.url, headers: headers, body: kept.body, notModified: true)
        } else if let entry = PageCache.entry(for: page) {
          pagesToKeep.append((url, entry))
        }
        let pageShown = RedactedURL.text(page.url)
        try batch.stage(json: page.body, as: source.entity, options: options, source: pageShown)
        digest.update(data: Array(page.url.absoluteString.utf8) + [0])
        digest.update(data: page.body)
        pages += 1
        bytes += page.notModified ? 0 : page.body.count
        // Staging parsed the page already; it is parsed again only when the next page is in it.
        let body = pager.readsBody ? try JSONParser.parse(page.body) : nil
        next = try pager.next(after: page, body: body, shown: pageShown)
      }
    }
    let hash = digest.finalize().prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    let sources = urls.map(RedactedURL.text)
    return PulledBatch(
      batch: batch, pages: pages, bytes: bytes, retries: fetcher.retries, sources: sources,
      idempotencyKey: "pull@\(start)#\(hash)",
      summary:
        "pull: \(pages) page\(pages == 1 ? "" : "s") (\(bytes) bytes\(notModified > 0 ? ", \(notModified) not modified" : "")) from \(sources.joined(separator: ", "))",
      notModified: notModified, pagesToKeep: pagesToKeep)
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
