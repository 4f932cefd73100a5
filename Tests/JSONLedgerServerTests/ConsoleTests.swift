import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JSONLedger
import JSONLedgerTestSupport
import Prometheus
import Testing

@testable import JSONLedgerServer

/// The audit console's pages on real data: a batch page in pages, what changed inside a JSON
/// value and a text, a number field's chart, and values that fit their cells.
@Suite("Audit console")
struct ConsoleTests {
  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model {
      Entity("Item", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("note", .string)
        Attribute("weight", .int64)
        Attribute("stats", .json)
      }
      Entity("Tag", identity: ["name"]) {
        Attribute("name", .string)
      }
    }
    return try Ledger.open(at: directory.storePath, model: model)
  }

  static func apply(_ ledger: Ledger, _ json: String, as entity: String) throws {
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(json.utf8), as: entity)
    _ = try ledger.applySynchronously(batch)
  }

  static func page(_ ledger: Ledger, _ uri: String) async throws -> (HTTPResponse.Status, String, HTTPFields) {
    let router = Router()
    LedgerRoutes(ledger: ledger, options: LedgerServerOptions(token: APITests.token)).addRoutes(to: router)
    return try await Application(router: router).test(.router) { client in
      try await client.execute(uri: uri, method: .get) { response in
        (response.status, String(buffer: response.body), response.headers)
      }
    }
  }

  @Test func aLargeBatchIsShownFiftyObjectsAPageAndFilteredByEntityAndKind() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let items = (1...120).map { #"{"id": \#($0), "weight": \#($0)}"# }.joined(separator: ",")
    var batch = ledger.makeBatch()
    try batch.stage(json: Array("[\(items)]".utf8), as: "Item")
    try batch.stage(json: Array(#"[{"name": "a"}, {"name": "b"}]"#.utf8), as: "Tag")
    _ = try ledger.applySynchronously(batch)
    let (_, first, _) = try await Self.page(ledger, "/batches/1")
    #expect(first.components(separatedBy: "<h4><span class=\"kind\">").count - 1 == 50)
    #expect(first.contains("page 1 of 3"))
    #expect(first.contains("href=\"/batches/1?entity=Item&amp;kind=created\">120</a>"), "\(first.prefix(3000))")
    let (_, last, _) = try await Self.page(ledger, "/batches/1?page=3")
    #expect(last.components(separatedBy: "<h4><span class=\"kind\">").count - 1 == 22)
    let (_, tags, _) = try await Self.page(ledger, "/batches/1?entity=Tag&kind=created")
    #expect(tags.components(separatedBy: "<h4><span class=\"kind\">").count - 1 == 2)
    #expect(tags.contains("Showing 2 changes to Tag, created."))
    let (status, _, _) = try await Self.page(ledger, "/batches/1?kind=renamed")
    #expect(status == .badRequest)
  }

  @Test func aChangeInsideAJSONValueIsShownAsThePathsThatChanged() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try Self.apply(
      ledger, #"[{"id": 1, "stats": [{"base_stat": 45}, {"base_stat": 49}, {"base_stat": 45, "effort": 0}]}]"#,
      as: "Item")
    try Self.apply(
      ledger, #"[{"id": 1, "stats": [{"base_stat": 45}, {"base_stat": 49}, {"base_stat": 50}, {"base_stat": 1}]}]"#,
      as: "Item")
    let (_, page, _) = try await Self.page(ledger, "/batches/2")
    #expect(page.contains("<code>[2].base_stat</code>: <span class=\"old\">45</span> → <span class=\"new\">50</span>"))
    #expect(page.contains("<code>[2].effort</code>: <span class=\"old\">0</span> → <span class=\"new\">absent</span>"))
    #expect(page.contains("<code>[3]</code>: <span class=\"old\">absent</span>"))
  }

  @Test func aTextChangeMarksTheWordsTakenOutAndPutIn() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try Self.apply(ledger, #"[{"id": 1, "note": "the <quick> brown fox"}]"#, as: "Item")
    try Self.apply(ledger, #"[{"id": 1, "note": "the <slow> brown fox jumps"}]"#, as: "Item")
    let (_, page, _) = try await Self.page(ledger, "/batches/2")
    #expect(page.contains("the <del>&lt;quick&gt; </del>brown fox"), "\(page)")
    #expect(page.contains("the <ins>&lt;slow&gt; </ins>brown fox <ins>jumps</ins>"), "\(page)")
  }

  @Test func aNumberFieldIsChartedAndAnAsOfReadMarksWhatChangedSince() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    for weight in [10, 30, 20] { try Self.apply(ledger, #"[{"id": 1, "weight": \#(weight)}]"#, as: "Item") }
    let (_, now, _) = try await Self.page(ledger, "/objects/Item/1")
    #expect(now.contains("aria-label=\"weight over 3 batches, from 10 to 20\""), "\(now)")
    #expect(now.components(separatedBy: "<circle").count - 1 == 3)
    let (_, asOf, _) = try await Self.page(ledger, "/objects/Item/1?asOf=1")
    #expect(asOf.contains("<span class=\"tag\">changed since</span>"))
  }

  @Test func aLongValueIsOneLineThatOpensAndThePageAllowsNoInlineCode() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let note = String(repeating: "word ", count: 40) + "\nsecond line"
    try Self.apply(ledger, #"[{"id": 1, "note": "\#(note.replacingOccurrences(of: "\n", with: "\\n"))"}]"#, as: "Item")
    let (_, page, headers) = try await Self.page(ledger, "/entities/Item")
    #expect(page.contains("<details class=\"value\"><summary>"))
    #expect(page.contains("second line</pre><button type=\"button\" data-copy>Copy</button>"))
    let policy = headers[.contentSecurityPolicy] ?? ""
    #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"), "\(policy)")
    #expect(!page.contains("style=\""))
  }

  @Test func pathChangesNameEveryPlaceThatDiffers() {
    let before: JSONValue = ["a": 1, "b": ["c": [1, 2]], "gone": true]
    let after: JSONValue = ["a": 1, "b": ["c": [1, 3, 4]], "new": nil]
    let changes = ConsoleValues.pathChanges(before, after, at: "")
    #expect(
      changes == [
        .init(path: "b.c[1]", old: 2, new: 3), .init(path: "b.c[2]", old: nil, new: 4),
        .init(path: "gone", old: true, new: nil), .init(path: "new", old: nil, new: .null),
      ])
    #expect(ConsoleValues.pathChanges(before, before, at: "").isEmpty)
  }

  @Test func theDiffPageShowsWhatChangedBetweenTwoPoints() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    for weight in [10, 30, 20] { try Self.apply(ledger, #"[{"id": 1, "weight": \#(weight)}]"#, as: "Item") }
    try Self.apply(ledger, #"[{"name": "a"}]"#, as: "Tag")
    let (_, page, _) = try await Self.page(ledger, "/diff?from=1&to=4")
    #expect(page.contains("From batch 1 to batch 4"))
    #expect(page.contains("<td class=\"old\">10</td><td class=\"new\">20</td>"), "\(page)")
    #expect(page.contains("href=\"/diff?from=1&amp;to=4&amp;entity=Tag&amp;kind=created\">1</a>"), "\(page)")
    let (status, _, _) = try await Self.page(ledger, "/diff?from=1&to=yesterday")
    #expect(status == .badRequest)
  }

  @Test func aReadOnlyServerShowsNoRevertAndAHugeValueKeepsThePageSmall() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try Self.apply(ledger, #"[{"id": 1, "note": "\#(String(repeating: "x", count: 3_000_000))"}]"#, as: "Item")
    let router = Router()
    LedgerRoutes(ledger: ledger, options: LedgerServerOptions(token: APITests.token, readOnly: true)).addRoutes(
      to: router)
    try await Application(router: router).test(.router) { client in
      try await client.execute(uri: "/batches/1", method: .get) { response in
        let page = String(buffer: response.body)
        #expect(!page.contains("data-revert"))
        #expect(page.utf8.count < 200_000, "\(page.utf8.count) bytes")
        #expect(page.contains("The first 2000 of 3000000 characters"))
      }
    }
  }

  /// A browser's report of what the policy blocked is counted on `/metrics` (a read-only
  /// server takes it too, without the token); a body that is not a report is refused.
  @Test func aContentSecurityPolicyReportIsCountedAndABodyThatIsNotOneIsRefused() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let router = Router()
    LedgerRoutes(
      ledger: ledger, options: LedgerServerOptions(token: APITests.token, readOnly: true),
      metrics: PrometheusCollectorRegistry()
    ).addRoutes(to: router)
    let report =
      #"{"csp-report": {"document-uri": "http://x/batches/1", "effective-directive": "script-src-elem", "#
      + #""blocked-uri": "inline\u202e\n"}}"#
    try await Application(router: router).test(.router) { client in
      let policy = try await client.execute(uri: "/", method: .get) { $0.headers[.contentSecurityPolicy] ?? "" }
      #expect(policy.contains("report-uri /csp-reports"), "\(policy)")
      for body in [report, #"[{"type": "csp-violation", "body": {"effectiveDirective": "img-src"}}]"#] {
        try await client.execute(
          uri: "/csp-reports", method: .post, headers: [.contentType: "application/csp-report"],
          body: ByteBuffer(string: body)
        ) { response in #expect(response.status == .noContent) }
      }
      for (body, status) in [
        ("not json", HTTPResponse.Status.badRequest), (#"{"other": 1}"#, .badRequest),
        (String(repeating: " ", count: 20_000) + report, .contentTooLarge),
      ] {
        try await client.execute(uri: "/csp-reports", method: .post, body: ByteBuffer(string: body)) { response in
          #expect(response.status == status, "\(body.prefix(20))")
        }
      }
      let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
      #expect(metrics.contains("jsonledger_csp_reports_total 2"), "\(metrics)")
    }
    #expect(LedgerRoutes.printable("a\u{202E}b\nc") == "a\\u{202e}b\\u{a}c")
  }

  /// The API's diff takes a batch or a time, as `asOf` does and the console's diff page, and
  /// reads them as the command line does (`BatchReference`).
  @Test func theAPIsDiffTakesATimeAsWellAsABatch() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try Self.apply(ledger, #"[{"id": 1, "weight": 10}]"#, as: "Item")
    try Self.apply(ledger, #"[{"id": 1, "weight": 20}]"#, as: "Item")
    let (status, body, _) = try await Self.page(ledger, "/v1/diff?from=0&to=2099-01-01T00:00:00Z")
    #expect(status == .ok)
    #expect(body.contains(#""to":2"#), "\(body)")
    // A time before every batch is the empty store, as `jsonledger diff` reads it.
    let (early, earlyBody, _) = try await Self.page(ledger, "/v1/diff?from=1999-01-01&to=2")
    #expect(early == .ok)
    #expect(earlyBody.contains(#""from":0"#), "\(earlyBody)")
    let (bad, badBody, _) = try await Self.page(ledger, "/v1/diff?from=soon&to=2")
    #expect(bad == .badRequest)
    #expect(badBody.contains("from must be a batch id or an ISO 8601 time"), "\(badBody)")
    // An as-of read has no empty store to fall back on.
    let (none, _, _) = try await Self.page(ledger, "/v1/entities/Item/objects?asOf=1999-01-01")
    #expect(none == .notFound)
  }
}
