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
struct EventStreamController {
    let feed: ChangeFeed
    let live: LiveDocuments
    let database: KizunaDatabase
    let keepAliveInterval: Duration

    /// The data of one event.
    struct Event: Codable, Sendable {
        var kind: String
        var version: Int64
        var seq: Int64
    }

    /// The data of the snapshot event.
    struct Snapshot: Codable, Sendable {
        var config: Int64
        var gate: Int64
        var seq: Int64
    }

    static let kinds = [DocumentKind.config.rawValue, DocumentKind.gate.rawValue]

    func addRoutes(to routes: RouteBuilder) {
        routes.get("/apps/{app}/events") { request, context in
            let app = try context.parameters.require("app")
            let resumeFrom = try Self.lastEventID(request)
            let subscription = await feed.subscribe()
            // Replay before going live: the subscription holds every change after its position, so the log
            // covers (resumeFrom, position] and the stream the rest, with nothing missed or doubled.
            var opening: [ByteBuffer] = [ByteBuffer(string: "retry: 2000\n\n")]
            let oldest = try await database.withSession { try await ChangeLog.oldestSeq(on: $0) }
            if let resumeFrom, resumeFrom >= (oldest ?? 1) - 1 {
                var after = resumeFrom
                while after < subscription.position {
                    let cursor = after
                    let batch = try await database.withSession {
                        try await ChangeLog.read(after: cursor, limit: 500, kinds: Self.kinds, entityId: app, on: $0)
                    }.filter { $0.seq <= subscription.position }
                    opening += batch.map(Self.frame)
                    guard let last = batch.last, batch.count == 500 else { break }
                    after = last.seq
                }
            } else {
                let entry = try await live.entry(app)
                let snapshot = Snapshot(config: entry.configVersion, gate: entry.gateVersion, seq: subscription.position)
                opening.append(Self.frame(event: "snapshot", id: subscription.position, data: snapshot))
            }
            let changes = subscription.changes.filter { $0.entityId == app && Self.kinds.contains($0.kind) }
            let interval = keepAliveInterval
            let preamble = opening
            let body = ResponseBody { writer in
                try await writer.write(contentsOf: preamble)
                let (items, input) = AsyncStream.makeStream(of: ByteBuffer.self)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await change in changes { input.yield(Self.frame(change)) }
                        input.finish()
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            try await Task.sleep(for: interval)
                            input.yield(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                    for await item in items.cancelOnGracefulShutdown() { try await writer.write(item) }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache", .init("X-Accel-Buffering")!: "no"],
                body: body
            )
        }
    }

    private static func lastEventID(_ request: Request) throws(KizunaError) -> Int64? {
        guard let text = request.headers[.init("Last-Event-ID")!] ?? request.uri.queryParameters["after"].map(String.init) else { return nil }
        guard let seq = Int64(text), seq >= 0 else {
            throw KizunaError(.badRequest, "Last-Event-ID (or ?after) must be the id of an event this stream sent.", field: "Last-Event-ID")
        }
        return seq
    }

    private static let encoder: JSONEncoder = {
        let encoder = WireFormat.encoder()
        encoder.outputFormatting.insert(.sortedKeys)
        return encoder
    }()

    static func frame(_ change: ChangeRecord) -> ByteBuffer {
        frame(event: change.kind, id: change.seq, data: Event(kind: change.kind, version: change.version, seq: change.seq))
    }

    static func frame(event: String, id: Int64, data: some Encodable) -> ByteBuffer {
        let json = (try? encoder.encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ByteBuffer(string: "event: \(event)\nid: \(id)\ndata: \(json)\n\n")
    }
}
