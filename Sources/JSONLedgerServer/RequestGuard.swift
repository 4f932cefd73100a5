import HTTPTypes
import Hummingbird

/// With `LedgerServerOptions.allowedHosts` (a server on loopback has its loopback names),
/// refuses a request whose `Host` is another name: `421 misdirectedRequest`. A page whose
/// domain name is made to resolve to 127.0.0.1 (DNS rebinding) sends its own name, and reads
/// nothing. The writes a page could forge are refused by `LedgerRoutes.writing` (`WriteGuard`).
struct HostGuard<Context: RequestContext>: RouterMiddleware {
  let allowed: Set<String>

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    // HTTP/1's `Host` is the request's authority.
    let host = request.head.authority ?? ""
    guard allowed.contains(WriteGuard.name(ofHost: host).lowercased()) else {
      throw APIFailure(
        status: .misdirectedRequest, code: "misdirectedRequest",
        message:
          "this server answers requests to \(allowed.sorted().joined(separator: ", ")), not to \"\(host.prefix(100))\"")
    }
    return try await next(request, context)
  }
}

/// What a write must be so that no web page in a user's browser can make it unasked:
///
/// - not from another site: a browser says where a request comes from (`Sec-Fetch-Site`
///   other than `same-origin` or `none`, an `Origin` other than this server's scheme and
///   `Host`), and such a write is `403 crossSiteRequest`. Clients such as curl send neither;
/// - declared JSON (`Content-Type: application/json`), which a form or a `text/plain` request
///   cannot send without the browser asking the server first: else `415 unsupportedMediaType`.
enum WriteGuard {
  static func check(_ request: Request) throws {
    let host = request.head.authority ?? ""
    if let site = request.headers[.secFetchSite], !["same-origin", "none"].contains(site) {
      throw crossSite("the browser says it comes from another site (Sec-Fetch-Site: \(site.prefix(40)))")
    }
    if let origin = request.headers[.origin] {
      let own = ["http://" + host.lowercased(), "https://" + host.lowercased()]
      guard own.contains(origin.lowercased()) else {
        throw crossSite("it comes from the page of another origin (\(origin.prefix(100)))")
      }
    }
    let type = request.headers[.contentType]?.split(separator: ";").first.map {
      $0.trimmingCharacters(in: .whitespaces).lowercased()
    }
    guard let type, type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
      throw APIFailure(
        status: .unsupportedMediaType, code: "unsupportedMediaType",
        message: "a write's body is JSON: send it with Content-Type: application/json"
          + (type.map { ", not \($0.prefix(80))" } ?? ""))
    }
  }

  private static func crossSite(_ reason: String) -> APIFailure {
    APIFailure(status: .forbidden, code: "crossSiteRequest", message: "a write refused: \(reason)")
  }

  /// A `Host` value's name, without its port: `[::1]:8080` → `[::1]`, `localhost:8080` →
  /// `localhost`.
  static func name(ofHost host: String) -> String {
    if host.hasPrefix("["), let end = host.firstIndex(of: "]") { return String(host[...end]) }
    return String(host.split(separator: ":", maxSplits: 1).first ?? "")
  }
}

extension HTTPField.Name {
  /// A browser's word on where a request comes from (Fetch Metadata); a valid name, spelled
  /// here once.
  static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}
