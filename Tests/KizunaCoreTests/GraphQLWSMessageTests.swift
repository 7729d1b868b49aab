import Foundation
import KizunaCore
import Testing

/// The `graphql-transport-ws` messages as JSON text, both ways, and every way a text frame can fail to be one, each
/// with the close reason the server sends for it.
@Suite("graphql-transport-ws messages")
struct GraphQLWSMessageTests {
    /// A text frame, the message it reads as, and the text that message writes (`nil`: the same JSON as the input).
    struct Valid: CustomTestStringConvertible, Sendable {
        let text: String
        let message: GraphQLWSMessage
        var written: String? = nil
        var testDescription: String { text }
    }

    static let valid: [Valid] = [
        Valid(text: #"{"type":"connection_init"}"#, message: .connectionInit(payload: nil)),
        Valid(text: #"{"type":"connection_init","payload":null}"#, message: .connectionInit(payload: nil), written: #"{"type":"connection_init"}"#),
        Valid(text: #"{"type":"connection_init","payload":{"token":"kzs_1"}}"#, message: .connectionInit(payload: ["token": "kzs_1"])),
        Valid(text: #"{"type":"connection_ack"}"#, message: .connectionAck(payload: nil)),
        Valid(text: #"{"type":"connection_ack","payload":{"limit":100}}"#, message: .connectionAck(payload: ["limit": 100])),
        Valid(text: #"{"type":"ping"}"#, message: .ping(payload: nil)),
        Valid(text: #"{"type":"ping","payload":{"at":"x"}}"#, message: .ping(payload: ["at": "x"])),
        Valid(text: #"{"type":"pong","payload":null}"#, message: .pong(payload: nil), written: #"{"type":"pong"}"#),
        Valid(text: #"{"type":"pong","payload":{"at":"x"}}"#, message: .pong(payload: ["at": "x"])),
        Valid(
            text: #"{"id":"1","type":"subscribe","payload":{"query":"subscription { noteChanged { id } }"}}"#,
            message: .subscribe(id: "1", payload: GraphQLWSSubscribePayload(query: "subscription { noteChanged { id } }"))
        ),
        Valid(
            text: #"{"id":"op-2","type":"subscribe","payload":{"query":"query Q($n: Int) { a(n: $n) }","variables":{"n":2},"#
                + #""operationName":"Q","extensions":{"since":41}}}"#,
            message: .subscribe(
                id: "op-2",
                payload: GraphQLWSSubscribePayload(
                    query: "query Q($n: Int) { a(n: $n) }", variables: ["n": 2], operationName: "Q", extensions: ["since": 41]))
        ),
        Valid(
            text: #"{"id":"1","type":"subscribe","payload":{"query":"{ a }","variables":null,"operationName":null,"extensions":null}}"#,
            message: .subscribe(id: "1", payload: GraphQLWSSubscribePayload(query: "{ a }")),
            written: #"{"id":"1","type":"subscribe","payload":{"query":"{ a }"}}"#
        ),
        Valid(
            text: #"{"id":"1","type":"next","payload":{"data":{"a":[1,true,null]}}}"#,
            message: .next(id: "1", payload: ["data": ["a": [1, true, nil]]])),
        Valid(
            text: #"{"id":"1","type":"error","payload":[{"message":"No.","extensions":{"code":"forbidden"}}]}"#,
            message: .error(id: "1", payload: [["message": "No.", "extensions": ["code": "forbidden"]]])
        ),
        Valid(text: #"{"id":"1","type":"complete"}"#, message: .complete(id: "1")),
        // Members the protocol does not define are ignored, as graphql-ws does.
        Valid(text: #"{"type":"ping","id":7,"extra":[1]}"#, message: .ping(payload: nil), written: #"{"type":"ping"}"#),
    ]

    @Test(arguments: valid)
    func readsAndWritesEveryMessage(_ row: Valid) throws {
        let message = try GraphQLWSMessage(text: row.text)
        #expect(message == row.message)
        let text = try message.text()
        let expected = try Self.json(row.written ?? row.text)
        #expect(try Self.json(text) == expected)
        #expect(try GraphQLWSMessage(text: text) == message)
    }

    @Test func writesCompactJSONWithSortedKeysAndNoAbsentPayload() throws {
        #expect(try GraphQLWSMessage.complete(id: "a/1").text() == #"{"id":"a/1","type":"complete"}"#)
        #expect(try GraphQLWSMessage.ping(payload: nil).text() == #"{"type":"ping"}"#)
        #expect(try GraphQLWSMessage.connectionAck(payload: nil).text() == #"{"type":"connection_ack"}"#)
        let subscribe = GraphQLWSMessage.subscribe(id: "1", payload: GraphQLWSSubscribePayload(query: "{ a }", operationName: "A"))
        #expect(try subscribe.text() == #"{"id":"1","payload":{"operationName":"A","query":"{ a }"},"type":"subscribe"}"#)
    }

    @Test func kindAndIdAreTheMessagesTypeAndOperation() {
        #expect(GraphQLWSMessage.connectionInit(payload: nil).kind.rawValue == "connection_init")
        #expect(GraphQLWSMessage.connectionAck(payload: nil).kind.rawValue == "connection_ack")
        #expect(
            GraphQLWSMessage.Kind.allCases.map(\.rawValue) == [
                "connection_init", "connection_ack", "ping", "pong", "subscribe", "next", "error", "complete",
            ])
        #expect(GraphQLWSMessage.pong(payload: nil).id == nil)
        #expect(GraphQLWSMessage.next(id: "7", payload: [:]).id == "7")
    }

    /// A text frame that is not a message, what is wrong with it, and the close reason.
    struct Invalid: CustomTestStringConvertible, Sendable {
        let text: String
        let error: GraphQLWSMessageError
        let reason: String
        var testDescription: String { text.isEmpty ? "(empty)" : text }
    }

    static let invalid: [Invalid] = [
        Invalid(text: "", error: .notJSON, reason: "Invalid message: not JSON"),
        Invalid(text: "hello", error: .notJSON, reason: "Invalid message: not JSON"),
        Invalid(text: #"{"type":"ping""#, error: .notJSON, reason: "Invalid message: not JSON"),
        Invalid(text: #"[{"type":"ping"}]"#, error: .notAnObject(found: "array"), reason: "Invalid message: expected a JSON object, not array"),
        Invalid(text: #""ping""#, error: .notAnObject(found: "string"), reason: "Invalid message: expected a JSON object, not string"),
        Invalid(text: "null", error: .notAnObject(found: "null"), reason: "Invalid message: expected a JSON object, not null"),
        Invalid(text: "{}", error: .missingField(type: nil, field: "type"), reason: "Invalid message: 'type' is missing"),
        Invalid(text: #"{"type":null}"#, error: .missingField(type: nil, field: "type"), reason: "Invalid message: 'type' is missing"),
        Invalid(
            text: #"{"type":1}"#, error: .wrongType(type: nil, field: "type", expected: "a string", found: "number"),
            reason: "Invalid message: 'type' must be a string, not number"),
        Invalid(
            text: #"{"type":true}"#, error: .wrongType(type: nil, field: "type", expected: "a string", found: "bool"),
            reason: "Invalid message: 'type' must be a string, not bool"),
        // The message of the older subscriptions-transport-ws protocol.
        Invalid(
            text: #"{"type":"connection_terminate"}"#, error: .unknownType("connection_terminate"),
            reason: #"Invalid message: unknown type "connection_terminate""#),
        Invalid(text: #"{"type":"PING"}"#, error: .unknownType("PING"), reason: #"Invalid message: unknown type "PING""#),
        Invalid(
            text: #"{"type":"\#(String(repeating: "x", count: 40))"}"#, error: .unknownType(String(repeating: "x", count: 40)),
            reason: #"Invalid message: unknown type "\#(String(repeating: "x", count: 32))""#),
        Invalid(
            text: #"{"type":"connection_init","payload":"kzs_1"}"#,
            error: .wrongType(type: "connection_init", field: "payload", expected: "an object or null", found: "string"),
            reason: "Invalid connection_init message: 'payload' must be an object or null, not string"),
        Invalid(
            text: #"{"type":"ping","payload":[]}"#, error: .wrongType(type: "ping", field: "payload", expected: "an object or null", found: "array"),
            reason: "Invalid ping message: 'payload' must be an object or null, not array"),
        Invalid(
            text: #"{"type":"subscribe","payload":{"query":"{ a }"}}"#, error: .missingField(type: "subscribe", field: "id"),
            reason: "Invalid subscribe message: 'id' is missing"),
        Invalid(
            text: #"{"type":"subscribe","id":1,"payload":{"query":"{ a }"}}"#,
            error: .wrongType(type: "subscribe", field: "id", expected: "a string", found: "number"),
            reason: "Invalid subscribe message: 'id' must be a string, not number"),
        Invalid(
            text: #"{"type":"subscribe","id":"","payload":{"query":"{ a }"}}"#, error: .empty(type: "subscribe", field: "id"),
            reason: "Invalid subscribe message: 'id' must not be empty"),
        Invalid(
            text: #"{"type":"subscribe","id":"1"}"#, error: .missingField(type: "subscribe", field: "payload"),
            reason: "Invalid subscribe message: 'payload' is missing"),
        Invalid(
            text: #"{"type":"subscribe","id":"1","payload":"{ a }"}"#,
            error: .wrongType(type: "subscribe", field: "payload", expected: "an object", found: "string"),
            reason: "Invalid subscribe message: 'payload' must be an object, not string"),
        Invalid(
            text: #"{"type":"subscribe","id":"1","payload":{}}"#, error: .missingField(type: "subscribe", field: "payload.query"),
            reason: "Invalid subscribe message: 'payload.query' is missing"),
        Invalid(
            text: #"{"type":"subscribe","id":"1","payload":{"query":5}}"#,
            error: .wrongType(type: "subscribe", field: "payload.query", expected: "a string", found: "number"),
            reason: "Invalid subscribe message: 'payload.query' must be a string, not number"),
        Invalid(
            text: #"{"type":"subscribe","id":"1","payload":{"query":"{ a }","variables":[1]}}"#,
            error: .wrongType(type: "subscribe", field: "payload.variables", expected: "an object or null", found: "array"),
            reason: "Invalid subscribe message: 'payload.variables' must be an object or null, not array"),
        Invalid(
            text: #"{"type":"subscribe","id":"1","payload":{"query":"{ a }","operationName":5}}"#,
            error: .wrongType(type: "subscribe", field: "payload.operationName", expected: "a string or null", found: "number"),
            reason: "Invalid subscribe message: 'payload.operationName' must be a string or null, not number"),
        Invalid(
            text: #"{"type":"subscribe","id":"1","payload":{"query":"{ a }","extensions":"x"}}"#,
            error: .wrongType(type: "subscribe", field: "payload.extensions", expected: "an object or null", found: "string"),
            reason: "Invalid subscribe message: 'payload.extensions' must be an object or null, not string"),
        Invalid(
            text: #"{"type":"next","id":"1"}"#, error: .missingField(type: "next", field: "payload"),
            reason: "Invalid next message: 'payload' is missing"),
        Invalid(
            text: #"{"type":"next","id":"1","payload":[]}"#, error: .wrongType(type: "next", field: "payload", expected: "an object", found: "array"),
            reason: "Invalid next message: 'payload' must be an object, not array"),
        Invalid(
            text: #"{"type":"next","payload":{}}"#, error: .missingField(type: "next", field: "id"),
            reason: "Invalid next message: 'id' is missing"),
        Invalid(
            text: #"{"type":"error","id":"1","payload":[]}"#, error: .empty(type: "error", field: "payload"),
            reason: "Invalid error message: 'payload' must not be empty"),
        Invalid(
            text: #"{"type":"error","id":"1","payload":{"message":"No."}}"#,
            error: .wrongType(type: "error", field: "payload", expected: "an array of GraphQL errors", found: "object"),
            reason: "Invalid error message: 'payload' must be an array of GraphQL errors, not object"),
        Invalid(
            text: #"{"type":"error","id":"1","payload":["No."]}"#,
            error: .wrongType(type: "error", field: "payload[0]", expected: "an object", found: "string"),
            reason: "Invalid error message: 'payload[0]' must be an object, not string"),
        Invalid(
            text: #"{"type":"error","id":"1","payload":[{"message":"No."},{"path":["a"]}]}"#,
            error: .missingField(type: "error", field: "payload[1].message"),
            reason: "Invalid error message: 'payload[1].message' is missing"),
        Invalid(
            text: #"{"type":"complete"}"#, error: .missingField(type: "complete", field: "id"),
            reason: "Invalid complete message: 'id' is missing"),
        Invalid(
            text: #"{"type":"complete","id":null}"#, error: .missingField(type: "complete", field: "id"),
            reason: "Invalid complete message: 'id' is missing"),
        Invalid(
            text: #"{"type":"complete","id":""}"#, error: .empty(type: "complete", field: "id"),
            reason: "Invalid complete message: 'id' must not be empty"),
    ]

    @Test(arguments: invalid)
    func saysWhatIsWrongWithAFrameThatIsNotAMessage(_ row: Invalid) {
        #expect(throws: row.error) { try GraphQLWSMessage(text: row.text) }
        #expect(row.error.reason == row.reason)
        #expect(row.reason.utf8.count <= GraphQLWSCloseCode.maximumReasonBytes)
    }

    @Test func decodesAsCodableAndReportsTheReasonAsCorruptData() throws {
        struct Envelope: Codable, Equatable { var messages: [GraphQLWSMessage] }
        let text = #"{"messages":[{"type":"ping"},{"id":"1","type":"complete"}]}"#
        let envelope = try JSONDecoder().decode(Envelope.self, from: Data(text.utf8))
        #expect(envelope.messages == [.ping(payload: nil), .complete(id: "1")])
        let again = try JSONDecoder().decode(Envelope.self, from: JSONEncoder().encode(envelope))
        #expect(again == envelope)

        let invalid = Data(#"{"messages":[{"type":"complete"}]}"#.utf8)
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode(Envelope.self, from: invalid) }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription == "Invalid complete message: 'id' is missing")
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }
}
