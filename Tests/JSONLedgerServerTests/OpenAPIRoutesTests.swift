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
  /// `METHOD /path/{capture}` of every operation the document describes.
  static func documented() throws -> Set<String> {
    let url = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appending(path: "Sources/JSONLedgerServer/Resources/openapi.json")
    let document = try JSONParser.parse(Array(try Data(contentsOf: url)))
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

  @Test func everyRouteOfTheAPIIsInTheDocumentAndEveryOperationOfTheDocumentIsARoute() throws {
    let documented = try Self.documented()
    let routed = try Self.routed()
    #expect(!routed.isEmpty)
    #expect(routed.subtracting(documented).sorted() == [], "routes the OpenAPI document does not describe")
    #expect(documented.subtracting(routed).sorted() == [], "operations of the OpenAPI document no route answers")
  }
}
