import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging
import NIOCore
import Synchronization

/// The admin API called in process: how the console reads and writes. A console page or form becomes the same
/// request a CLI or `curl` user would send to `/v1/admin/…`, answered by the same router, middleware, validation and
/// store path; the console never reaches the store another way.
///
/// The call runs under the signed-in operator's admin token, set on the request's context before the router sees it
/// (``AdminAuthMiddleware`` accepts a context that already carries one; a request from the network always arrives
/// without). It keeps the console request's id, so the request log shows the admin call and the page under one id.
final class AdminAPI: Sendable {
    private let responder = Mutex<(any HTTPResponder<KizunaRequestContext>)?>(nil)

    /// Gives the API the router's responder once every route is added.
    func attach(_ responder: any HTTPResponder<KizunaRequestContext>) {
        self.responder.withLock { $0 = responder }
    }

    /// What the admin API answered.
    struct Answer: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer

        var isSuccess: Bool { status.kind == .successful }

        /// The body decoded as `T`.
        func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
            try WireFormat.decoder().decode(T.self, from: Data(body.readableBytesView))
        }

        /// The body as JSON (a GraphQL answer, a document), read from its bytes without `JSONDecoder`.
        func json() throws -> JSONValue {
            try JSONValue(parsing: Data(body.readableBytesView))
        }

        /// The error the body describes, for an answer that is not a success.
        var error: KizunaError? {
            guard !isSuccess else { return nil }
            return (try? decode(ErrorEnvelope.self))?.kizunaError ?? KizunaError(.internalError, "The admin API answered \(status.code).")
        }
    }

    /// Sends `method path` with `body` as JSON (none when nil) as the session's admin token, with `headers` besides.
    func call(
        _ method: HTTPRequest.Method, _ path: String, json body: (any Encodable & Sendable)? = nil, headers: HTTPFields = [:],
        as token: AdminToken, context: KizunaRequestContext
    ) async throws -> Answer {
        let response = try await respond(method, path, json: body, headers: headers, as: token, context: context)
        let collected = Collected()
        try await response.body.write(Collector(into: collected))
        return Answer(status: response.status, headers: response.headers, body: collected.buffer.withLock { $0 })
    }

    /// The admin API's response itself, its body not yet written: for passing a large body (a release artifact)
    /// through to the browser as it streams.
    func respond(
        _ method: HTTPRequest.Method, _ path: String, json body: (any Encodable & Sendable)? = nil, headers: HTTPFields = [:],
        as token: AdminToken, context: KizunaRequestContext
    ) async throws -> Response {
        guard let responder = responder.withLock({ $0 }) else { throw KizunaError(.unavailable, "The admin API is not ready yet.") }
        var fields = headers
        var buffer = ByteBuffer()
        if let body {
            buffer = ByteBuffer(bytes: try WireFormat.encoder().encode(body))
            fields[.contentType] = "application/json"
        }
        fields[.contentLength] = String(buffer.readableBytes)
        let request = Request(
            head: HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: fields), body: RequestBody(buffer: buffer))
        var inner = context
        inner.adminToken = token
        inner.logger[metadataKey: "admin.token"] = "\(token.id)"
        inner.collectedBody = nil
        inner.coreContext.endpointPath = .init()  // a box shared by copies: the page's own route must stay its own
        return try await responder.respond(to: request, context: inner)
    }

    private final class Collected: Sendable {
        let buffer = Mutex(ByteBuffer())
    }

    /// Gathers a response body in memory (the body consumes its writer, so the bytes go to a shared box).
    private struct Collector: ResponseBodyWriter {
        let into: Collected

        mutating func write(_ buffer: ByteBuffer) async throws {
            into.buffer.withLock { collected in
                var buffer = buffer
                collected.writeBuffer(&buffer)
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
