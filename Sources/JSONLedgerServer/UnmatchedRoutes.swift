import Hummingbird

/// Answers a request under `/v1/` that no route took as the API answers its own failures, with
/// a JSON body and a code: `405 Method Not Allowed` with `Allow` when routes of other methods
/// have its path (`GET /v1/batches`, which takes `POST`), else `404` (`routeNotFound`).
/// Hummingbird's own answer is an empty 404 for both. Other paths are left to the router.
///
/// It sees only what the router found no route for: `LedgerRoutes.addRoutes(to:)` adds it
/// after the routes, with the router's table of them as it is then.
struct UnmatchedRoutes<Context: RequestContext>: RouterMiddleware {
  /// Each route's path, a component each (a capture as nil: any one component), and method.
  private let routes: [(components: [Substring?], method: HTTPRequest.Method)]

  init(_ routes: [Router<Context>.RouteDescription]) {
    self.routes = routes.map { route in
      let components = route.path.components.map { component -> Substring? in
        let text = component.description
        return text.hasPrefix("{") && text.hasSuffix("}") ? nil : Substring(text)
      }
      return (components, route.method)
    }
  }

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    do { return try await next(request, context) } catch let error as HTTPError where error.status == .notFound {
      let path = request.uri.path
      guard path.hasPrefix("/v1/") else { throw error }
      let methods = allowedMethods(for: path)
      guard !methods.isEmpty else {
        throw APIFailure(
          status: .notFound, code: "routeNotFound",
          message: "no route \(request.method) \(path.prefix(200)) (the API: /openapi.json)")
      }
      let allowed = methods.map(\.rawValue).joined(separator: ", ")
      throw APIFailure(
        status: .methodNotAllowed, code: "methodNotAllowed",
        message: "\(path.prefix(200)) takes \(allowed), not \(request.method)"
      ).with { $0.headers[.allow] = allowed }
    }
  }

  /// The methods of the routes whose path `path` is, in the order the router lists them.
  private func allowedMethods(for path: String) -> [HTTPRequest.Method] {
    let segments = path.split(separator: "/")
    var methods: [HTTPRequest.Method] = []
    for route in routes where route.components.count == segments.count && !methods.contains(route.method) {
      let matches = zip(route.components, segments).allSatisfy { component, segment in
        component.map { $0 == segment } ?? true
      }
      if matches { methods.append(route.method) }
    }
    return methods
  }
}
