import Foundation
import KizunaCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// HTTP/1.1 to an S3-compatible endpoint, one request per connection: a request's body and its answer's body are
/// each at most one part (8 MiB), so nothing here streams and no pool is worth its state.
struct ObjectStoreConnection: Sendable {
    let host: String
    let port: Int
    /// The endpoint's path prefix (empty, or `/prefix` with no trailing slash).
    let basePath: String
    private let tls: NIOSSLContext?
    /// How long one request may take, from connecting to the answer's last byte: an object store that accepts a
    /// connection and never answers would otherwise hold an upload for ever.
    let timeout: Duration

    struct Response: Sendable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    /// - Throws: `validation_failed` when `endpoint` is not `http(s)://host[:port][/path]`.
    init(endpoint: String, timeout: Duration = .seconds(60)) throws {
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme, scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw KizunaError(.validationFailed, "The S3 endpoint must be http(s)://host[:port][/path], got '\(endpoint)'.", field: "blobS3Endpoint")
        }
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : 80)
        basePath = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
        tls = scheme == "https" ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        self.timeout = timeout
    }

    /// The `Host` header's value: the port only when it is not the scheme's default.
    var hostHeader: String { port == (tls == nil ? 80 : 443) ? host : "\(host):\(port)" }

    /// Sends one request (`target` already percent-encoded) and reads the whole answer, within ``timeout``.
    /// - Throws: `store_unavailable` when the endpoint cannot be reached, closes mid-answer or does not answer in time.
    func send(_ method: HTTPMethod, target: String, headers: HTTPHeaders, body: ByteBuffer?) async throws -> Response {
        let deadline = ContinuousClock.now + timeout
        let channel = try await connect()
        return try await withThrowingTaskGroup(of: Response?.self) { group in
            // Whichever way this ends, the channel is closed (again, harmlessly, when the exchange closed it), so an
            // exchange still waiting on a silent store ends before the group does.
            defer { channel.channel.close(promise: nil) }
            group.addTask { try await exchange(on: channel, method, target: target, headers: headers, body: body) }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let first else {
                throw KizunaError(.storeUnavailable, "The object store at \(hostHeader) did not answer within \(Self.seconds(timeout)).")
            }
            return first
        }
    }

    /// A connection with the HTTP/1.1 client handlers; connecting takes at most 10 seconds (less when ``timeout`` is).
    private func connect() async throws -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        let tls = tls
        let host = host
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(min(timeout, .seconds(10))))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            // SNI takes a name, never an address.
                            let name = host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: name))
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw KizunaError(.storeUnavailable, "The object store at \(hostHeader) cannot be reached.")
        }
    }

    /// Writes the request and reads the answer to its end, then closes the channel.
    private func exchange(
        on channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>, _ method: HTTPMethod, target: String, headers: HTTPHeaders,
        body: ByteBuffer?
    ) async throws -> Response {
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var headers = headers
                headers.replaceOrAdd(name: "Host", value: hostHeader)
                headers.replaceOrAdd(name: "Content-Length", value: String(body?.readableBytes ?? 0))
                headers.replaceOrAdd(name: "Connection", value: "close")
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: headers)))
                if let body, body.readableBytes > 0 { try await outbound.write(.body(.byteBuffer(body))) }
                try await outbound.write(.end(nil))
                var head: HTTPResponseHead?
                var collected = ByteBuffer()
                for try await part in inbound {
                    switch part {
                    case .head(let received): head = received
                    case .body(var bytes): collected.writeBuffer(&bytes)
                    case .end:
                        if let head { return Response(status: head.status, headers: head.headers, body: collected) }
                    }
                }
                throw KizunaError(.storeUnavailable, "The object store closed the connection before answering.")
            }
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.storeUnavailable, "The connection to the object store failed.")
        }
    }

    /// `60 seconds`, `1 second` or `0.5 seconds`: a timeout as a person writes it.
    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) seconds"
    }
}
