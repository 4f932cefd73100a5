import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JSONLedger
import JSONLedgerServer
import JSONLedgerTestSupport
import Prometheus
import Testing

/// The HTTP API through Hummingbird's testing client, over a real store.
@Suite("HTTP API")
struct APITests {
  static let token = "a-token-of-thirty-two-characters"

  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("label", .string)
        Attribute("formed", .int64)
        Relationship("albums", to: "Album", many: true, inverse: "band")
      }
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("band", to: "Band", inverse: "albums")
      }
    }
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(
      [
        ["name": "Japan", "label": "Hansa", "formed": 1974, "albums": ["Quiet Life"]],
        ["name": "Can", "label": "Spoon", "formed": 1968],
        ["name": "Faust", "label": "Polydor", "formed": 1971],
      ], as: "Band")
    _ = try ledger.applySynchronously(batch, message: "first", author: "ops")
    return ledger
  }

  static func application(_ ledger: Ledger, _ options: LedgerServerOptions = LedgerServerOptions(token: token))
    -> some ApplicationProtocol
  {
    let router = Router()
    LedgerRoutes(ledger: ledger, options: options).addRoutes(to: router)
    return Application(router: router)
  }

  /// The body as JSON (null when it is not JSON, which the expectations then fail on).
  static func json(_ response: TestResponse) -> JSONValue {
    (try? JSONParser.parse(Array(buffer: response.body))) ?? .null
  }

  static let authorized: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]

  static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

  @Test func readsAnswerEntitiesPagesObjectsAndTheLogAsJSON() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try await Self.application(ledger).test(.router) { client in
      try await client.execute(uri: "/healthz", method: .get) { response in
        #expect(response.status == .ok)
        #expect(Self.json(response)["head"] == 1)
      }
      try await client.execute(uri: "/v1/entities", method: .get) { response in
        #expect(Self.json(response) == [["name": "Band", "count": 3], ["name": "Album", "count": 1]])
      }
      var names: [JSONValue] = []
      var uri = "/v1/entities/Band/objects?sort=-formed&limit=2"
      while true {
        let page = try await client.execute(uri: uri, method: .get) { Self.json($0) }
        names += page["objects"]?.arrayValue?.compactMap { $0["name"] } ?? []
        guard let next = page["next"]?.stringValue else { break }
        uri = "/v1/entities/Band/objects?sort=-formed&limit=2&after=\(next)"
      }
      #expect(names == ["Japan", "Faust", "Can"])
      try await client.execute(uri: "/v1/entities/Band/objects?where=label%3DSpoon", method: .get) { response in
        #expect(Self.json(response)["objects"]?.arrayValue?.count == 1)
      }
      try await client.execute(uri: "/v1/entities/Band/objects/Japan", method: .get) { response in
        #expect(Self.json(response)["albums"] == ["Quiet Life"])
      }
      try await client.execute(uri: "/v1/entities/Album/objects/Quiet%20Life/history", method: .get) { response in
        #expect(Self.json(response).arrayValue?.first?["change"]?["kind"] == "created")
      }
      try await client.execute(uri: "/v1/entities/Band/objects/Japan/blame", method: .get) { response in
        let fields = Self.json(response).arrayValue?.compactMap { $0["field"]?.stringValue }
        #expect(fields == ["albums", "formed", "label", "name"])
      }
      try await client.execute(uri: "/v1/log", method: .get) { response in
        #expect(Self.json(response)["batches"]?.arrayValue?.first?["author"] == "ops")
      }
      try await client.execute(uri: "/v1/batches/1", method: .get) { response in
        #expect(Self.json(response)["changes"]?.arrayValue?.count == 4)
      }
      try await client.execute(uri: "/openapi.json", method: .get) { response in
        #expect(Self.json(response)["openapi"] != nil)
      }
    }
  }

  @Test func badReadsAreClientErrorsWithACodeAndNoServerPath() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try await Self.application(ledger).test(.router) { client in
      let cases: [(String, HTTPResponse.Status, String)] = [
        ("/v1/entities/Nope/objects", .notFound, "unknownEntity"),
        ("/v1/entities/Band/objects/Nobody", .notFound, "objectNotFound"),
        ("/v1/entities/Band/objects?limit=1000000", .badRequest, "badRequest"),
        ("/v1/entities/Band/objects?limit=-1", .badRequest, "badRequest"),
        ("/v1/entities/Band/objects?after=forged", .badRequest, "invalidQuery"),
        ("/v1/entities/Band/objects?where=nothing%3D1", .badRequest, "invalidQuery"),
        ("/v1/entities/Band/objects?sort=nothing", .badRequest, "invalidQuery"),
        ("/v1/batches/99", .notFound, "batchNotFound"),
        ("/v1/batches/x", .badRequest, "badRequest"),
        ("/v1/batches/18446744073709551615", .notFound, "batchNotFound"),
        ("/v1/batches/18446744073709551616", .badRequest, "badRequest"),
        ("/v1/entities/Band/objects/Japan?asOf=18446744073709551615", .notFound, "batchNotFound"),
        ("/v1/entities/Band/objects/Japan?asOf=yesterday", .badRequest, "badRequest"),
        ("/v1/entities/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd/objects", .notFound, "unknownEntity"),
      ]
      for (uri, status, code) in cases {
        try await client.execute(uri: uri, method: .get) { response in
          #expect(response.status == status, "\(uri)")
          let body = Self.json(response)
          #expect(body["code"]?.stringValue == code, "\(uri): \(body)")
          #expect(body["path"] == nil)
          #expect(!String(buffer: response.body).contains(directory.path))
        }
      }
      // The feed's resume point is named as the request gave it: the query's `after`, or the
      // `Last-Event-ID` header (which wins when both are sent).
      let resumes: [(String, HTTPFields, String)] = [
        ("/v1/changes?after=-1", [:], #"after must be a batch id, not "-1""#),
        ("/v1/changes?after=abc", [:], #"after must be a batch id, not "abc""#),
        ("/v1/changes", [HTTPField.Name("Last-Event-ID")!: "junk"], #"Last-Event-ID must be a batch id, not "junk""#),
        ("/v1/changes?after=1", [HTTPField.Name("Last-Event-ID")!: "x"], #"Last-Event-ID must be a batch id, not "x""#),
        ("/v1/changes?after=9", [:], "batch 9 is past the head (1)"),
      ]
      for (uri, headers, message) in resumes {
        try await client.execute(uri: uri, method: .get, headers: headers) { response in
          #expect(response.status == .badRequest, "\(uri)")
          #expect(Self.json(response)["message"]?.stringValue == message, "\(uri)")
        }
      }
      // A missing object: the key as the path gave it, quoted in the message.
      try await client.execute(uri: "/v1/entities/Band/objects/Nobody?asOf=1", method: .get) { response in
        let body = Self.json(response)
        #expect(body["key"] == "Nobody")
        #expect(body["batch"] == 1)
        #expect(body["message"] == #"no Band with key "Nobody" as of batch 1"#)
      }
    }
  }

  /// A request under `/v1/` that no route takes is answered as JSON: 405 with `Allow` when
  /// its path has routes of other methods, else 404. With metrics (the routes in a group) too.
  /// Other paths are the router's to answer.
  @Test(arguments: [false, true])
  func aRequestNoRouteTakesIsAnsweredAsJSONWithTheMethodsItsPathTakes(withMetrics: Bool) async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let router = Router()
    LedgerRoutes(ledger: ledger, metrics: withMetrics ? PrometheusCollectorRegistry() : nil).addRoutes(to: router)
    try await Application(router: router).test(.router) { client in
      let cases: [(String, HTTPRequest.Method, HTTPResponse.Status, String, String?)] = [
        ("/v1/nope", .get, .notFound, "routeNotFound", nil),
        ("/v1/entities/Band/objects/Japan/nope", .get, .notFound, "routeNotFound", nil),
        ("/v1/batches", .get, .methodNotAllowed, "methodNotAllowed", "POST"),
        ("/v1/log", .delete, .methodNotAllowed, "methodNotAllowed", "GET"),
        ("/v1/entities/Band/objects/Japan", .put, .methodNotAllowed, "methodNotAllowed", "GET"),
        ("/v1/batches/1", .post, .methodNotAllowed, "methodNotAllowed", "GET"),
      ]
      for (uri, method, status, code, allow) in cases {
        try await client.execute(uri: uri, method: method) { response in
          #expect(response.status == status, "\(method) \(uri)")
          #expect(Self.json(response)["code"]?.stringValue == code, "\(method) \(uri)")
          #expect(response.headers[.allow] == allow, "\(method) \(uri)")
        }
      }
      try await client.execute(uri: "/v1/batches/1", method: .get) { response in #expect(response.status == .ok) }
      try await client.execute(uri: "/nope", method: .get) { response in
        #expect(response.status == .notFound)
        #expect(response.body.readableBytes == 0)
      }
    }
  }

  @Test func aPostedBatchIsAppliedOnceAndItsProblemsAreAnsweredByJSONPath() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    try await Self.application(ledger).test(.router) { client in
      var headers = Self.authorized
      headers[HTTPField.Name("Idempotency-Key")!] = "sync-1"
      let document = Self.body(#"{"bands": [{"name": "Neu!", "label": "Brain"}]}"#)
      try await client.execute(uri: "/v1/batches?author=api", method: .post, headers: headers, body: document) {
        response in
        #expect(response.status == .created)
        #expect(Self.json(response)["batch"] == 2)
      }
      try await client.execute(uri: "/v1/batches", method: .post, headers: headers, body: document) { response in
        #expect(response.status == .ok)
        #expect(Self.json(response)["alreadyApplied"] == true)
      }
      var stale = Self.authorized
      stale[HTTPField.Name("Expected-Head")!] = "1"
      try await client.execute(
        uri: "/v1/batches?entity=Band", method: .post, headers: stale, body: Self.body(#"[{"name": "Cluster"}]"#)
      ) { response in
        #expect(response.status == .conflict)
        #expect(Self.json(response)["code"] == "headMoved")
        #expect(Self.json(response)["head"] == 2)
      }
      try await client.execute(
        uri: "/v1/batches?entity=Band", method: .post, headers: Self.authorized,
        body: Self.body(#"[{"name": "A", "formed": "soon"}, {"formed": 1}]"#)
      ) { response in
        #expect(response.status == .unprocessableContent)
        let problems = Self.json(response)["problems"]?.arrayValue?.compactMap { $0["path"]?.stringValue }
        #expect(problems == ["[0].formed", "[1]"])
      }
      try await client.execute(
        uri: "/v1/batches", method: .post, headers: Self.authorized, body: Self.body("{\"bands\": [")
      ) { response in
        #expect(response.status == .badRequest)
        #expect(Self.json(response)["code"] == "invalidJSON")
        #expect(Self.json(response)["line"] == 1)
      }
      try await client.execute(uri: "/v1/rewind?to=18446744073709551615", method: .post, headers: Self.authorized) {
        response in
        #expect(response.status == .notFound)
        #expect(Self.json(response)["batch"] == .number(JSONNumber(UInt64.max)))
      }
      var emptyKey = Self.authorized
      emptyKey[HTTPField.Name("Idempotency-Key")!] = ""
      try await client.execute(uri: "/v1/batches", method: .post, headers: emptyKey, body: document) { response in
        #expect(response.status == .badRequest)
        #expect(Self.json(response)["code"] == "invalidArgument")
      }
      try await client.execute(
        uri: "/v1/batches", method: .post, headers: Self.authorized, body: Self.body(#"{"nothing": []}"#)
      ) { response in
        #expect(response.status == .unprocessableContent)
        #expect(Self.json(response)["code"] == "unknownCollection")
      }
    }
    #expect(try ledger.head == 2)
  }

  @Test func writesNeedTheTokenAndAReadOnlyServerRefusesThem() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let document = Self.body(#"{"bands": [{"name": "Neu!"}]}"#)
    try await Self.application(ledger).test(.router) { client in
      for headers: HTTPFields in [
        [:], [.authorization: "Bearer wrong"], [.authorization: "Bearer \(Self.token)x"],
        [.authorization: Self.token],
      ] {
        try await client.execute(uri: "/v1/batches", method: .post, headers: headers, body: document) { response in
          #expect(response.status == .unauthorized)
          #expect(response.headers[.wwwAuthenticate] == "Bearer")
        }
      }
      try await client.execute(uri: "/v1/entities", method: .get) { #expect($0.status == .ok) }
    }
    var readOnly = LedgerServerOptions(token: Self.token, readOnly: true)
    try await Self.application(ledger, readOnly).test(.router) { client in
      try await client.execute(uri: "/v1/batches", method: .post, headers: Self.authorized, body: document) {
        #expect($0.status == .methodNotAllowed)
      }
      try await client.execute(uri: "/v1/batches/1/revert", method: .post, headers: Self.authorized) {
        #expect($0.status == .methodNotAllowed)
      }
    }
    readOnly.tokenForReads = true
    try await Self.application(ledger, readOnly).test(.router) { client in
      try await client.execute(uri: "/v1/entities", method: .get) { #expect($0.status == .unauthorized) }
      try await client.execute(uri: "/", method: .get) { #expect($0.status == .unauthorized) }
      try await client.execute(uri: "/v1/entities", method: .get, headers: Self.authorized) {
        #expect($0.status == .ok)
      }
      try await client.execute(uri: "/", method: .get, headers: [.cookie: "jsonledger_token=\(Self.token)"]) {
        #expect($0.status == .ok)
      }
    }
    #expect(try ledger.head == 1)
  }

  @Test func anOversizedBodyIsRefusedBeforeItIsRead() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var options = LedgerServerOptions(token: Self.token)
    options.maxBodyBytes = 1024
    let big = Self.body(#"{"bands": [{"name": ""# + String(repeating: "x", count: 4096) + #""}]}"#)
    try await Self.application(ledger, options).test(.router) { client in
      try await client.execute(uri: "/v1/batches", method: .post, headers: Self.authorized, body: big) { response in
        #expect(response.status == .contentTooLarge)
        #expect(Self.json(response)["code"] == "bodyTooLarge")
      }
    }
    #expect(try ledger.head == 1)
  }

  @Test func aRevertShowsItsConflictsAsDataAndForceOverridesThem() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    for label in ["Virgin", "EMI"] {
      var batch = ledger.makeBatch()
      try batch.stage([["name": "Japan", "label": .string(label)]], as: "Band")
      _ = try ledger.applySynchronously(batch)
    }
    try await Self.application(ledger).test(.router) { client in
      try await client.execute(uri: "/v1/batches/2/revert-plan", method: .get) { response in
        let plan = Self.json(response)
        #expect(plan["refused"] == true)
        #expect(plan["conflicts"]?.arrayValue?.first?["field"] == "label")
      }
      try await client.execute(uri: "/v1/batches/2/revert", method: .post, headers: Self.authorized) { response in
        #expect(response.status == .conflict)
        let body = Self.json(response)
        #expect(body["code"] == "revertConflicts")
        #expect(body["conflicts"]?.arrayValue?.first?["now"] == "EMI")
      }
      try await client.execute(uri: "/v1/batches/2/revert?mode=force", method: .post, headers: Self.authorized) {
        response in
        #expect(response.status == .created)
        #expect(Self.json(response)["overridden"]?.arrayValue?.count == 1)
      }
      try await client.execute(uri: "/v1/batches/2/revert", method: .post, headers: Self.authorized) { response in
        #expect(Self.json(response)["code"] == "alreadyReverted")
      }
    }
    #expect(try ledger.head == 4)
  }

  @Test func anExportIsStreamedInChunksAndIsTheLibrarysExport() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    // Enough objects for several 64 KB chunks.
    try batch.stage(
      .array(
        (1...3000).map { index in
          ["name": .string("band \(index) <\"quoted\">"), "label": .string(String(repeating: "x", count: 40))]
        }), as: "Band")
    _ = try ledger.applySynchronously(batch)
    let document = try await ledger.read { view in try view.exportDocument() }
    let nested = ExportOptions(relationships: .nested(depth: 2))
    let bands = try await ledger.read { view in try view.exportJSON("Band", options: nested) }
    let before = try await ledger.read(asOf: 1) { view in try view.exportDocument() }
    try await Self.application(ledger).test(.router) { client in
      try await client.execute(uri: "/v1/export", method: .get) { response in
        #expect(response.status == .ok)
        #expect(response.body.readableBytes > 3 * (64 << 10))
        #expect(Self.json(response) == document)
      }
      try await client.execute(uri: "/v1/export?entity=Band&relationships=nested&depth=2", method: .get) {
        #expect(Self.json($0) == bands)
      }
      try await client.execute(uri: "/v1/export?asOf=1", method: .get) { #expect(Self.json($0) == before) }
      try await client.execute(uri: "/v1/export?entity=Nope", method: .get) { response in
        #expect(response.status == .notFound)
        #expect(Self.json(response)["code"] == "unknownEntity")
      }
      try await client.execute(uri: "/v1/export?asOf=99", method: .get) { #expect($0.status == .notFound) }
    }
  }

  @Test func metricsSayTheHeadTheStoreSizeAndTheBatchesApplied() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    let router = Router()
    LedgerRoutes(
      ledger: ledger, options: LedgerServerOptions(token: Self.token), metrics: PrometheusCollectorRegistry()
    )
    .addRoutes(to: router)
    try await Application(router: router).test(.router) { client in
      try await client.execute(
        uri: "/v1/batches?entity=Band", method: .post, headers: Self.authorized, body: Self.body(#"[{"name": "Neu!"}]"#)
      ) { #expect($0.status == .created) }
      try await client.execute(uri: "/metrics", method: .get) { response in
        let text = String(buffer: response.body)
        #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(text.contains("jsonledger_head 2"), "\(text)")
        #expect(text.contains("jsonledger_batches_applied_total 1"), "\(text)")
        #expect(text.contains("jsonledger_store_bytes "), "\(text)")
      }
    }
  }

  /// A batch that only links an object (an album naming its band) shows on the object's
  /// history what it linked and unlinked, not an empty row.
  @Test func anObjectsHistoryShowsTheLinksABatchChanged() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Tin Drum", "band": "Japan"]], as: "Album")
    _ = try ledger.applySynchronously(batch, message: "links only")
    try await Self.application(ledger).test(.router) { client in
      try await client.execute(uri: "/objects/Band/Japan", method: .get) { response in
        let page = String(buffer: response.body)
        let rows = page.components(separatedBy: "<tr>").filter { $0.contains("<a href=\"/batches/2\">2</a>") }
        #expect(rows.count == 1, "\(page)")
        let row = rows.first ?? ""
        #expect(row.contains("Band.albums"), "\(row)")
        #expect(row.contains("<span class=\"old\">—</span> → <span class=\"new\">Tin Drum</span>"), "\(row)")
      }
    }
  }

  @Test func aScriptValueIsTextOnEveryConsolePage() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "<script>alert(1)</script>", "label": "\"><img src=x onerror=alert(2)>"]], as: "Band")
    _ = try ledger.applySynchronously(batch, message: "<b>bold</b>")
    try await Self.application(ledger).test(.router) { client in
      for uri in [
        "/", "/batches/2", "/entities/Band", "/objects/Band/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "/?entity=Band&key=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "/objects/Band/%3Cscript%3E?asOf=%3Cscript%3E",
      ] {
        try await client.execute(uri: uri, method: .get) { response in
          let page = String(buffer: response.body)
          #expect(!page.contains("<script>alert"), "\(uri)")
          #expect(!page.contains("<img"), "\(uri)")
          #expect(!page.contains("<b>bold"), "\(uri)")
          #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
        }
      }
      try await client.execute(uri: "/batches/2", method: .get) { response in
        #expect(String(buffer: response.body).contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
      }
    }
  }

  /// The console counts placeholders apart from imported objects, marks them in the list and
  /// links to each kind alone: an entity of references only no longer reads as data.
  @Test func theConsoleCountsAndMarksPlaceholdersApart() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Tin Drum", "band": "Japan"]], as: "Album")
    _ = try ledger.applySynchronously(batch)
    try await Self.application(ledger).test(.router) { client in
      try await client.execute(uri: "/entities/Album", method: .get) { response in
        let page = String(buffer: response.body)
        #expect(
          page.contains(">1 object</a>, <a href=\"/entities/Album?where=placeholder\">1 placeholder</a>"), "\(page)")
        #expect(page.contains(#"Quiet Life</a> <span class="tag">placeholder</span>"#), "\(page)")
        #expect(!page.contains(#"Tin Drum</a> <span"#), "\(page)")
      }
      try await client.execute(uri: "/entities/Album?where=placeholder", method: .get) { response in
        let page = String(buffer: response.body)
        #expect(page.contains("Quiet Life") && !page.contains(">Tin Drum<"), "\(page)")
      }
      try await client.execute(uri: "/entities/Band", method: .get) { response in
        #expect(String(buffer: response.body).contains("<p>3 objects.</p>"))
      }
    }
  }

  /// Regression: a field whose value is null was missing from the object page, the row an
  /// auditor came to see after a bad batch nulled it; and a filtered list showed the entity's
  /// count, not the filter's.
  @Test func theConsoleShowsNullFieldsAndTheCountAFilterGives() async throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Neu!"]], as: "Band")
    _ = try ledger.applySynchronously(batch)
    try await Self.application(ledger).test(.router) { client in
      try await client.execute(uri: "/objects/Band/Neu!", method: .get) { response in
        let page = String(buffer: response.body)
        for field in ["label", "formed", "albums"] {
          #expect(page.contains("<th scope=\"row\">\(field)</th><td>—</td>"), "\(field): \(page)")
        }
      }
      try await client.execute(uri: "/entities/Band?where=formed%20%3E%201970", method: .get) { response in
        let page = String(buffer: response.body)
        #expect(page.contains("<p>4 objects. 2 of them match.</p>"), "\(page)")
      }
    }
  }
}
