import Crypto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A local APNs for tests and benchmarks, faithful to Apple's provider API where a client can tell: HTTP/2 over TLS
/// (ALPN `h2`) with a certificate from its own authority (``certificateAuthorityPEM``, which the client is told to
/// trust), `POST /3/device/<token>`, provider tokens checked as APNs checks them — an ES256 signature by the key's
/// public half, `kid` and `iss`, `iat` no older than an hour, and no new token sooner than 20 minutes after the last —
/// every `apns-*` header and the payload size checked, and each error answered with APNs' status and JSON reason.
/// Tokens can be scripted to answer what APNs would (400, 403, 410 with a timestamp, 413, 429, 500, 503).
public final class APNsTestServer: Sendable {
    /// What the server answers one notification.
    public enum Answer: Sendable, Hashable {
        case accept
        /// An error status and reason; 410 carries `timestamp` (epoch milliseconds).
        case reject(status: Int, reason: String, timestamp: Int64? = nil)
        /// Never answers (the stream stays open until the client gives up or the connection goes).
        case hold
    }

    /// A notification as received, with what it was answered.
    public struct Received: Sendable {
        public let token: String
        public let headers: [String: String]
        public let payload: Data
        public let status: Int
        public let reason: String?
        /// The provider token's `iat`.
        public let issuedAt: Int64?
    }

    /// The key, team and topic the server accepts.
    public struct Expected: Sendable {
        public let publicKey: P256.Signing.PublicKey
        public let keyId: String
        public let teamId: String
        public let topic: String?
        /// Whether a new provider token within 20 minutes of the last is refused (429), as APNs refuses one provider's
        /// (a benchmark where two providers share the key turns it off).
        public let limitsTokenUpdates: Bool

        public init(publicKey: P256.Signing.PublicKey, keyId: String, teamId: String, topic: String?, limitsTokenUpdates: Bool = true) {
            self.publicKey = publicKey
            self.keyId = keyId
            self.teamId = teamId
            self.topic = topic
            self.limitsTokenUpdates = limitsTokenUpdates
        }
    }

    private struct State {
        var scripts: [String: [Answer]] = [:]
        var received: [Received] = []
        var keepReceived = true
        var count = 0
        var refused = 0
        /// Every provider token seen, and the `iat` of the last new one (nil once APNs refused it: a replacement is due).
        var tokens: Set<String> = []
        var lastNew: Int64?
        /// Provider tokens whose signature checked out, with their `iat` (APNs, too, verifies a token once).
        var verified: [String: Int64] = [:]
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    public let port: Int
    /// The authority whose certificate the client must trust (PEM).
    public let certificateAuthorityPEM: String
    private let expected: Expected
    /// The server's clock, in epoch seconds (tests move it with the client's).
    private let now: @Sendable () -> Int64
    private let state = Mutex(State())
    private let channel: any Channel

    private init(port: Int, authority: String, expected: Expected, now: @escaping @Sendable () -> Int64, channel: any Channel) {
        self.port = port
        certificateAuthorityPEM = authority
        self.expected = expected
        self.now = now
        self.channel = channel
    }

    /// Starts a server on a free loopback port.
    public static func start(
        expecting expected: Expected, now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }, port: Int = 0,
        keepReceived: Bool = true
    ) async throws -> APNsTestServer {
        let identity = try TestCertificates.make()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(identity.leafPEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.leafKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let box = Mutex<APNsTestServer?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)  // answers go out at once, as a server's should
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.initialSettings = [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000), HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                    ]
                    var streams = NIOHTTP2Handler.StreamConfiguration()
                    streams.targetWindowSize = 1 << 20
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: streams
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            guard let server = box.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                            try stream.pipeline.syncOperations.addHandler(StreamHandler(server: server))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        let server = APNsTestServer(
            port: channel.localAddress?.port ?? 0, authority: identity.authorityPEM, expected: expected, now: now, channel: channel)
        server.state.withLock { $0.keepReceived = keepReceived }
        box.withLock { $0 = server }
        return server
    }

    /// The URL the client is given for both environments.
    public var url: String { "https://127.0.0.1:\(port)" }

    /// Answers `token`'s next notifications with `answers`, in order, then accepts.
    public func script(_ token: String, _ answers: [Answer]) {
        state.withLock { $0.scripts[token, default: []] += answers }
    }

    /// Every notification received so far.
    public var received: [Received] { state.withLock { $0.received } }

    /// How many notifications arrived.
    public var count: Int { state.withLock { $0.count } }

    /// How many were answered with an error.
    public var refusedCount: Int { state.withLock { $0.refused } }

    /// Waits until `count` notifications arrived.
    public func waitFor(count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public func stop() async {
        try? await channel.close()
    }

    // MARK: Answering

    /// Checks a request as APNs does; answers the status, reason and headers.
    fileprivate func answer(_ headers: [String: String], body: ByteBuffer) -> (Answer, [String: String], Int64?) {
        let path = headers[":path"] ?? ""
        let token = path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)) : ""
        let (verdict, issuedAt) = check(headers, token: token, body: body)
        let answer: Answer =
            verdict
            ?? state.withLock { state in
                guard var queue = state.scripts[token], !queue.isEmpty else { return .accept }
                let next = queue.removeFirst()
                state.scripts[token] = queue
                return next
            }
        let (status, reason): (Int, String?) =
            switch answer {
            case .accept, .hold: (200, nil)
            case .reject(let status, let reason, _): (status, reason)
            }
        if case .reject(403, let reason, _) = answer, reason == "ExpiredProviderToken" || reason == "InvalidProviderToken" {
            state.withLock { $0.lastNew = nil }  // a token APNs refused may be replaced at once
        }
        let received = Received(
            token: token, headers: headers, payload: Data(body.readableBytesView), status: status, reason: reason, issuedAt: issuedAt)
        let ready = state.withLock { state in
            if state.keepReceived { state.received.append(received) }
            state.count += 1
            if status != 200 { state.refused += 1 }
            let count = state.count
            let ready = state.waiters.filter { $0.count <= count }
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
        return (answer, headers, issuedAt)
    }

    private func check(_ headers: [String: String], token: String, body: ByteBuffer) -> (Answer?, Int64?) {
        guard headers[":method"] == "POST" else { return (.reject(status: 405, reason: "MethodNotAllowed"), nil) }
        guard headers[":path"]?.hasPrefix("/3/device/") == true else { return (.reject(status: 404, reason: "BadPath"), nil) }
        guard token.count % 2 == 0, (16...200).contains(token.count), token.allSatisfy(\.isHexDigit) else {
            return (.reject(status: 400, reason: "BadDeviceToken"), nil)
        }
        guard let authorization = headers["authorization"], authorization.hasPrefix("bearer ") else {
            return (.reject(status: 403, reason: "MissingProviderToken"), nil)
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        guard let issuedAt = verify(jwt) else { return (.reject(status: 403, reason: "InvalidProviderToken"), nil) }
        if now() - issuedAt > 3600 { return (.reject(status: 403, reason: "ExpiredProviderToken"), issuedAt) }
        // A token not seen before is an update; one within 20 minutes of the last is refused.
        let tooSoon = state.withLock { state -> Bool in
            guard !state.tokens.contains(jwt) else { return false }
            if expected.limitsTokenUpdates, let last = state.lastNew, issuedAt - last < 20 * 60 { return true }
            state.tokens.insert(jwt)
            state.lastNew = issuedAt
            return false
        }
        if tooSoon { return (.reject(status: 429, reason: "TooManyProviderTokenUpdates"), issuedAt) }
        guard let topic = headers["apns-topic"] else { return (.reject(status: 400, reason: "MissingTopic"), issuedAt) }
        if let expectedTopic = expected.topic, topic != expectedTopic { return (.reject(status: 400, reason: "TopicDisallowed"), issuedAt) }
        let types: Set = [
            "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets", "controls",
        ]
        let type = headers["apns-push-type"] ?? "alert"
        guard types.contains(type) else { return (.reject(status: 400, reason: "InvalidPushType"), issuedAt) }
        if let priority = headers["apns-priority"] {
            guard ["1", "5", "10"].contains(priority), !(type == "background" && priority == "10") else {
                return (.reject(status: 400, reason: "BadPriority"), issuedAt)
            }
        }
        if let expiration = headers["apns-expiration"], Int64(expiration) == nil {
            return (.reject(status: 400, reason: "BadExpirationDate"), issuedAt)
        }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > 64 { return (.reject(status: 400, reason: "BadCollapseId"), issuedAt) }
        if let id = headers["apns-id"], UUID(uuidString: id) == nil { return (.reject(status: 400, reason: "BadMessageId"), issuedAt) }
        guard body.readableBytes > 0 else { return (.reject(status: 400, reason: "PayloadEmpty"), issuedAt) }
        if body.readableBytes > (type == "voip" ? 5120 : 4096) { return (.reject(status: 413, reason: "PayloadTooLarge"), issuedAt) }
        guard (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) is [String: Any] else {
            return (.reject(status: 400, reason: "BadPayload"), issuedAt)
        }
        return (nil, issuedAt)
    }

    /// The provider token's `iat` when its signature, `alg`, `kid` and `iss` hold.
    private func verify(_ jwt: String) -> Int64? {
        if let known = state.withLock({ $0.verified[jwt] }) { return known }
        guard let issuedAt = verifySignature(jwt) else { return nil }
        state.withLock { $0.verified[jwt] = issuedAt }
        return issuedAt
    }

    private func verifySignature(_ jwt: String) -> Int64? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.json(parts[0]), let claims = Self.json(parts[1]), let signature = Self.base64URL(parts[2]),
            header["alg"] as? String == "ES256", header["kid"] as? String == expected.keyId, claims["iss"] as? String == expected.teamId,
            let iat = claims["iat"] as? NSNumber, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            expected.publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return nil }
        // An integer, as APNs wants.
        guard iat.doubleValue == iat.doubleValue.rounded() else { return nil }
        return iat.int64Value
    }

    private static func base64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    private static func json(_ text: Substring) -> [String: Any]? {
        base64URL(text).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}

/// One HTTP/2 stream, frame by frame: collects the request's headers and body, answers as APNs does — a 200 is one
/// HEADERS frame that ends the stream; an error is HEADERS, then the JSON reason in a DATA frame that ends it.
private final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let server: APNsTestServer
    private var headers: [String: String] = [:]
    private var body = ByteBuffer()

    init(server: APNsTestServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let ended: Bool
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            for (name, value, _) in frame.headers { headers[name.lowercased()] = value }
            ended = frame.endStream
        case .data(let frame):
            if case .byteBuffer(var chunk) = frame.data { body.writeBuffer(&chunk) }
            ended = frame.endStream
        default: return
        }
        guard ended else { return }
        let (answer, _, _) = server.answer(headers, body: body)
        let id = headers["apns-id"] ?? UUID().uuidString.lowercased()
        switch answer {
        case .hold: return
        case .accept:
            let head = HPACKHeaders([(":status", "200"), ("apns-id", id)])
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: head, endStream: true))), promise: nil)
        case .reject(let status, let reason, let timestamp):
            let head = HPACKHeaders([(":status", String(status)), ("apns-id", id), ("content-type", "application/json")])
            let json = timestamp.map { #"{"reason":"\#(reason)","timestamp":\#($0)}"# } ?? #"{"reason":"\#(reason)"}"#
            context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
            let payload = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(context.channel.allocator.buffer(string: json)), endStream: true))
            context.writeAndFlush(wrapOutboundOut(payload), promise: nil)
        }
    }
}
