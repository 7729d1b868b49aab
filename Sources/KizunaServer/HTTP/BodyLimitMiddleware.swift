import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore

/// Refuses bodies over the configured size with 413 before a handler sees them.
///
/// A declared `Content-Length` over the limit is refused without reading; otherwise the body is collected up to the
/// limit, which also bounds chunked uploads.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext
    let limit: Int
    /// Requests whose handler streams the body under a limit of its own (release artifacts), never collected here.
    var streams: @Sendable (Request) -> Bool = { _ in false }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if streams(request) { return try await next(request, context) }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge
        }
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        var request = request
        do {
            _ = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
        return try await next(request, context)
    }

    private var tooLarge: KizunaError {
        KizunaError(.payloadTooLarge, "The request body is larger than this server's limit of \(limit) bytes.")
    }
}
