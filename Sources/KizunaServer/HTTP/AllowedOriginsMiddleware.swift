import Foundation
import HTTPTypes
import Hummingbird

/// CORS for the device and account API (`/v1/…` outside `/v1/admin`), for the origins an operator allows
/// (`--cors-origin`), through Hummingbird's ``CORSMiddleware``. None are allowed by default: native apps need no CORS,
/// and an origin allowed here can call the API with a user's bearer token from its pages.
///
/// A request from any other origin passes without CORS headers, so the browser refuses the answer (and a preflight
/// meets the router's 405). Admin routes never answer cross-origin: the admin token must not be usable from a web page.
/// Credentials (cookies) are not allowed cross-origin; web apps on another origin use bearer tokens.
struct AllowedOriginsMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext
    let origins: Set<String>
    private let cors = CORSMiddleware<KizunaRequestContext>(
        allowOrigin: .originBased,
        allowHeaders: [.accept, .authorization, .contentType, .ifMatch, .ifNoneMatch, .acceptLanguage, .lastEventID],
        allowMethods: [.get, .head, .post, .put, .patch, .delete, .options],
        allowCredentials: false,
        exposedHeaders: ["ETag", "Retry-After", "X-Request-ID", "Location"],
        maxAge: .seconds(600)
    )

    init(origins: [String]) {
        self.origins = Set(origins.compactMap(Self.normalized))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin].flatMap(Self.normalized), origins.contains(origin), Self.isCrossOriginAPI(request.uri.path)
        else {
            return try await next(request, context)
        }
        return try await cors.handle(request, context: context, next: next)
    }

    /// The device and account API: `/v1/…` but not `/v1/admin/…`, judged by path segments as the router matches
    /// them (it skips empty ones, so `/v1//admin` is an admin path too).
    static func isCrossOriginAPI(_ path: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return segments.first == "v1" && segments.dropFirst().first != "admin"
    }

    /// An origin as browsers send it: lower-case scheme and host, no default port, no trailing slash.
    static func normalized(_ origin: String) -> String? {
        guard let url = URLComponents(string: origin), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        let port = url.port.flatMap { (scheme == "https" && $0 == 443) || (scheme == "http" && $0 == 80) ? nil : $0 }
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }
}
