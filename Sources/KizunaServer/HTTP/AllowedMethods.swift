import HTTPTypes
import Hummingbird
import Synchronization

/// Which methods the router serves on a path, from Hummingbird's own list of its routes (`Router.routes`), so that
/// a request with the wrong method is answered 405 with `Allow` instead of 404.
///
/// The error middleware is added before the routes (Hummingbird applies middleware to routes added after it), so it
/// gets this empty and the server fills it once every route is in.
package final class AllowedMethods: Sendable {
    private let routes = Mutex<[(method: HTTPRequest.Method, path: RouterPath)]>([])

    package init() {}

    /// Takes the router's routes; called once they are all added.
    package func record(_ router: Router<KizunaRequestContext>) {
        let table = router.routes.map { (method: $0.method, path: $0.path) }
        routes.withLock { $0 = table }
    }

    /// The methods of the routes whose path template matches `path`, judged segment by segment as the router does.
    package func methods(matching path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.withLock { routes in
            routes.filter { route in
                route.path.components.count == segments.count
                    && zip(route.path.components, segments).allSatisfy { component, segment in component ~= segment }
            }.map(\.method)
        }.sorted { Self.order($0) < Self.order($1) }
    }

    /// `Allow` lists methods in the usual order (reads, then writes), not the router's alphabetical one.
    private static func order(_ method: HTTPRequest.Method) -> Int {
        [.get, .head, .post, .put, .patch, .delete, .options].firstIndex(of: method) ?? .max
    }
}
