import Foundation
import KizunaCore

extension DataClient {
    /// Subscribes to a model's changes over the data API's WebSocket, decoding each change's root field `field` into
    /// the app's type.
    ///
    /// ```swift
    /// struct Message: Codable, Sendable {
    ///     var id: String
    ///     var text: String
    /// }
    ///
    /// func printMessages(_ app: KizunaApp) async throws {
    ///     let document = "subscription($since: String) { onCreateMessage(since: $since) { id text } }"
    ///     for try await event in app.data.subscribe(document, field: "onCreateMessage", as: Message.self) {
    ///         switch event {
    ///         case .value(let message, _): print(message.text)
    ///         case .resync: print("Some messages may be missing: sync")
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// Every subscription of the app shares one socket, opened with the first and closed after the last, and sent the
    /// signed-in session's token. A socket that drops (no network, the server restarting, the server closing a
    /// connection that fell behind) is reopened with backoff and jitter, and the subscription resumes after the last
    /// change it delivered when its document declares `$since` — nothing missed, nothing twice. When it cannot resume
    /// (no `$since`, or the server's change log no longer goes back that far) it yields ``SubscriptionEvent/resync``
    /// and goes on live. The stream ends when the consumer stops iterating, and throws ``DataError`` when the server
    /// ends the subscription with errors or the connection cannot go on (a session that ended, a code a retry cannot
    /// fix). ``connectionStates()`` tells the app where the socket is.
    public func subscribe<Value: Decodable & Sendable>(
        _ document: String, variables: [String: JSONValue] = [:], operationName: String? = nil, field: String, as type: Value.Type = Value.self
    ) -> AsyncThrowingStream<SubscriptionEvent<Value>, any Error> {
        let payload = GraphQLWSSubscribePayload(query: document, variables: variables.isEmpty ? nil : variables, operationName: operationName)
        let client = realtime.client(apiKey: apiKey)
        let (events, continuation) = AsyncThrowingStream.makeStream(of: SubscriptionEvent<Value>.self)
        let forwarding = Task {
            do {
                for try await event in await client.subscribe(payload) {
                    switch event {
                    case .resync:
                        continuation.yield(.resync)
                    case .value(let payload, let seq):
                        let value = payload["data"]?[field] ?? .null
                        do {
                            continuation.yield(.value(try KizunaHTTPClient.decoder.decode(Value.self, from: Data(value.jsonBytes)), seq: seq))
                        } catch {
                            continuation.finish(throwing: DataError.decoding("The value of \(field) does not decode as \(Value.self): \(error)"))
                            return
                        }
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in forwarding.cancel() }
        return events
    }

    /// The data API's WebSocket's states from now on, starting with the current one: `connecting`, `connected`,
    /// `disconnected` (a reconnect is due), `idle` (no subscription needs it).
    public func connectionStates() async -> AsyncStream<DataConnectionState> {
        await realtime.client(apiKey: apiKey).states()
    }
}
