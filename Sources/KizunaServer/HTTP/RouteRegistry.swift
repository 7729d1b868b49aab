import HTTPTypes
import Hummingbird
import Synchronization

/// Every route the server registers, as `(method, path template)`.
///
/// The error middleware asks it whether an unmatched request hit a known path with another method (405), and a
/// test compares it with `openapi.yaml`.
package final class RouteRegistry: Sendable {
    /// A registered route; `path` uses `{name}` for parameters, as OpenAPI does.
    package struct Route: Hashable, Sendable {
        package let method: HTTPRequest.Method
        package let path: String
    }

    private let storage = Mutex<[Route]>([])

    init() {}

    /// Every route, in registration order.
    package var routes: [Route] { storage.withLock { $0 } }

    func add(_ method: HTTPRequest.Method, _ path: String) {
        storage.withLock { $0.append(Route(method: method, path: path)) }
    }

    /// The methods registered for templates that match a concrete path.
    func methods(matching path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.filter { route in
            let template = route.path.split(separator: "/", omittingEmptySubsequences: true)
            return template.count == segments.count
                && zip(template, segments).allSatisfy { pattern, segment in pattern.hasPrefix("{") || pattern == segment }
        }.map(\.method)
    }
}

/// Registers routes on a router (or group) and records them in a ``RouteRegistry``.
struct RouteBuilder {
    typealias Handler = @Sendable (Request, KizunaRequestContext) async throws -> Response
    let router: any RouterMethods<KizunaRequestContext>
    let prefix: String
    let registry: RouteRegistry

    /// A builder for routes under `path`, with `middleware` applied to them only.
    func group(_ path: String, middleware: (any MiddlewareProtocol<Request, Response, KizunaRequestContext>)? = nil) -> RouteBuilder {
        let group: RouterGroup<KizunaRequestContext> = router.group(RouterPath(path))
        if let middleware { _ = group.add(middleware: middleware) }
        return RouteBuilder(router: group, prefix: prefix + path, registry: registry)
    }

    func on(_ method: HTTPRequest.Method, _ path: String, use handler: @escaping Handler) {
        registry.add(method, prefix + path)
        router.on(RouterPath(path), method: method, use: handler)
    }

    func get(_ path: String = "", use handler: @escaping Handler) { on(.get, path, use: handler) }
    func post(_ path: String = "", use handler: @escaping Handler) { on(.post, path, use: handler) }
    func patch(_ path: String = "", use handler: @escaping Handler) { on(.patch, path, use: handler) }
    func put(_ path: String = "", use handler: @escaping Handler) { on(.put, path, use: handler) }
    func delete(_ path: String = "", use handler: @escaping Handler) { on(.delete, path, use: handler) }
}
