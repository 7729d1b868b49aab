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

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Release artifacts stream to the blob store under their own limit, never collected in memory.
        if ReleasesController.isArtifactUpload(request) { return try await next(request, context) }
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
