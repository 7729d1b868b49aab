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
        allowHeaders: [.accept, .authorization, .contentType, .ifMatch, .ifNoneMatch, .acceptLanguage, .init("Last-Event-ID")!],
        allowMethods: [.get, .head, .post, .put, .patch, .delete, .options],
        allowCredentials: false,
        exposedHeaders: ["ETag", "Retry-After", "X-Request-ID", "Location"],
        maxAge: .seconds(600)
    )

    init(origins: [String]) {
        self.origins = Set(origins.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], origins.contains(origin), Self.isCrossOriginAPI(request.uri.path) else {
            return try await next(request, context)
        }
        return try await cors.handle(request, context: context, next: next)
    }

    /// The device and account API: `/v1/…` but not `/v1/admin/…`.
    static func isCrossOriginAPI(_ path: String) -> Bool {
        path.hasPrefix("/v1/") && !path.hasPrefix("/v1/admin/") && path != "/v1/admin"
    }
}
