import Foundation
import KizunaCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Real TLS handshakes with a server, the client constrained the way an App Transport Security configuration
/// constrains `URLSession`: the oldest TLS version it offers, and ATS's cipher suites with or without the ones that
/// lack forward secrecy. Each handshake records what the server chose, read from its ServerHello as it passes, the
/// certificate chain it presented (unverified: judging it is `CertificateInspection`'s work), and, once the handshake
/// is done, the head of its answer to a GET, for redirects.
struct TLSProbe: Sendable {
    /// The name connected to: the SNI and the `Host` header.
    var host: String
    var port: Int
    /// Where to connect instead of resolving `host` (`--resolve`).
    var address: String?
    /// The path asked for once a handshake succeeds.
    var path: String = "/"
    var timeout: TimeAmount = .seconds(10)

    /// ATS's forward-secret suites for TLS 1.0–1.2, in its order, by their OpenSSL names. Two of ATS's eleven
    /// (ECDHE-ECDSA- and ECDHE-RSA-AES256-SHA384, 0xC024 and 0xC028) are not in BoringSSL, so a server offering
    /// only those is reported as failing; no server seen in practice does.
    static let forwardSecretSuites = [
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES128-SHA256",
        "ECDHE-ECDSA-AES128-SHA", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-SHA256",
        "ECDHE-RSA-AES128-SHA",
    ]
    /// What `NSExceptionRequiresForwardSecrecy = NO` adds: RSA key exchange with AES (BoringSSL lacks the two
    /// CBC-SHA256 ones, 0x003C and 0x003D).
    static let plainRSASuites = ["AES256-GCM-SHA384", "AES128-GCM-SHA256", "AES256-SHA", "AES128-SHA"]

    /// One handshake's outcome.
    struct Outcome: Sendable {
        var version: ATSTLSVersion?
        var cipherSuite: UInt16?
        /// The certificates the server sent, DER, leaf first.
        var chain: [[UInt8]] = []
        /// Why the handshake failed, for a person; `nil` when it succeeded.
        var failure: String?
        /// The alert the server refused with.
        var alert: String?
        /// Set when the server could not be reached at all: no TCP connection, or no answer in time.
        var unreachable = false
        /// The answer to the GET: its status and `Location`.
        var status: Int?
        var location: String?
    }

    /// One handshake offering TLS `minimum` to 1.3 and ATS's suites, forward-secret only when `forwardSecrecy`.
    func handshake(minimum: ATSTLSVersion, forwardSecrecy: Bool) async -> Outcome {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = minimum.nio
        configuration.maximumTLSVersion = .tlsv13
        configuration.cipherSuites = (Self.forwardSecretSuites + (forwardSecrecy ? [] : Self.plainRSASuites)).joined(separator: ":")
        // The chain is judged after, against the bundle and --ca-file; here every chain is taken, so a handshake
        // fails only for the version and suite it tests.
        configuration.certificateVerification = .noHostnameVerification
        let recorded = NIOLockedValueBox(Recorded())
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let done = loop.makePromise(of: Void.self)
        do {
            let context = try NIOSSLContext(configuration: configuration)
            let serverName = Self.isAddress(host) ? nil : host
            let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: kizuna-doctor\r\nAccept: */*\r\nConnection: close\r\n\r\n"
            let channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let tls = try NIOSSLClientHandler(context: context, serverHostname: serverName) { certificates, verified in
                            recorded.withLockedValue { $0.chain = certificates.compactMap { try? $0.toDERBytes() } }
                            verified.succeed(.certificateVerified)
                        }
                        try channel.pipeline.syncOperations.addHandlers([
                            HelloTap(recorded: recorded), tls, AnswerReader(request: request, recorded: recorded, done: done),
                        ])
                    }
                }
                .connect(host: address ?? host, port: port).get()
            let deadline = channel.eventLoop.scheduleTask(in: timeout) { done.fail(ChannelError.connectTimeout(timeout)) }
            defer { deadline.cancel() }
            do {
                try await done.futureResult.get()
            } catch {
                recorded.withLockedValue { $0.error = $0.error ?? error }
            }
            try? await channel.close()
            return recorded.withLockedValue { $0.outcome() }
        } catch {
            done.fail(error)
            return Outcome(failure: "could not connect to \(address ?? host):\(port): \(error)", unreachable: true)
        }
    }

    static func isAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }
}

extension ATSTLSVersion {
    var nio: TLSVersion {
        switch self {
        case .tls10: .tlsv1
        case .tls11: .tlsv11
        case .tls12: .tlsv12
        case .tls13: .tlsv13
        }
    }

    init?(_ version: TLSVersion) {
        switch version {
        case .tlsv1: self = .tls10
        case .tlsv11: self = .tls11
        case .tlsv12: self = .tls12
        case .tlsv13: self = .tls13
        }
    }
}

/// What a probe's handlers saw, shared with the task waiting on them.
private struct Recorded: Sendable {
    /// The server's bytes before decryption, as far as its first encrypted record.
    var wire = ByteBuffer()
    var wireDone = false
    var chain: [[UInt8]] = []
    var handshakeDone = false
    var version: ATSTLSVersion?
    var answer = ByteBuffer()
    var error: (any Error)?

    func outcome() -> TLSProbe.Outcome {
        let hello = ServerHelloReader(wire)
        var outcome = TLSProbe.Outcome(version: version, cipherSuite: hello.cipherSuite, chain: chain)
        if !handshakeDone {
            outcome.alert = hello.alert
            if let alert = hello.alert {
                outcome.failure = "the server refused the handshake with the alert \(alert)"
            } else if let error {
                outcome.failure = "the handshake failed: \(error)"
            } else {
                outcome.failure = "the server closed the connection during the handshake"
            }
            if let error = error as? ChannelError, case .connectTimeout = error, hello.cipherSuite == nil { outcome.unreachable = true }
        }
        let head = String(decoding: answer.readableBytesView, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        if let statusLine = head.first, statusLine.hasPrefix("HTTP/") {
            outcome.status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            outcome.location = head.dropFirst().prefix { !$0.isEmpty }
                .first { $0.lowercased().hasPrefix("location:") }
                .map { $0.dropFirst("location:".count).trimmingCharacters(in: .whitespaces) }
        }
        return outcome
    }
}

/// Copies the server's bytes, before `NIOSSLClientHandler` decrypts them, until the first encrypted record: the
/// ServerHello says which suite the server chose, and an alert why it refused.
private final class HelloTap: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let recorded: NIOLockedValueBox<Recorded>

    init(recorded: NIOLockedValueBox<Recorded>) { self.recorded = recorded }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        recorded.withLockedValue { recorded in
            guard !recorded.wireDone, recorded.wire.readableBytes < 65_536 else { return }
            recorded.wire.writeBuffer(&bytes)
            recorded.wireDone = ServerHelloReader.reachedEncryption(recorded.wire)
        }
        context.fireChannelRead(data)
    }
}

/// Waits for the handshake, then asks for the path and keeps the answer's head.
private final class AnswerReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let request: String
    let recorded: NIOLockedValueBox<Recorded>
    let done: EventLoopPromise<Void>

    init(request: String, recorded: NIOLockedValueBox<Recorded>, done: EventLoopPromise<Void>) {
        self.request = request
        self.recorded = recorded
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            let version = try? context.pipeline.syncOperations.nioSSL_tlsVersion()
            recorded.withLockedValue {
                $0.handshakeDone = true
                $0.version = version.flatMap(ATSTLSVersion.init)
            }
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: request)), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        let complete = recorded.withLockedValue { recorded in
            recorded.answer.writeBuffer(&bytes)
            return recorded.answer.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) != nil || recorded.answer.readableBytes > 32_768
        }
        if complete { done.succeed() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        recorded.withLockedValue { $0.error = $0.error ?? error }
        done.succeed()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed()
        context.fireChannelInactive()
    }
}
