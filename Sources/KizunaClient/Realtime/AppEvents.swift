import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Something the server announced on an app's event stream.
public enum AppEvent: Sendable, Hashable {
    /// The current versions, sent when a stream opens without a position to resume from.
    case snapshot(config: Int64, gate: Int64)
    /// A config template version was published (or rolled back to).
    case config(version: Int64)
    /// A gate policy version was published (or rolled back to).
    case gate(version: Int64)
}

/// The app's realtime events (`GET /v1/apps/{app}/events`, Server-Sent Events), reconnecting for as long as it
/// is iterated.
///
/// After a dropped connection it reconnects with `Last-Event-ID`, so the server replays what was missed; it waits
/// the delay the server asked for, doubling on each failure in a row up to a minute, with jitter so that a
/// restarted server is not hit by every device at once. It ends when the iterating task is cancelled, and throws
/// only for errors that retrying cannot fix (`not_found`, `unauthorized`, `forbidden`, `bad_request`).
public struct AppEvents: AsyncSequence, Sendable {
    public typealias Element = AppEvent

    let app: KizunaApp
    let lastEventID: String

    public func makeAsyncIterator() -> Iterator {
        Iterator(app: app, parser: ServerSentEventParser(lastEventID: lastEventID))
    }

    /// Iterates ``AppEvents``.
    public struct Iterator: AsyncIteratorProtocol {
        let app: KizunaApp
        var parser: ServerSentEventParser
        var connection: AsyncThrowingStream<Data, any Error>.AsyncIterator?
        var ready: [AppEvent] = []
        var failures = 0

        init(app: KizunaApp, parser: ServerSentEventParser) {
            self.app = app
            self.parser = parser
        }

        public mutating func next() async throws -> AppEvent? {
            while !Task.isCancelled {
                if !ready.isEmpty { return ready.removeFirst() }
                if connection == nil { connection = try open().makeAsyncIterator() }
                let chunk: Data?
                do {
                    chunk = try await connection?.next()
                } catch let error as KizunaError where Self.isFatal(error) {
                    throw error
                } catch {
                    // A broken connection: wait and resume from the last event id.
                    guard await reconnectAfterDelay(failed: true) else { return nil }
                    continue
                }
                guard let chunk else {
                    // The server ended the stream (a restart or a deploy): resume from the last event id.
                    guard await reconnectAfterDelay(failed: false) else { return nil }
                    continue
                }
                for event in parser.receive(chunk) {
                    if let decoded = Self.decode(event) { ready.append(decoded) }
                }
                failures = 0
            }
            return nil
        }

        private func open() throws(KizunaError) -> AsyncThrowingStream<Data, any Error> {
            var request = try app.http.makeRequest("GET", app.path + "/events", headers: ["Accept": "text/event-stream"])
            if !parser.lastEventID.isEmpty { request.setValue(parser.lastEventID, forHTTPHeaderField: "Last-Event-ID") }
            request.timeoutInterval = Self.idleTimeout.seconds
            return EventStreamConnection.open(request, idleTimeout: Self.idleTimeout)
        }

        /// Drops the connection and waits before the next one; `false` when the task was cancelled meanwhile.
        private mutating func reconnectAfterDelay(failed: Bool) async -> Bool {
            connection = nil
            parser.reset()
            failures = failed ? failures + 1 : 0
            let base = Double(parser.retry ?? 2000) / 1000
            let delay = Swift.min(base * pow(2, Double(Swift.max(failures - 1, 0))), 60) * Double.random(in: 0.8...1.2)
            return (try? await Task.sleep(for: .seconds(delay))) != nil
        }

        static let idleTimeout: Duration = .seconds(60)

        static func isFatal(_ error: KizunaError) -> Bool {
            [.notFound, .unauthorized, .forbidden, .badRequest].contains(error.code)
        }

        /// The typed event, or `nil` for an event type this SDK does not know (a newer server's).
        static func decode(_ event: ServerSentEvent) -> AppEvent? {
            let data = Data(event.data.utf8)
            if event.event == "snapshot" {
                return (try? decoder.decode(EventSnapshot.self, from: data)).map { .snapshot(config: $0.config, gate: $0.gate) }
            }
            switch try? decoder.decode(PublishEvent.self, from: data) {
            case let published? where published.kind == .config: return .config(version: published.version)
            case let published? where published.kind == .gate: return .gate(version: published.version)
            default: return nil
            }
        }

        private static let decoder = JSONDecoder()
    }
}

extension KizunaApp {
    /// The app's realtime events, reconnecting while iterated.
    /// - Parameter lastEventID: Resume after this event id (from ``ServerSentEvent/lastEventID``); empty starts
    ///   with a ``AppEvent/snapshot(config:gate:)``.
    public func events(after lastEventID: String = "") -> AppEvents {
        AppEvents(app: self, lastEventID: lastEventID)
    }
}
