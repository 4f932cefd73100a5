import Foundation
import Hummingbird
import JSONLedger
import JSONLedgerServer
import JSONLedgerTestSupport
import Prometheus
import Testing

/// The hand-written OpenAPI document (`Resources/openapi.json`) and the router describe the
/// same API: a route added or removed on one side only fails here.
@Suite("The OpenAPI document and the router")
struct OpenAPIRoutesTests {
  /// The document, beside the server's sources.
  static let documentURL = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appending(path: "Sources/JSONLedgerServer/Resources/openapi.json")

  /// `METHOD /path/{capture}` of every operation the document describes.
  static func documented() throws -> Set<String> {
    let document = try JSONParser.parse(Array(try Data(contentsOf: documentURL)))
    guard case .object(let root) = document, case .object(let paths)? = root["paths"] else {
      Issue.record("openapi.json has no paths")
      return []
    }
    var operations: Set<String> = []
    let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
    for path in paths {
      guard case .object(let operationsOfPath) = path.value else { continue }
      for operation in operationsOfPath where methods.contains(operation.key) {
        operations.insert("\(operation.key.uppercased()) \(path.key)")
      }
    }
    return operations
  }

  /// `METHOD /path/{capture}` of every route the server adds that answers JSON (or, for
  /// `/metrics`, Prometheus's text): the API, the feed, `/healthz` and `/metrics`, not the
  /// console's pages and assets nor the document itself.
  static func routed() throws -> Set<String> {
    let directory = try TemporaryDirectory()
    let ledger = try APITests.ledger(directory)
    let router = Router()
    LedgerRoutes(ledger: ledger, metrics: PrometheusCollectorRegistry()).addRoutes(to: router)
    var operations: Set<String> = []
    for route in router.routes {
      let path = "/" + route.path.components.map(\.description).joined(separator: "/")
      guard path.hasPrefix("/v1/") || path == "/healthz" || path == "/metrics" else { continue }
      operations.insert("\(route.method.rawValue) \(path)")
    }
    return operations
  }

  /// The patterns of every query parameter the document gives one.
  static func queryPatterns() throws -> [String: Set<String>] {
    // Read with Foundation's JSON: parameters are objects in arrays, several levels down.
    let root = try JSONSerialization.jsonObject(with: Data(contentsOf: documentURL))
    var patterns: [String: Set<String>] = [:]
    func visit(_ node: Any) {
      if let object = node as? [String: Any] {
        if object["in"] as? String == "query", let name = object["name"] as? String,
          let pattern = (object["schema"] as? [String: Any])?["pattern"] as? String
        {
          patterns[name, default: []].insert(pattern)
        }
        object.values.forEach(visit)
      } else if let array = node as? [Any] {
        array.forEach(visit)
      }
    }
    visit(root)
    return patterns
  }

  @Test func aBatchParametersPatternAdmitsWhatTheServerReadsAndTurnsDownWhatItRefuses() throws {
    let patterns = try Self.queryPatterns()
    let batchPatterns = ["asOf", "from", "to"].compactMap { patterns[$0] }.reduce(into: Set<String>()) {
      $0.formUnion($1)
    }
    #expect(batchPatterns.count == 1, "one pattern for a batch or a time")
    let pattern = try #require(batchPatterns.first)
    let expression = try NSRegularExpression(pattern: pattern)
    func matches(_ text: String) -> Bool {
      expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
    let read = [
      "0", "42", "2026-01-01", "2026-01-01T12:00", "2026-01-01T12:00:00Z", "2026-01-01 12:00:00.123+01:00",
      "2026-12-31t23:59:59,5-0530", "2026-02-28T00:00:00+01",
    ]
    for text in read {
      #expect(matches(text), "\(text) is read, and the pattern turns it down")
      #expect(BatchReference(text) != nil, "\(text)")
    }
    // Schemathesis generates values from the pattern: what it admits must be read, or most
    // of them are turned down (400) and the operation goes untested.
    let refused = [
      "", "-1", "2026/01/01", "2026-01-01junk", "2026-13-01", "2026-01-32", "2026-01-01T25:00", "2026-01-01T12:60",
      "2026-01-01T12:00:00.", "2026-01-01T12:00:00.1234567890", "2026-01-01T12:00:00+24:00", "2026-01-01Tx",
      "2026-01-01T12", "2026-01-01T12:00:00ZZ",
    ]
    for text in refused {
      #expect(!matches(text), "\(text) is refused, and the pattern admits it")
      #expect(BatchReference(text) == nil, "\(text)")
    }
  }

  @Test func everyRouteOfTheAPIIsInTheDocumentAndEveryOperationOfTheDocumentIsARoute() throws {
    let documented = try Self.documented()
    let routed = try Self.routed()
    #expect(!routed.isEmpty)
    #expect(routed.subtracting(documented).sorted() == [], "routes the OpenAPI document does not describe")
    #expect(documented.subtracting(routed).sorted() == [], "operations of the OpenAPI document no route answers")
  }
}
