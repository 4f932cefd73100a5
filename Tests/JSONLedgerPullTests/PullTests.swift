import Foundation
import JSONLedger
import JSONLedgerPull
import JSONLedgerTestSupport
import Testing

/// `Ledger.pull` against a real HTTP server of the tests' own (`TestAPI`) over real stores.
@Suite("Pulling a live HTTP API")
struct PullTests {
  static let model = """
    {"entities": {
      "Issue": {"identity": "number", "attributes": {"number": "int64", "title": "string", "state": "string"}}
    }}
    """

  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    try Ledger.open(at: directory.storePath, model: try Model(json: try JSONParser.parse(model)))
  }

  static func issues(_ numbers: ClosedRange<Int>, title: String = "t") -> String {
    "[" + numbers.map { #"{"number": \#($0), "title": "\#(title) \#($0)", "state": "open"}"# }.joined(separator: ",")
      + "]"
  }

  /// A plan that gives up at once: a test of failures does not wait out retries. Its time is
  /// long: in a loaded test run a task may wait minutes for a thread.
  static func plan(_ url: String, itemsAt: String? = nil, nextAt: String? = nil, prune: Bool = false, attempts: Int = 1)
    -> PullPlan
  {
    var plan = PullPlan(sources: [PullSource(url: url, entity: "Issue", itemsAt: itemsAt, nextAt: nextAt, prune: prune)]
    )
    plan.retries = RetryPolicy(attempts: attempts, firstWait: .milliseconds(50), longestWait: .seconds(5))
    plan.timeout = .seconds(600)
    return plan
  }

  @Test func linkHeaderPagesAreOneBatchAndARunThatFindsNothingNewWritesNothing() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      api.set(
        "/issues?page=1", json: Self.issues(1...3),
        headers: ["Link": #"<\#(base)/issues?page=2>; rel="next", <\#(base)/issues?page=3>; rel="last""#])
      api.set("/issues?page=2", json: Self.issues(4...6), headers: ["Link": #"</issues?page=3>; rel="next""#])
      api.set("/issues?page=3", json: Self.issues(7...7))
      let first = try await ledger.pull(Self.plan(base + "/issues?page=1"))
      #expect(first.pages == 3)
      #expect(first.batch.batchID == 1 && first.batch.created == 7)
      #expect(try ledger.head == 1)
      let again = try await ledger.pull(Self.plan(base + "/issues?page=1"))
      #expect(!again.batch.wroteRecord)
      #expect(try ledger.head == 1)
      api.set(
        "/issues?page=2", json: Self.issues(4...6, title: "changed"),
        headers: ["Link": #"</issues?page=3>; rel="next""#])
      let changed = try await ledger.pull(Self.plan(base + "/issues?page=1"))
      #expect(changed.batch.batchID == 2 && changed.batch.updated == 3 && changed.batch.created == 0)
      let entry = try #require(try await ledger.log(limit: 1).first)
      #expect(entry.metadata.source == base + "/issues?page=1")
      #expect(entry.metadata.message?.hasPrefix("pull: 3 pages") == true)
    }
  }

  /// A plan's sources are known before the run: their first pages are asked for ahead, a few
  /// at a time, while earlier pages are staged; the batch holds them in the plan's order.
  @Test func aPlansSourcesAreAskedForAheadAFewAtATimeAndStagedInOrder() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      for source in 0..<10 {
        api.set(
          "/part-\(source)",
          TestAPI.Answer(body: Self.issues(1...2, title: "part \(source)"), wait: .milliseconds(150)))
      }
      var plan = Self.plan(base + "/part-0")
      plan.sources = (0..<10).map { PullSource(url: base + "/part-\($0)", entity: "Issue") }
      let pulled = try await ledger.pull(plan)
      #expect(pulled.pages == 10)
      #expect(api.requests.count == 10)
      #expect(api.mostAtOnce >= 2)
      #expect(api.mostAtOnce <= 5, "4 pages ahead and the one waited for")
      // The last source staged wins where they name the same issues.
      let title = try await ledger.read { view in try view.object("Issue", key: 1)?["title"] }
      #expect(title == .string("part 9 1"))
    }
  }

  @Test func anEnvelopesNextIsFollowedAndAPruneSpansEveryPage() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(Self.issues(1...9).utf8), as: "Issue")
    _ = try ledger.applySynchronously(batch)
    let api = TestAPI()
    try await api.serve { base in
      api.set(
        "/api/issues/",
        json: #"{"count": 4, "next": "\#(base)/api/issues/?offset=2", "results": \#(Self.issues(1...2))}"#)
      api.set("/api/issues/?offset=2", json: #"{"count": 4, "next": null, "results": \#(Self.issues(3...4))}"#)
      let pulled = try await ledger.pull(
        Self.plan(base + "/api/issues/", itemsAt: "results", nextAt: "next", prune: true))
      #expect(pulled.pages == 2)
      #expect(pulled.batch.deleted == 5)
      let count = try await ledger.read { view in try view.count("Issue") }
      #expect(count == 4)
    }
  }

  @Test func aTooManyRequestsAndAPassingFailureAreTriedAgain() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      api.set(
        "/issues",
        TestAPI.Answer(status: .tooManyRequests, headers: ["Retry-After": "1"], body: "{}"),
        TestAPI.Answer(status: .serviceUnavailable, body: "{}"),
        TestAPI.Answer(body: Self.issues(1...2)))
      let started = ContinuousClock.now
      let pulled = try await ledger.pull(Self.plan(base + "/issues", attempts: 3))
      #expect(pulled.retries == 2)
      #expect(pulled.batch.created == 2)
      #expect(ContinuousClock.now - started >= .seconds(1))
    }
  }

  @Test func aConnectionCutInThePageThreeOfFiveAppliesNothingAndTheRerunAppliesAllOnce() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      for page in 1...5 {
        let link = page < 5 ? ["Link": #"<\#(base)/issues?page=\#(page + 1)>; rel="next""#] : [:]
        api.set("/issues?page=\(page)", json: Self.issues(page * 10...page * 10 + 1), headers: link)
      }
      var cut = TestAPI.Answer(headers: ["Link": #"<\#(base)/issues?page=4>; rel="next""#], body: Self.issues(30...31))
      cut.cut = true
      api.set("/issues?page=3", cut, TestAPI.Answer(headers: cut.headers, body: cut.body))
      await #expect(throws: PullError.self) { try await ledger.pull(Self.plan(base + "/issues?page=1")) }
      #expect(try ledger.head == 0)
      let rerun = try await ledger.pull(Self.plan(base + "/issues?page=1"))
      #expect(rerun.pages == 5 && rerun.batch.created == 10)
      #expect(try ledger.head == 1)
    }
  }

  @Test func pagesThatLoopOrAreNotJSONOrAnswerAnErrorFailNamingTheURLWithoutItsSecrets() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      api.set("/a", json: #"{"next": "\#(base)/b", "results": []}"#)
      api.set("/b", json: #"{"next": "/a", "results": []}"#)
      let loop = await #expect(throws: PullError.self) {
        try await ledger.pull(Self.plan(base + "/a", itemsAt: "results", nextAt: "next"))
      }
      #expect(loop?.code == .pageLoop)
      #expect(loop?.message.contains("\(base)/a") == true, "\(loop?.message ?? "")")

      api.set("/html", TestAPI.Answer(body: "<html>\n<body>maintenance</body></html>"))
      let html = await #expect(throws: LedgerError.self) { try await ledger.pull(Self.plan(base + "/html")) }
      #expect(html?.code == .invalidJSON)
      #expect(html?.description.contains("\(base)/html") == true, "\(html?.description ?? "")")
      #expect(html?.description.contains("line 1") == true, "\(html?.description ?? "")")

      let missing = await #expect(throws: PullError.self) {
        try await ledger.pull(Self.plan(base + "/gone?api_key=s3cr3t&page=2"))
      }
      #expect(missing?.code == .httpStatus && missing?.status == 404)
      #expect(missing?.message.contains("api_key=REDACTED&page=2") == true, "\(missing?.message ?? "")")
      #expect(missing?.message.contains("s3cr3t") == false)

      api.set("/slow", TestAPI.Answer(body: "[]", wait: .seconds(3)))
      var slow = Self.plan(base + "/slow")
      slow.timeout = .seconds(1)
      let late = await #expect(throws: PullError.self) { try await ledger.pull(slow) }
      #expect(late?.code == .timedOut, "\(String(describing: late))")

      var bounded = Self.plan(base + "/issues?page=1")
      api.set("/issues?page=1", json: "[]", headers: ["Link": #"</issues?page=2>; rel="next""#])
      api.set("/issues?page=2", json: "[]", headers: ["Link": #"</issues?page=3>; rel="next""#])
      bounded.maxPages = 2
      let long = await #expect(throws: PullError.self) { try await ledger.pull(bounded) }
      #expect(long?.code == .tooManyPages)
    }
    #expect(try ledger.head == 0)
  }

  /// Regression: a server that does not speak TLS, asked over https, was tried five times
  /// over a minute (the client's pool kept each try waiting for its connect timeout) and
  /// said as "cannot reach" with BoringSSL's error text. A TLS failure is said at once.
  @Test func aTLSFailureIsSaidAtOnceAndNotTriedAgain() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      api.set("/issues", json: Self.issues(1...2))
      // Three tries allowed: a TLS failure takes one, and is said without a count of tries. A
      // machine loaded past the client's 10-second connect timeout (a full suite on two cores
      // once was) gets a second try, as any lost connection does.
      let failure = await #expect(throws: PullError.self) {
        try await ledger.pull(
          Self.plan(base.replacingOccurrences(of: "http://", with: "https://") + "/issues", attempts: 3))
      }
      #expect(failure?.code == .tls, "\(String(describing: failure))")
      #expect(failure?.message.contains("does not answer in TLS") == true, "\(failure?.message ?? "")")
      // One try: a failure after several says how many ("(5 tries)").
      #expect(failure?.message.contains("tries") == false, "\(failure?.message ?? "")")
      #expect(api.requests.isEmpty)
    }
    #expect(try ledger.head == 0)
  }

  @Test func aRedirectIsFollowed() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      api.set("/old", TestAPI.Answer(status: .movedPermanently, headers: ["Location": "\(base)/new"], body: ""))
      api.set("/new", json: Self.issues(1...2))
      let pulled = try await ledger.pull(Self.plan(base + "/old"))
      #expect(pulled.batch.created == 2)
    }
  }

  @Test(arguments: [
    (#"{"sources": [{"url": "http://x", "entity": "Issue", "prunes": true}]}"#, "sources[0].prunes is not a key"),
    (#"{"sources": []}"#, "sources must be a list of sources"),
    (#"[{"url": "http://x"}]"#, "[0] needs entity"),
    (
      #"{"sources": [{"url": "http://x", "entity": "Issue", "prune": "yes"}]}"#,
      "sources[0].prune must be true or false"
    ),
    ("{", "pull.json:"),
  ])
  func aPlanFileThatCannotBeRunIsNamedAtItsPlace(text: String, message: String) throws {
    let error = #expect(throws: PullError.self) { try PullPlan(json: Array(text.utf8), source: "pull.json") }
    #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
  }

  @Test func headersAndURLsThatCannotBeSentAreRefused() async throws {
    #expect(throws: PullError.self) { try PullHeader(parsing: "Authorization Bearer x") }
    #expect(throws: PullError.self) { try PullHeader(parsing: "X-A: b\r\nX-Evil: c") }
    #expect(
      try PullHeader(parsing: "Authorization:  Bearer x ") == PullHeader(name: "Authorization", value: "Bearer x"))
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    for url in ["ftp://example.com/x", "not a url", "http:///path"] {
      let error = await #expect(throws: PullError.self) { try await ledger.pull(Self.plan(url)) }
      #expect(error?.code == .invalidURL, "\(url)")
    }
    let unknown = await #expect(throws: LedgerError.self) {
      try await ledger.pull(PullPlan(sources: [PullSource(url: "http://127.0.0.1:1/x", entity: "Nope")]))
    }
    #expect(unknown?.code == .unknownEntity)
    let unreachable = await #expect(throws: PullError.self) {
      var plan = Self.plan("http://127.0.0.1:1/issues", attempts: 2)
      plan.timeout = .seconds(4)
      return try await ledger.pull(plan)
    }
    // In a loaded test run the client's own deadline may come first: then it says so.
    #expect([.unreachable, .timedOut].contains(unreachable?.code), "\(String(describing: unreachable))")
    #expect(unreachable?.message.contains("http://127.0.0.1:1/issues") == true)
    #expect(try ledger.head == 0)
  }

  @Test func pageNumbersOffsetsAndCursorsAreFollowedToTheirEnd() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      // Page numbers with a size: the short third page is the last.
      api.set("/issues?state=all&page=1&per_page=2", json: Self.issues(1...2))
      api.set("/issues?state=all&page=2&per_page=2", json: Self.issues(3...4))
      api.set("/issues?state=all&page=3&per_page=2", json: Self.issues(5...5))
      var numbers = Self.plan(base + "/issues?state=all&page=9")
      numbers.sources[0].paging = .pageNumber(parameter: "page", size: .init(parameter: "per_page", size: 2))
      #expect(try await ledger.pull(numbers).pages == 3)

      // Offsets with a total: the second page reaches it, so no third is asked for.
      api.set("/items?offset=0&limit=2", json: #"{"count": 4, "results": \#(Self.issues(6...7))}"#)
      api.set("/items?offset=2&limit=2", json: #"{"count": 4, "results": \#(Self.issues(8...9))}"#)
      var offsets = Self.plan(base + "/items", itemsAt: "results")
      offsets.sources[0].paging = .offset(parameter: "offset", size: .init(parameter: "limit", size: 2))
      offsets.sources[0].totalAt = "count"
      #expect(try await ledger.pull(offsets).pages == 2)
      #expect(!api.requests.contains { $0.path.contains("offset=4") })

      // A cursor in the body, then one in a header.
      api.set("/feed", json: #"{"data": \#(Self.issues(10...10)), "meta": {"next_cursor": "c2"}}"#)
      api.set("/feed?cursor=c2", json: #"{"data": \#(Self.issues(11...11)), "meta": {"next_cursor": null}}"#)
      var cursor = Self.plan(base + "/feed", itemsAt: "data")
      cursor.sources[0].paging = .cursor(parameter: "cursor", from: .body("meta.next_cursor"))
      #expect(try await ledger.pull(cursor).pages == 2)
      api.set("/events", json: Self.issues(12...12), headers: ["X-Next-Cursor": "e2"])
      api.set("/events?after=e2", json: Self.issues(13...13))
      var header = Self.plan(base + "/events")
      header.sources[0].paging = .cursor(parameter: "after", from: .header("X-Next-Cursor"))
      #expect(try await ledger.pull(header).pages == 2)
      let count = try await ledger.read { view in try view.count("Issue") }
      #expect(count == 13)
    }
  }

  @Test(arguments: [
    (#"[{"url": "http://x", "entity": "Issue", "pageParam": "page", "limit": 5}]"#, "not a limit or a cursor"),
    (#"[{"url": "http://x", "entity": "Issue", "offsetParam": "offset"}]"#, "offsets need a limit"),
    (#"[{"url": "http://x", "entity": "Issue", "cursorParam": "c"}]"#, "one of the two"),
    (#"[{"url": "http://x", "entity": "Issue", "perPage": 5}]"#, "needs its parameter"),
    (#"[{"url": "http://x", "entity": "Issue", "pageParam": "p", "offsetParam": "o", "limit": 1}]"#, "one way"),
  ])
  func pagingThatCannotBeFollowedIsRefused(text: String, message: String) throws {
    let error = #expect(throws: PullError.self) { try PullPlan(json: Array(text.utf8), source: "pull.json") }
    #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
  }

  /// A page that came with an ETag is asked for with `If-None-Match` the next run: a run of
  /// 304s writes nothing, a prune still counts the unchanged pages' objects, and a changed page
  /// is applied with only its changes.
  @Test func pagesWithAnETagAreAskedWhetherTheyChanged() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      api.set(
        "/issues?page=1", json: Self.issues(1...2),
        headers: ["ETag": #""p1-a""#, "Link": #"</issues?page=2>; rel="next""#])
      api.set("/issues?page=2", json: Self.issues(3...4), headers: ["ETag": #""p2-a""#])
      let plan = Self.plan(base + "/issues?page=1", prune: true)
      let first = try await ledger.pull(plan)
      #expect(first.pages == 2 && first.notModified == 0 && first.batch.created == 4)
      let second = try await ledger.pull(plan)
      #expect(second.pages == 2 && second.notModified == 2)
      #expect(!second.batch.wroteRecord && second.batch.deleted == 0)
      #expect(api.requests.suffix(2).allSatisfy { $0.headers["if-none-match"] != nil })
      // Page 2 changes (one issue gone, one new): page 1 is a 304, its issues are kept.
      api.set("/issues?page=2", json: Self.issues(4...5), headers: ["ETag": #""p2-b""#])
      let third = try await ledger.pull(plan)
      #expect(third.notModified == 1)
      #expect(third.batch.created == 1 && third.batch.deleted == 1 && third.batch.updated == 0)
      // The record says how each page came: its status, its validator and its bytes.
      let run = try await ledger.record(third.batch.batchID).metadata.run?["pull"]
      let pages = run?["pages"]?.arrayValue ?? []
      #expect(pages.map { $0["status"] } == [304, 200])
      #expect(pages.map { $0["etag"] } == [#""p1-a""#, #""p2-b""#])
      #expect(pages[0]["bytes"] == 0 && pages[1]["bytes"] != 0)
      #expect(pages[1]["url"]?.stringValue?.hasSuffix("/issues?page=2") == true)
      if case .number? = run?["durationMs"] {} else { Issue.record("no duration in \(String(describing: run))") }
      let count = try await ledger.read { view in try view.count("Issue") }
      #expect(count == 4)
    }
  }

  /// An incremental source sends the largest `updated_at` it saw to the next run, which reads
  /// only what changed since and keeps what it does not hold; with a prune it is refused.
  @Test func anIncrementalRunAsksForWhatChangedSinceTheLast() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let api = TestAPI()
    try await api.serve { base in
      func issue(_ number: Int, _ title: String, _ time: String) -> String {
        #"{"number": \#(number), "title": "\#(title)", "state": "open", "updated_at": "\#(time)"}"#
      }
      api.set(
        "/issues",
        json: "["
          + [issue(1, "a", "2026-12-01T10:00:00Z"), issue(2, "b", "2026-12-03T09:00:00Z")].joined(separator: ",") + "]")
      api.set("/issues?since=2026-12-03T09:00:00Z", json: "[" + issue(2, "b2", "2026-12-04T08:00:00Z") + "]")
      var plan = Self.plan(base + "/issues")
      plan.sources[0].since = PullSource.Since(field: "updated_at", parameter: "since")
      #expect(try await ledger.pull(plan).batch.created == 2)
      let second = try await ledger.pull(plan)
      #expect(second.batch.updated == 1 && second.batch.deleted == 0)
      #expect(api.requests.last?.path == "/issues?since=2026-12-03T09:00:00Z")
      let count = try await ledger.read { view in try view.count("Issue") }
      #expect(count == 2)
      // The third run asks from the second's largest value.
      api.set("/issues?since=2026-12-04T08:00:00Z", json: "[]")
      _ = try await ledger.pull(plan)
      #expect(api.requests.last?.path == "/issues?since=2026-12-04T08:00:00Z")

      plan.sources[0].prune = true
      let refused = await #expect(throws: PullError.self) { try await ledger.pull(plan) }
      #expect(refused?.message.contains("a prune would delete the rest") == true)
    }
  }
}
