import AsyncHTTPClient
import Foundation
import KizunaCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// Where APNs is, and what the sender may do: Apple's hosts by default; tests point them at a local APNs and tell
/// the client to trust its certificate, and nothing else differs.
public struct PushSettings: Sendable {
    /// `https://api.push.apple.com`.
    public var productionURL = "https://api.push.apple.com"
    /// `https://api.sandbox.push.apple.com`.
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// Certificates (PEM) trusted for the APNs hosts besides the system's: a local APNs, or a TLS-inspecting proxy.
    public var trustRootsPEM: String?
    /// How often the sender looks for due jobs without being woken.
    package var pollInterval: Duration = .seconds(1)
    /// How long a claimed delivery is held before another instance may send it (an instance that died mid-send).
    package var lease: Duration = .seconds(60)
    /// Deliveries claimed at once.
    package var batchSize = 500
    /// Requests in flight at once per instance (streams on the HTTP/2 connections).
    package var concurrency = 256
    /// Tries per device before it is failed with `TooManyAttempts`.
    package var maxAttempts = 8
    /// The time, in epoch milliseconds (tests move it forward).
    package var now: @Sendable () -> Int64 = { EpochMillis.now }

    public init() {}

    func url(_ environment: APNsEnvironment) -> String { environment == .sandbox ? sandboxURL : productionURL }
}

/// What APNs answered one notification.
enum APNsOutcome: Sendable, Hashable {
    /// 200, with the `apns-id` it gave the notification.
    case accepted(apnsId: String?)
    /// Refused: the status, APNs' reason, and for 410 when the token stopped working (epoch milliseconds).
    case refused(status: Int, reason: String, timestamp: Int64?)
}

/// Sends notifications to APNs over HTTP/2: one client (one multiplexed TLS connection) per app and environment,
/// opened when first needed and kept; provider tokens from ``APNsProviderTokens``. A token APNs refuses as expired or
/// invalid is replaced and the notification sent once more.
final class APNsClient: Sendable {
    let settings: PushSettings
    let tokens: APNsProviderTokens
    private let clients = Mutex<[String: HTTPClient]>([:])
    private let tls: TLSConfiguration

    init(settings: PushSettings, tokens: APNsProviderTokens) throws {
        self.settings = settings
        self.tokens = tokens
        var tls = TLSConfiguration.makeClientConfiguration()
        if let pem = settings.trustRootsPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
        }
        tls.applicationProtocols = ["h2"]
        self.tls = tls
    }

    /// Sends `payload` to `token` in `environment` with `credentials`.
    /// - Throws: A transport error (no connection, a reset, a timeout): the caller retries later.
    func send(
        _ payload: APNsPayload, to token: String, environment: APNsEnvironment, app: String, credentials: APNsCredentials
    ) async throws
        -> APNsOutcome
    {
        let client = client(app: app, environment: environment)
        var outcome = try await send(payload, to: token, environment: environment, credentials: credentials, on: client)
        if case .refused(403, let reason, _) = outcome, reason == "ExpiredProviderToken" || reason == "InvalidProviderToken" {
            outcome = try await send(payload, to: token, environment: environment, credentials: credentials, on: client)
        }
        return outcome
    }

    private func send(
        _ payload: APNsPayload, to token: String, environment: APNsEnvironment, credentials: APNsCredentials, on client: HTTPClient
    ) async throws -> APNsOutcome {
        let bearer = try await tokens.token(for: credentials)
        var request = HTTPClientRequest(url: "\(settings.url(environment))/3/device/\(token)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(bearer)")
        request.headers.add(name: "apns-topic", value: credentials.topic)
        request.headers.add(name: "apns-push-type", value: payload.pushType.rawValue)
        request.headers.add(name: "apns-priority", value: String(payload.priority))
        request.headers.add(name: "apns-expiration", value: String(payload.expiration ?? 0))
        request.headers.add(name: "apns-id", value: UUID().uuidString.lowercased())
        if let collapse = payload.collapseId { request.headers.add(name: "apns-collapse-id", value: collapse) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: payload.bytes))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        if response.status == .ok { return .accepted(apnsId: response.headers.first(name: "apns-id")) }
        let answer = try? JSONDecoder().decode(Refusal.self, from: Data(body.readableBytesView))
        let reason = answer?.reason ?? "HTTP\(response.status.code)"
        if reason == "ExpiredProviderToken" || reason == "InvalidProviderToken" { await tokens.refused(bearer, for: credentials) }
        return .refused(status: Int(response.status.code), reason: reason, timestamp: answer?.timestamp)
    }

    private struct Refusal: Decodable {
        let reason: String
        let timestamp: Int64?
    }

    /// The client for `app` in `environment`, made once.
    private func client(app: String, environment: APNsEnvironment) -> HTTPClient {
        clients.withLock { clients in
            let key = "\(app)/\(environment.rawValue)"
            if let client = clients[key] { return client }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, timeout: .init(connect: .seconds(10), read: .seconds(30)),
                connectionPool: .init(idleTimeout: .hours(1), concurrentHTTP1ConnectionsPerHostSoftLimit: 1))
            configuration.httpVersion = .automatic
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Closes every connection.
    func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { try? await client.shutdown() }
    }
}
