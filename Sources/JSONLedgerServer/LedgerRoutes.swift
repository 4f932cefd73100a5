import Foundation
public import Hummingbird
public import JSONLedger
public import Logging
import NIOHTTP1
public import Prometheus

/// A ledger's HTTP API (under `/v1`, described by `/openapi.json`) and its audit console (at
/// `/`), as routes an app adds to its own Hummingbird router:
///
/// ```swift
/// let router = Router()
/// LedgerRoutes(ledger: ledger, options: LedgerServerOptions(token: token)).addRoutes(to: router)
/// let app = Application(
///   router: router,
///   // Optional: a request the HTTP parser refuses is answered as JSON too.
///   server: .http1(configuration: .init(additionalChannelHandlers: [MalformedRequestHandler()])),
///   configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
/// try await app.runService()
/// ```
///
/// Every value a route takes from a request — an entity, a key, a batch id — is looked up in
/// the store; none reaches the file system.
public struct LedgerRoutes: Sendable {
  /// The ledger the routes read and write: the one they were given, or, once the store's
  /// model changed under it (a `jsonledger migrate` from another process, a replica's
  /// follower), the store opened anew under its new model version.
  public var ledger: Ledger { current.ledger }
  let current: CurrentLedger
  /// Where the routes' writes go: the ledger itself, or through a replica's remote.
  public var writes: any LedgerWrites
  /// What the routes allow.
  public var options: LedgerServerOptions
  /// Where failures that are not the caller's doing are logged.
  public var logger = Logger(label: "jsonledger.server")
  /// The registry `/metrics` answers from, when there is one.
  let metrics: LedgerMetrics?
  /// The request bodies held at once, across requests (`maxBodyBytesInFlight`).
  let bodies: BodyBudget

  /// Routes over `ledger`; with `metrics`, `/metrics` answers in Prometheus's text format from
  /// that registry, to which the routes add the ledger's head, store size and the batches they
  /// applied, and every other route is measured (requests, durations, errors: Hummingbird's
  /// `MetricsMiddleware`, through swift-metrics — bootstrap `MetricsSystem` with a
  /// `PrometheusMetricsFactory` over the same registry to see them). `writes` is where the
  /// write routes go: the ledger itself unless given (a replica's remote). Each request first
  /// checks that the store's model is still the ledger's, and takes the store anew under its
  /// new version when it is not.
  public init(
    ledger: Ledger, options: LedgerServerOptions = LedgerServerOptions(), metrics: PrometheusCollectorRegistry? = nil,
    writes: (any LedgerWrites)? = nil
  ) {
    current = CurrentLedger(ledger)
    self.writes = writes ?? CurrentWrites(current: current)
    self.options = options
    self.metrics = metrics.map(LedgerMetrics.init)
    // A body the server takes alone always fits.
    bodies = BodyBudget(limit: max(options.maxBodyBytesInFlight, options.maxBodyBytes))
  }

  /// Adds the API, the feed of changes, the OpenAPI document, `/healthz`, the console and,
  /// with a registry, `/metrics` to `router`. A request under `/v1/` that no route takes is
  /// answered as JSON too: `405` with `Allow` when the path has routes of other methods, else
  /// `404` (`UnmatchedRoutes`, which sees the routes the router has once these are added).
  public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
    // First: a request addressed to another name than the server's is refused.
    if let allowed = options.allowedHosts { router.add(middleware: HostGuard(allowed: allowed)) }
    if let metrics {
      addMetricsRoute(to: router, metrics)
      addMeasuredRoutes(to: router.group().add(middleware: MetricsMiddleware()))
    } else {
      addMeasuredRoutes(to: router)
    }
    router.add(middleware: UnmatchedRoutes(router.routes))
  }

  private func addMeasuredRoutes<Routes: RouterMethods>(to router: Routes) {
    addReadRoutes(to: router)
    addWriteRoutes(to: router)
    addChangeRoutes(to: router)
    addConsoleRoutes(to: router)
  }

  /// `body` over the view of now, or of the state right after batch `asOf`.
  func read<R: Sendable>(asOf: UInt64?, _ body: @escaping @Sendable (borrowing View) throws -> R) async throws -> R {
    if let asOf { return try await ledger.read(asOf: asOf, body) }
    return try await ledger.read(body)
  }

  /// Runs `body` as a read, with what the request says: the token checked when reads need it,
  /// ledger errors answered as the API's JSON errors.
  func reading(
    _ request: Request, _ context: some RequestContext, _ body: (RequestValues) async throws -> Response
  ) async throws -> Response {
    if options.tokenForReads, !options.authorizes(request.headers[.authorization]) { throw APIFailure.unauthorized }
    return try await answering {
      try await body(RequestValues(request: request, parameters: context.parameters, options: options))
    }
  }

  /// Runs `body` as a write: refused on a read-only server, the token checked.
  func writing(
    _ request: Request, _ context: some RequestContext, _ body: (RequestValues) async throws -> Response
  ) async throws -> Response {
    if options.readOnly { throw APIFailure.readOnly }
    if !options.authorizes(request.headers[.authorization]) { throw APIFailure.unauthorized }
    // What another site's page could send (a server without a token takes it otherwise).
    try WriteGuard.check(request)
    return try await answering {
      try await body(RequestValues(request: request, parameters: context.parameters, options: options))
    }
  }

  private func answering(_ body: () async throws -> Response) async throws -> Response {
    do { return try await current.running(body) } catch let error as LedgerError {
      throw APIFailure(error, dateFormat: ledger.model.dateFormat)
    } catch let error as APIFailure {
      throw error
    } catch let error as WriteFailure {
      throw APIFailure(status: error.status, code: error.code, message: error.message)
    } catch let error as RemoteError {
      let failure = WriteFailure(error)
      throw APIFailure(status: failure.status, code: failure.code, message: failure.message)
    } catch let error as HTTPParserError {
      // The request's bytes stopped being HTTP part way through its body (a broken chunked
      // encoding): the client's doing, as `MalformedRequestHandler` answers before a route.
      throw APIFailure.refusedByParser(error)
    } catch let error as any HTTPResponseError {
      // Hummingbird's own refusals (a body over the limit is NIO's too-many-bytes error).
      if error.status == .contentTooLarge {
        throw APIFailure.bodyTooLarge(limit: options.maxBodyBytes)
      }
      throw APIFailure(
        status: error.status, code: "badRequest", message: (error as? HTTPError)?.body ?? error.status.reasonPhrase)
    } catch {
      // Not the caller's doing: said as JSON, and logged whole for the operator.
      logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
      throw APIFailure(status: .internalServerError, code: "internal", message: "the server failed: \(error)")
    }
  }
}

/// What a request says, read the same way by the API and the console.
struct RequestValues {
  let request: Request
  let parameters: Parameters
  let options: LedgerServerOptions

  /// A path parameter, percent-decoded.
  func path(_ name: String) throws -> String {
    guard let raw = parameters.get(name) else { throw APIFailure.badRequest("the path needs \(name)") }
    guard let decoded = raw.removingPercentEncoding else {
      throw APIFailure.badRequest("\(name) \"\(raw.prefix(80))\" is not percent-encoded text")
    }
    return decoded
  }

  /// A query parameter (percent-decoded by the router); empty counts as absent.
  func query(_ name: String) -> String? {
    guard let value = request.uri.queryParameters.get(name), !value.isEmpty else { return nil }
    return value
  }

  /// Every value of a repeated query parameter.
  func queryAll(_ name: String) -> [String] {
    request.uri.queryParameters.getAll(name).filter { !$0.isEmpty }
  }

  func batchID(_ text: String, name: String) throws -> UInt64 {
    guard let value = UInt64(text) else {
      throw APIFailure.badRequest("\(name) must be a batch id, not \"\(text.prefix(80))\"")
    }
    return value
  }

  /// `limit`: the default page when absent, refused above the largest.
  func limit() throws -> Int {
    guard let text = query("limit") else { return options.defaultPageSize }
    guard let value = Int(text), value >= 1 else {
      throw APIFailure.badRequest("limit must be a whole number from 1, not \"\(text.prefix(80))\"")
    }
    guard value <= options.maxPageSize else {
      throw APIFailure.badRequest("limit must be at most \(options.maxPageSize), not \(value)")
    }
    return value
  }

  /// `asOf`: a batch id, or an ISO 8601 time (the last batch applied by then); nil: now.
  func asOf(in ledger: Ledger) throws -> UInt64? { try batchOrTime("asOf", in: ledger) }

  /// The query item `name` as the library reads a batch (`BatchReference`): an id, or an ISO
  /// 8601 time standing for the last batch applied by then (before every batch: 0, the empty
  /// store, where `emptyStoreAllowed`); nil when absent or empty.
  func batchOrTime(_ name: String, in ledger: Ledger, emptyStoreAllowed: Bool = false) throws -> UInt64? {
    guard let text = query(name), !text.isEmpty else { return nil }
    do {
      return try ledger.batchID(BatchReference(parsing: text, name: name), emptyStoreAllowed: emptyStoreAllowed)
    } catch let error as LedgerError where error.code == .invalidArgument {
      throw APIFailure.badRequest(error.message)
    }
  }
}
