import Foundation
import KizunaCore
import NIOCore
import NIOHPACK
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
    package var batchSize = 5000
    /// Requests in flight at once per instance (streams on the HTTP/2 connections).
    package var concurrency = 1000
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

/// Sends notifications to APNs over HTTP/2: one ``APNsConnection`` (one multiplexed TLS connection) per app and
/// environment, opened when first needed and kept; provider tokens from ``APNsProviderTokens``. A token APNs refuses
/// as expired or invalid is replaced and the notification sent once more.
final class APNsClient: Sendable {
    let settings: PushSettings
    let tokens: APNsProviderTokens
    private let connections = Mutex<[String: APNsConnection]>([:])
    private let tls: NIOSSLContext

    init(settings: PushSettings, tokens: APNsProviderTokens) throws {
        self.settings = settings
        self.tokens = tokens
        var tls = TLSConfiguration.makeClientConfiguration()
        if let pem = settings.trustRootsPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
        }
        tls.applicationProtocols = ["h2"]
        self.tls = try NIOSSLContext(configuration: tls)
    }

    /// Sends each payload to its token in `environment` with `credentials`, over the app's connection, and tells
    /// `answered` each one's outcome as it comes — a transport failure (no connection, a reset, a timeout) for those
    /// to retry later. A notification refused for its provider token is sent once more with a new one.
    func send(
        _ items: [(payload: APNsPayload, token: String)], environment: APNsEnvironment, app: String, credentials: APNsCredentials,
        answered: @escaping @Sendable (Int, Result<APNsOutcome, any Error>) -> Void
    ) async {
        do {
            let connection = try connection(app: app, environment: environment)
            let bearer = try await tokens.token(for: credentials)
            try await connection.send(requests(items, bearer: bearer, credentials: credentials, host: connection.host)) { index, answer in
                let outcome = answer.map(Self.outcome)
                guard case .success(.refused(403, let reason, _)) = outcome, reason == "ExpiredProviderToken" || reason == "InvalidProviderToken"
                else { return answered(index, outcome) }
                Task {
                    await self.tokens.refused(bearer, for: credentials)
                    answered(index, await self.sendAgain(items[index], credentials: credentials, on: connection))
                }
            }
        } catch {
            for index in items.indices { answered(index, .failure(error)) }
        }
    }

    /// One notification sent with a new provider token, after APNs refused the last.
    private func sendAgain(
        _ item: (payload: APNsPayload, token: String), credentials: APNsCredentials, on connection: APNsConnection
    ) async
        -> Result<APNsOutcome, any Error>
    {
        do {
            let bearer = try await tokens.token(for: credentials)
            let requests = requests([item], bearer: bearer, credentials: credentials, host: connection.host)
            let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Result<APNsConnection.Answer, any Error>, Never>) in
                Task {
                    do {
                        try await connection.send(requests) { _, answer in continuation.resume(returning: answer) }
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
            return answer.map(Self.outcome)
        } catch {
            return .failure(error)
        }
    }

    private func requests(
        _ items: [(payload: APNsPayload, token: String)], bearer: String, credentials: APNsCredentials, host: String
    ) -> [(headers: HPACKHeaders, body: ByteBuffer)] {
        // apns-id: one random UUID per call, its last 12 hex digits counting the notifications — unique, and cheap.
        let base = UUID().uuidString.lowercased().dropLast(12)
        return items.enumerated().map { index, item in
            let counter = String(index, radix: 16)
            var headers = HPACKHeaders([
                (":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(item.token)"), (":authority", host),
                ("authorization", "bearer \(bearer)"), ("apns-topic", credentials.topic), ("apns-push-type", item.payload.pushType.rawValue),
                ("apns-priority", String(item.payload.priority)), ("apns-expiration", String(item.payload.expiration ?? 0)),
                ("content-type", "application/json"),
            ])
            // Never indexed: each id is used once and would only push the token out of HPACK's table.
            headers.add(name: "apns-id", value: base + String(repeating: "0", count: 12 - counter.count) + counter, indexing: .nonIndexable)
            if let collapse = item.payload.collapseId { headers.add(name: "apns-collapse-id", value: collapse) }
            return (headers, ByteBuffer(bytes: item.payload.bytes))
        }
    }

    /// An answer as an outcome: accepted, or refused with APNs' reason (and a 410's timestamp).
    private static func outcome(_ answer: APNsConnection.Answer) -> APNsOutcome {
        if answer.status == 200 { return .accepted(apnsId: answer.headers.first(name: "apns-id")) }
        let refusal = try? JSONDecoder().decode(Refusal.self, from: Data(answer.body.readableBytesView))
        return .refused(status: answer.status, reason: refusal?.reason ?? "HTTP\(answer.status)", timestamp: refusal?.timestamp)
    }

    private struct Refusal: Decodable {
        let reason: String
        let timestamp: Int64?
    }

    /// The connection for `app` in `environment`, made once.
    private func connection(app: String, environment: APNsEnvironment) throws -> APNsConnection {
        try connections.withLock { connections in
            let key = "\(app)/\(environment.rawValue)"
            if let connection = connections[key] { return connection }
            let connection = try APNsConnection(url: settings.url(environment), tls: tls)
            connections[key] = connection
            return connection
        }
    }

    /// Closes every connection.
    func shutdown() async {
        let all = connections.withLock { connections in
            defer { connections = [:] }
            return Array(connections.values)
        }
        for connection in all { await connection.shutdown() }
    }
}
