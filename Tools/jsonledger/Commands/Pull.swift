import ArgumentParser
import Foundation
import JSONLedger
import JSONLedgerPull

struct Pull: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "pull",
    abstract: "Read every page of a live HTTP API and apply them as one batch.",
    discussion: """
      Follows the Link header's rel="next" (GitHub) or, with --next-at, a URL inside each page \
      (next of {count, next, results}); all pages of the run are one batch, all or nothing, and a \
      run that finds what the store holds writes nothing. 429, 502, 503, 504 and lost connections \
      are tried again (Retry-After is honoured). Header values are never written or printed; \
      query parameters named like secrets (token, key, …) are shown as REDACTED.
      """)

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Argument(help: "The first page's URL (or none, with --plan).")
  var url: String?

  @Option(help: "The entity of the pages' items.")
  var entity: String?

  @Option(help: ArgumentHelp("Where the items are in each page's envelope (results).", valueName: "path"))
  var itemsAt: String?

  @Option(help: ArgumentHelp("Where the next page's URL is in each page (next, links.next).", valueName: "path"))
  var nextAt: String?

  @Flag(help: "Delete objects of the entity that no page of the run holds.")
  var prune = false

  @Option(help: ArgumentHelp("Page by number in this query parameter (page).", valueName: "name"))
  var pageParam: String?

  @Option(help: "The first page's number (1).")
  var firstPage: Int?

  @Option(help: ArgumentHelp("The query parameter of the page size (per_page).", valueName: "name"))
  var perPageParam: String?

  @Option(help: "The page size asked for; a shorter page is the last.")
  var perPage: Int?

  @Option(help: ArgumentHelp("Page by an offset in items in this query parameter (offset).", valueName: "name"))
  var offsetParam: String?

  @Option(help: ArgumentHelp("The query parameter of the limit with --offset-param (limit).", valueName: "name"))
  var limitParam: String?

  @Option(help: "The page size with --offset-param; a shorter page is the last.")
  var limit: Int?

  @Option(help: ArgumentHelp("Page by a cursor sent back in this query parameter (cursor).", valueName: "name"))
  var cursorParam: String?

  @Option(help: ArgumentHelp("Where each page gives the next cursor (meta.next_cursor).", valueName: "path"))
  var cursorAt: String?

  @Option(help: ArgumentHelp("The response header that gives the next cursor.", valueName: "name"))
  var cursorHeader: String?

  @Option(
    help: ArgumentHelp(
      "Read incrementally: the item field whose largest value the next run sends (updated_at).", valueName: "path"))
  var sinceField: String?

  @Option(help: ArgumentHelp("The query parameter that sends it (since).", valueName: "name"))
  var sinceParam: String?

  @Option(
    help: ArgumentHelp(
      "Where a page gives the total of items (count): numbers and offsets stop there.", valueName: "path"))
  var totalAt: String?

  @Option(help: ArgumentHelp("A pull file: {\"sources\": [{url, entity, itemsAt, nextAt, prune}]}.", valueName: "file"))
  var plan: String?

  @Option(help: ArgumentHelp("A request header, 'Name: value' (repeatable).", valueName: "header"))
  var header: [String] = []

  @Option(help: ArgumentHelp("A file of request headers, one 'Name: value' a line.", valueName: "file"))
  var headerFile: String?

  @Option(help: ArgumentHelp("A header whose value is an environment variable's, NAME=VARIABLE.", valueName: "pair"))
  var headerEnv: [String] = []

  @Option(help: "The most pages one source may have (more is an error).")
  var maxPages = 1000

  @Option(help: "The longest the run may take, in seconds, retries included.")
  var timeout = 600

  @Option(help: "Tries of one page, the first included.")
  var attempts = 5

  @Option(help: "Why this batch was applied (default: the pages and URLs read).")
  var message: String?

  @Option(help: "Who applied it.")
  var author: String?

  @Option(help: "A key that makes re-applying the same batch a no-op (default: the head and the pages' digest).")
  var idempotencyKey: String?

  @Option(
    help: ArgumentHelp(
      "Pull again this long after each run ends (30s, 10m, 1h), until SIGINT or SIGTERM.", valueName: "interval"))
  var every: Interval?

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func validate() throws {
    if plan == nil, url == nil { throw ValidationError("give the first page's URL, or --plan FILE") }
    let paging: [Any?] = [
      pageParam, firstPage, perPageParam, perPage, offsetParam, limitParam, limit, cursorParam, cursorAt, cursorHeader,
      totalAt, sinceField, sinceParam,
    ]
    if plan != nil,
      url != nil || entity != nil || itemsAt != nil || nextAt != nil || prune || paging.contains(where: { $0 != nil })
    {
      throw ValidationError(
        "--plan names its sources: no URL, --entity, --items-at, --next-at, --prune or paging beside it")
    }
    if (sinceField == nil) != (sinceParam == nil) {
      throw ValidationError("--since-field and --since-param go together")
    }
    if sinceField != nil, prune {
      throw ValidationError("--since-field reads only what changed since the last run: a --prune would delete the rest")
    }
    if url != nil, entity == nil { throw ValidationError("--entity names the entity of the pages' items") }
    if maxPages < 1 { throw ValidationError("--max-pages must be at least 1") }
    if timeout < 1 { throw ValidationError("--timeout must be at least 1 second") }
    if attempts < 1 { throw ValidationError("--attempts must be at least 1") }
  }

  func pullPlan() throws -> PullPlan {
    var pullPlan: PullPlan
    if let plan {
      guard let data = FileManager.default.contents(atPath: plan) else {
        throw CommandFailure(message: "cannot read the pull file \(plan)", exitCode: 1)
      }
      pullPlan = try PullPlan(json: Array(data), source: plan)
    } else if let url, let entity {
      let paging = try PullPaging(
        pageParameter: pageParam, firstPage: firstPage, perPageParameter: perPageParam, perPage: perPage,
        offsetParameter: offsetParam, limitParameter: limitParam, limit: limit, cursorAt: cursorAt,
        cursorHeader: cursorHeader, cursorParameter: cursorParam)
      pullPlan = PullPlan(sources: [
        PullSource(
          url: url, entity: entity, itemsAt: itemsAt, nextAt: nextAt, prune: prune, paging: paging, totalAt: totalAt,
          since: sinceField.flatMap { field in sinceParam.map { PullSource.Since(field: field, parameter: $0) } })
      ])
    } else {
      throw ValidationError("give the first page's URL, or --plan FILE")
    }
    pullPlan.maxPages = maxPages
    pullPlan.timeout = .seconds(timeout)
    pullPlan.retries.attempts = attempts
    pullPlan.headers = try headers()
    return pullPlan
  }

  /// The headers of --header, --header-file and --header-env, in that order.
  func headers() throws -> [PullHeader] {
    var lines = header
    if let headerFile {
      guard let data = FileManager.default.contents(atPath: headerFile) else {
        throw CommandFailure(message: "cannot read the header file \(headerFile)", exitCode: 1)
      }
      lines += String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }
    var headers = try lines.map { line in try PullHeader(parsing: line) }
    for pair in headerEnv {
      let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, !parts[0].isEmpty else {
        throw ValidationError("--header-env takes NAME=VARIABLE, as Authorization=API_TOKEN")
      }
      guard let value = ProcessInfo.processInfo.environment[parts[1]] else {
        throw ValidationError("--header-env \(parts[0]): the environment has no \(parts[1])")
      }
      headers.append(try PullHeader(parsing: "\(parts[0]): \(value)"))
    }
    return headers
  }

  func run() async throws {
    let plan = try pullPlan()
    let ledger = try storeOptions.open(durability: writeOptions.durability)
    guard let every else {
      try await pullOnce(plan, into: ledger)
      return
    }
    // On a schedule: SIGINT or SIGTERM lets the run under way finish whole, then exits 0.
    let stop = StopSignals()
    defer { stop.restore() }
    while !stop.isRequested {
      try await pullReportingFailure(plan, into: ledger)
      let next = ContinuousClock.now + every.duration
      while !stop.isRequested, ContinuousClock.now < next { try await Task.sleep(for: .milliseconds(100)) }
    }
  }

  /// One run of a schedule: a run that fails is said (nothing was written) and the schedule
  /// goes on; a store that takes no more writes ends it.
  func pullReportingFailure(_ plan: PullPlan, into ledger: Ledger) async throws {
    do {
      try await pullOnce(plan, into: ledger)
    } catch let error as PullError {
      Output.error("this run failed, nothing written: \(error.message)")
    } catch let error as LedgerError where error.code != .readOnly && error.code != .closed {
      Output.error("this run failed, nothing written: \(error.message)")
    }
  }

  /// One run: every page, one batch, and what the next run asks with kept.
  func pullOnce(_ plan: PullPlan, into ledger: Ledger) async throws {
    // Pages, bytes and retries as they come, on a terminal.
    let line = ProgressLine(shown: !json)
    let pulled: PulledBatch
    do {
      pulled = try await ledger.fetch(plan) { line.show($0) }
    } catch {
      line.finish()
      throw error
    }
    line.finish()
    let staged = pulled.batch
    let (message, author, key) = (message ?? pulled.summary, author, idempotencyKey ?? pulled.idempotencyKey)
    let source = pulled.sources.joined(separator: ", ")
    // What the next run asks with (If-None-Match, If-Modified-Since, since) is kept with the batch.
    let kept = pulled.localValues
    let summary = try await ReplicaRoute.write(ledger, "a pull") { ledger in
      try ledger.applySynchronously(
        staged, message: message, author: author, source: source, idempotencyKey: key, keeping: kept)
    }
    if json {
      var object = BatchSummary.jsonValue(of: [summary]).objectValue ?? [:]
      object["pages"] = .number(JSONNumber(pulled.pages))
      object["bytes"] = .number(JSONNumber(pulled.bytes))
      object["retries"] = .number(JSONNumber(pulled.retries))
      object["notModified"] = .number(JSONNumber(pulled.notModified))
      object["sources"] = .array(pulled.sources.map(JSONValue.string))
      Output.json(.object(object))
      return
    }
    Output.line(
      "read \(pulled.pages) page\(pulled.pages == 1 ? "" : "s") (\(pulled.bytes) bytes"
        + (pulled.notModified > 0 ? ", \(pulled.notModified) not modified" : "")
        + (pulled.retries > 0 ? ", \(pulled.retries) retried" : "") + ") from \(source)")
    if summary.wasAlreadyApplied {
      Output.line("already applied as batch \(summary.batchID)")
    } else if !summary.wroteRecord {
      Output.line(
        "nothing changed: \(Describe.counts(summary)); no batch written (the head is still \(summary.batchID))")
    } else {
      Output.line("batch \(summary.batchID): \(Describe.counts(summary))")
      for entity in summary.emptiedByPrune {
        Output.line("deleted all \(entity) objects: no page named any of them (--prune)")
      }
    }
    Import.reportKept(summary.placeholdersKept)
  }
}

/// `--every`: seconds, minutes or hours (`30s`, `10m`, `1h`; a number alone is seconds).
struct Interval: ExpressibleByArgument {
  let duration: Duration

  init?(argument: String) {
    let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600]
    var digits = Substring(argument)
    var unit: Int64 = 1
    if let last = argument.last, let seconds = units[last] {
      unit = seconds
      digits = digits.dropLast()
    }
    guard let count = Int64(digits), count > 0, count <= 366 * 86400 / unit else { return nil }
    duration = .seconds(count * unit)
  }
}
