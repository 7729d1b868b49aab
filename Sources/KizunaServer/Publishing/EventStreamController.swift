import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore
import ServiceLifecycle

/// `GET /v1/apps/{app}/events`: a Server-Sent Events stream of the app's config and gate publishes.
///
/// Each event is `event: config|gate`, `id: <seq>`, `data: {"kind","version","seq"}`. A client that reconnects
/// with `Last-Event-ID` (or `?after=`) is first replayed every change after it from the `changes` log; a client
/// without one first gets `event: snapshot` with the current versions. A comment line every
/// ``keepAliveInterval`` keeps proxies and mobile networks from dropping an idle stream.
struct EventStreamController: Sendable {
    let feed: ChangeFeed
    let live: LiveDocuments
    let keepAliveInterval: Duration

    /// The kinds a device hears of; publishing the data schema is an operator's business.
    static let kinds = DocumentKind.servedToDevices.map(\.rawValue)

    func addRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        v1.get("/apps/{app}/events", use: events)
    }

    @Sendable func events(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let resumeFrom = try Self.lastEventID(request)
        _ = try await live.versions(app)  // 404 for an unknown app, before the stream opens
        let body = ResponseBody { writer in
            // The subscription lives inside the body, so it ends with the response however that ends.
            try await feed.withSubscription { subscription in
                let frames = try await openingFrames(app: app, resumeFrom: resumeFrom, position: subscription.position)
                try await writer.write(contentsOf: frames)
                let changes = subscription.changes.compactMap { $0.entityId == app ? Self.event($0) : nil }
                let (items, input) = AsyncStream.makeStream(of: ByteBuffer.self)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await event in changes { input.yield(Self.frame(event)) }
                        input.finish()
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            try await Task.sleep(for: keepAliveInterval)
                            input.yield(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                    for await item in items.cancelOnGracefulShutdown() { try await writer.write(item) }
                    group.cancelAll()
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache", .accelBuffering: "no"],
            body: body
        )
    }

    /// What a stream starts with, before the changes its subscription delivers.
    enum StreamOpening: Equatable, Sendable {
        /// `event: snapshot` with the current versions: the client gave no resume id, or the log no longer holds
        /// every change after it.
        case snapshot
        /// The app's changes in `(after, through]`, read from the log.
        case replay(after: Int64, through: Int64)
        /// Nothing: the client has already seen every change up to the subscription's position.
        case nothing
    }

    /// Chooses how a stream opens for a client that resumes from `resumeFrom` (its `Last-Event-ID`), when the log
    /// holds the changes from `oldest` (`nil` when it is empty) and the subscription delivers every change after
    /// `position`.
    ///
    /// A replay needs every change in `(resumeFrom, position]` still in the log, that is `oldest <= resumeFrom + 1`;
    /// an empty log holds none of them. A client at or past `position` (another instance may have read further) has
    /// nothing to catch up on.
    static func opening(resumeFrom: Int64?, oldest: Int64?, position: Int64) -> StreamOpening {
        guard let resumeFrom else { return .snapshot }
        guard resumeFrom < position else { return .nothing }
        guard let oldest, resumeFrom >= oldest - 1 else { return .snapshot }
        return .replay(after: resumeFrom, through: position)
    }

    /// The frames the stream starts with, as ``opening(resumeFrom:oldest:position:)`` chooses.
    ///
    /// The subscription already holds every change after `position`, so nothing is missed or sent twice.
    private func openingFrames(app: String, resumeFrom: Int64?, position: Int64) async throws -> [ByteBuffer] {
        let retry = ByteBuffer(string: "retry: 2000\n\n")
        let oldest = try await feed.oldestKept()
        switch Self.opening(resumeFrom: resumeFrom, oldest: oldest, position: position) {
        case .snapshot:
            // Loaded after subscribing: the feed drops cached entries before it moves its position.
            let versions = try await live.versions(app)
            let snapshot = EventSnapshot(config: versions.config, gate: versions.gate, seq: position)
            return [retry, Self.frame(event: "snapshot", id: position, data: snapshot)]
        case .replay(let after, let through):
            let changes = try await feed.replay(after: after, through: through, kinds: Self.kinds, entityId: app)
            return [retry] + changes.compactMap(Self.event).map(Self.frame)
        case .nothing:
            return [retry]
        }
    }

    private static func lastEventID(_ request: Request) throws(KizunaError) -> Int64? {
        guard let text = request.headers[.lastEventID] ?? request.uri.queryParameters["after"].map(String.init) else { return nil }
        guard let seq = Int64(text), seq >= 0 else {
            throw KizunaError(.badRequest, "Last-Event-ID (or ?after) must be the id of an event this stream sent.", field: "Last-Event-ID")
        }
        return seq
    }

    private static let encoder = WireFormat.canonicalEncoder()

    /// The event a change of the log stands for, or `nil` for changes of other kinds.
    static func event(_ change: ChangeRecord) -> PublishEvent? {
        DocumentKind(rawValue: change.kind).flatMap { kind in
            DocumentKind.servedToDevices.contains(kind) ? PublishEvent(kind: kind, version: change.version, seq: change.seq) : nil
        }
    }

    static func frame(_ event: PublishEvent) -> ByteBuffer {
        frame(event: event.kind.rawValue, id: event.seq, data: event)
    }

    static func frame(event: String, id: Int64, data: some Encodable) -> ByteBuffer {
        let json = (try? encoder.encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ByteBuffer(string: "event: \(event)\nid: \(id)\ndata: \(json)\n\n")
    }
}
