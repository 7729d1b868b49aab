import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore

/// Refuses bodies over the configured size with 413 before a handler sees them (in ``EdgeMiddleware``).
///
/// A declared `Content-Length` over the limit is refused without reading; otherwise the body is collected up to the
/// limit, which also bounds chunked uploads.
struct BodyLimit: Sendable {
    let limit: Int
    /// Requests whose handler streams the body under a limit of its own (release artifacts), never collected here.
    var streams: @Sendable (Request) -> Bool = { _ in false }

    /// Whether `request`'s body is to be collected before its handler runs; throws `payload_too_large` when its
    /// declared length is over the limit.
    func collects(_ request: Request) throws(KizunaError) -> Bool {
        if streams(request) { return false }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge
        }
        return request.method != .get && request.method != .head
    }

    var tooLarge: KizunaError {
        KizunaError(.payloadTooLarge, "The request body is larger than this server's limit of \(limit) bytes.")
    }
}
