import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import SQLKit
import Testing

@testable import KizunaServer

/// The data API's WebSocket, `GET /v1/apps/{app}/graphql` with `graphql-transport-ws`, over real loopback sockets:
/// the handshake, the protocol's close codes, and queries and mutations answered with `next` and `complete`.
/// Subscriptions are in `GraphQLWSSubscriptionTests`.
@Suite("GraphQL over WebSocket")
struct GraphQLWSEndpointTests {
    typealias User = (id: String, token: String)

    /// A server with the shop app, ``DataMutationTests/schema`` published, and two users.
    static func start(
        _ backend: TestBackend, configure: @escaping @Sendable (inout KizunaConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (TestServer, _ alice: User, _ bob: User) async throws -> Void
    ) async throws {
        let setUp: @Sendable (inout KizunaConfiguration) -> Void = { configuration in
            configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
            configure(&configuration)
        }
        try await withTestServer(backend, configure: setUp) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, DataMutationTests.schema).status == .ok)
            let alice = try await GraphQLEndpointTests.signUp(server, "alice@example.com")
            let bob = try await GraphQLEndpointTests.signUp(server, "bob@example.com")
            try await body(server, alice, bob)
        }
    }

    static func subscribe(_ id: String, _ query: String, variables: [String: JSONValue]? = nil) -> GraphQLWSMessage {
        .subscribe(id: id, payload: GraphQLWSSubscribePayload(query: query, variables: variables))
    }

    /// An upgrade request for `path`, as a browser sends it, on a new raw connection.
    static func upgrading(_ port: Int, path: String, subprotocols: String?) async throws -> RawConnection {
        let connection = try await RawConnection.open(port: port)
        var request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocols { request += "Sec-WebSocket-Protocol: \(subprotocols)\r\n" }
        try await connection.send(request + "\r\n")
        return connection
    }

    /// The answer's head to an upgrade request, as a browser sends it.
    static func handshake(_ port: Int, path: String, subprotocols: String?) async throws -> String {
        let connection = try await upgrading(port, path: path, subprotocols: subprotocols)
        let answer = try await connection.readResponse()
        await connection.close()
        return answer
    }

    /// The head of the answer to an upgrade request, and the code and reason of the close frame that follows it.
    static func closeAfterUpgrade(_ port: Int, subprotocols: String?) async throws -> (head: String, code: UInt16, reason: String) {
        let connection = try await upgrading(port, path: "/v1/apps/shop/graphql", subprotocols: subprotocols)
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        func headEnd(_ bytes: [UInt8]) -> Int? {
            guard bytes.count >= 4 else { return nil }
            return (0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == terminator }.map { $0 + 4 }
        }
        // A server frame is unmasked: 0x88 (FIN, close), a length under 126, then the code and the reason.
        let bytes = try await connection.readBytes { bytes in
            guard let end = headEnd(bytes), bytes.count >= end + 2 else { return false }
            return bytes.count >= end + 2 + Int(bytes[end + 1] & 0x7F)
        }
        await connection.close()
        let end = try #require(headEnd(bytes))
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let frame = Array(bytes[end...])
        try #require(frame.count >= 4 && frame[0] == 0x88, "\(frame)")
        let length = Int(frame[1] & 0x7F)
        try #require(frame.count >= 2 + length && length >= 2)
        let code = UInt16(frame[2]) << 8 | UInt16(frame[3])
        return (head, code, String(decoding: frame[4..<(2 + length)], as: UTF8.self))
    }

    @Test func theUpgradeAnswersTheSubprotocolAndNeedsAnApp() async throws {
        try await Self.start(.sqlite) { server, _, _ in
            let port = try #require(server.client.port)
            let accepted = try await Self.handshake(port, path: "/v1/apps/shop/graphql", subprotocols: "graphql-ws, graphql-transport-ws")
            #expect(accepted.hasPrefix("HTTP/1.1 101"), "\(accepted)")
            #expect(accepted.lowercased().contains("sec-websocket-protocol: graphql-transport-ws"), "\(accepted)")
            let unknown = try await Self.handshake(port, path: "/v1/apps/nope/graphql", subprotocols: "graphql-transport-ws")
            #expect(unknown.hasPrefix("HTTP/1.1 400"), "\(unknown)")
            // Without the subprotocol (or with the retired subscriptions-transport-ws one) the socket opens and closes
            // at once with 4406, as graphql-ws's server does. Read off the raw socket: a client library may lose a
            // frame that arrives with the 101 (swift-websocket's client does, now and then).
            for offered in [nil, "graphql-ws"] {
                let (head, code, reason) = try await Self.closeAfterUpgrade(port, subprotocols: offered)
                #expect(head.hasPrefix("HTTP/1.1 101") && !head.lowercased().contains("sec-websocket-protocol"), "\(head)")
                #expect(code == 4406 && reason == "Subprotocol not acceptable", "\(offered ?? "none"): \(code) \(reason)")
            }
            // Plain HTTP is served as before on the same port.
            #expect(try await server.send(.get, "/health/live").status == .ok)
        }
    }

    @Test func theConnectionIsAcknowledgedAndPingsAreAnswered() async throws {
        try await Self.start(.sqlite) { server, alice, _ in
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                // A ping before connection_init is answered too, echoing its payload.
                try await client.send(.ping(payload: ["n": 1]))
                let early = try await client.receive()
                #expect(early == .pong(payload: ["n": 1]))
                try await client.initialize(token: alice.token)
                try await client.send(.ping(payload: nil))
                let pong = try await client.receive()
                #expect(pong == .pong(payload: nil))
                try await client.send(.pong(payload: nil))  // a one-way heartbeat, answered with nothing
                let rest = try await client.untilPong()
                #expect(rest.isEmpty)
            }
            #expect(closed.code == 1000, "the client closed normally: \(closed)")
        }
    }

    /// How a session that sends what `send` sends (after `connection_init` with `token`, unless it is `nil`) closes.
    static func closing(
        _ server: TestServer, token: String?, _ send: @escaping @Sendable (inout GraphQLWSTestClient) async throws -> Void
    ) async throws -> GraphQLWSTestClient.Closed {
        try await GraphQLWSTestClient.connect(server) { client in
            if let token { try await client.initialize(token: token) }
            try await send(&client)
            while try await client.receive() != nil {}
        }
    }

    @Test func protocolViolationsCloseWithTheirCodes() async throws {
        try await Self.start(.sqlite) { server, alice, _ in
            let note = "subscription { onCreateNote { id } }"
            let early = try await Self.closing(server, token: nil) { try await $0.send(Self.subscribe("1", note)) }
            #expect(early.code == 4401 && early.reason == "Unauthorized")
            let twice = try await Self.closing(server, token: alice.token) { try await $0.send(.connectionInit(payload: nil)) }
            #expect(twice.code == 4429 && twice.reason == "Too many initialisation requests")
            let duplicate = try await Self.closing(server, token: alice.token) { client in
                try await client.send(Self.subscribe("1", note))
                try await client.send(Self.subscribe("1", note))
            }
            #expect(duplicate.code == 4409 && duplicate.reason == "Subscriber for 1 already exists")
            let notJSON = try await Self.closing(server, token: alice.token) { try await $0.send(text: "{\"type\": ") }
            #expect(notJSON.code == 4400 && notJSON.reason == "Invalid message: not JSON")
            let unknown = try await Self.closing(server, token: alice.token) { try await $0.send(text: #"{"type":"hello"}"#) }
            #expect(unknown.code == 4400 && unknown.reason == #"Invalid message: unknown type "hello""#)
            let binary = try await Self.closing(server, token: alice.token) { try await $0.send(binary: Array("{}".utf8)) }
            #expect(binary.code == 4400)
            let forged = try await GraphQLWSTestClient.connect(server) { client in
                try await client.send(.connectionInit(payload: ["authorization": "Bearer kzs_not-a-session"]))
                let answer = try await client.receive()
                #expect(answer == nil)
            }
            #expect(forged.code == 4403 && forged.reason == "session_expired", "\(forged)")
        }
    }

    @Test func aConnectionWithoutInitIsClosedWhenTheWaitIsOver() async throws {
        try await Self.start(.sqlite, configure: { $0.graphQLWS.initTimeout = .milliseconds(300) }) { server, _, _ in
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                let answer = try await client.receive()
                #expect(answer == nil)
            }
            #expect(closed.code == 4408 && closed.reason == "Connection initialisation timeout")
        }
    }

    @Test(arguments: TestBackend.available)
    func queriesAndMutationsAnswerNextThenComplete(_ backend: TestBackend) async throws {
        try await Self.start(backend) { server, alice, _ in
            _ = try await DataMutationTests.graphQL(
                server, #"mutation { createNote(input: { id: "n1", text: "over http" }) { id } }"#, token: alice.token)
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(Self.subscribe("list", "{ listNotes { items { id text } } }"))
                let list = try await client.messages(for: "list", count: 2)
                #expect(list.first == .next(id: "list", payload: ["data": ["listNotes": ["items": [["id": "n1", "text": "over http"]]]]]))
                #expect(list.last == .complete(id: "list"))

                let create = #"mutation { createNote(input: { id: "n2", text: "over ws" }) { id owner _version } }"#
                try await client.send(Self.subscribe("create", create))
                let created = try await client.messages(for: "create", count: 2)
                guard case .next(_, let payload)? = created.first else {
                    Issue.record("expected next, got \(created)")
                    return
                }
                #expect(payload["data"]?["createNote"] == ["id": "n2", "owner": .string(alice.id), "_version": 1])
                #expect(created.last == .complete(id: "create"))

                // A document that never runs is a request error: `error` alone, with the HTTP endpoint's codes.
                try await client.send(Self.subscribe("bad", "{ nope }"))
                let refused = try await client.messages(for: "bad", count: 1)
                guard case .error(_, let errors)? = refused.first else {
                    Issue.record("expected error, got \(refused)")
                    return
                }
                #expect(errors.first?["extensions"]?["code"] == "validation_failed")
                let rest = try await client.untilPong()
                #expect(rest.isEmpty, "no complete follows an error")
            }
            #expect(closed.code == 1000)
            let notes = try await DataMutationTests.graphQL(server, "{ listNotes { items { id } } }", token: alice.token)
            #expect(notes["data"]?["listNotes"]?["items"] == [["id": "n1"], ["id": "n2"]])
        }
    }
}
