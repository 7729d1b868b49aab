import Foundation

/// A message of the `graphql-transport-ws` protocol (graphql-ws's PROTOCOL.md), in either direction.
///
/// Its JSON is the protocol's exactly: `{"type": "subscribe", "id": "1", "payload": {"query": "…"}}`. A payload that is
/// optional is absent when `nil` (never `null`), as the reference implementation sends it. Read a message with
/// ``init(text:)`` (or ``init(parsing:)``), which says precisely what is wrong with one that is invalid, so the
/// server can close with 4400 and that reason; write one with ``text()``.
public enum GraphQLWSMessage: Sendable, Hashable {
    /// Client → server, first: asks to open the connection. The payload carries what the server authenticates
    /// (Kizuna: the session token).
    case connectionInit(payload: [String: JSONValue]?)
    /// Server → client: the connection is open; operations may be subscribed.
    case connectionAck(payload: [String: JSONValue]?)
    /// Either way, at any time: asks for a ``pong``.
    case ping(payload: [String: JSONValue]?)
    /// Either way: answers a ``ping`` (echoing its payload), or a one-way heartbeat.
    case pong(payload: [String: JSONValue]?)
    /// Client → server: runs an operation (a subscription, or a query or mutation, which answers once), under `id`.
    case subscribe(id: String, payload: GraphQLWSSubscribePayload)
    /// Server → client: a result of operation `id`, an execution result (`data`, `errors`, `extensions`).
    case next(id: String, payload: [String: JSONValue])
    /// Server → client: operation `id` failed and is over (no ``complete`` follows): at least one GraphQL error, each
    /// an object with a `message` (Kizuna's also carry `extensions.code`).
    case error(id: String, payload: [[String: JSONValue]])
    /// Either way: operation `id` is over (server → client), or the client stops listening (client → server).
    case complete(id: String)

    /// The `type` of a message.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case connectionInit = "connection_init"
        case connectionAck = "connection_ack"
        case ping
        case pong
        case subscribe
        case next
        case error
        case complete
    }

    /// The message's `type`.
    public var kind: Kind {
        switch self {
        case .connectionInit: .connectionInit
        case .connectionAck: .connectionAck
        case .ping: .ping
        case .pong: .pong
        case .subscribe: .subscribe
        case .next: .next
        case .error: .error
        case .complete: .complete
        }
    }

    /// The operation the message is about, for the four that name one.
    public var id: String? {
        switch self {
        case .connectionInit, .connectionAck, .ping, .pong: nil
        case .subscribe(let id, _), .next(let id, _), .error(let id, _), .complete(let id): id
        }
    }

    /// The message as the protocol's JSON object.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["type": .string(kind.rawValue)]
        switch self {
        case .connectionInit(let payload), .connectionAck(let payload), .ping(let payload), .pong(let payload):
            if let payload { object["payload"] = .object(payload) }
        case .subscribe(let id, let payload):
            object["id"] = .string(id)
            object["payload"] = payload.json
        case .next(let id, let payload):
            object["id"] = .string(id)
            object["payload"] = .object(payload)
        case .error(let id, let errors):
            object["id"] = .string(id)
            object["payload"] = .array(errors.map(JSONValue.object))
        case .complete(let id):
            object["id"] = .string(id)
        }
        return .object(object)
    }

    /// The text frame to send: the message's JSON, keys sorted so the same message is always the same text.
    ///
    /// - Throws: `EncodingError` only for a payload holding a number JSON cannot write (NaN or an infinity).
    public func text() throws -> String {
        String(decoding: try WireFormat.canonicalEncoder().encode(json), as: UTF8.self)
    }

    /// Reads a text frame.
    ///
    /// - Throws: ``GraphQLWSMessageError`` saying what is wrong: not JSON, not an object, no or an unknown `type`,
    ///   or a field missing or of the wrong type.
    public init(text: String) throws(GraphQLWSMessageError) {
        let value: JSONValue
        do {
            value = try WireFormat.decoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw GraphQLWSMessageError.notJSON
        }
        self = try GraphQLWSMessage(parsing: value)
    }
}

/// The payload of a `subscribe` message: the GraphQL operation to run, as in a GraphQL-over-HTTP request.
public struct GraphQLWSSubscribePayload: Sendable, Hashable {
    /// The GraphQL document.
    public var query: String
    /// The values of the document's variables.
    public var variables: [String: JSONValue]?
    /// Which operation of the document to run, when it has several.
    public var operationName: String?
    /// Anything else the client sends along (Kizuna: where a subscription resumes from).
    public var extensions: [String: JSONValue]?

    /// Creates a payload.
    /// - Parameters:
    ///   - query: The GraphQL document.
    ///   - variables: The values of its variables.
    ///   - operationName: The operation to run, when the document has several.
    ///   - extensions: Anything else to send along.
    public init(query: String, variables: [String: JSONValue]? = nil, operationName: String? = nil, extensions: [String: JSONValue]? = nil) {
        self.query = query
        self.variables = variables
        self.operationName = operationName
        self.extensions = extensions
    }

    /// The payload as JSON, with absent members left out.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["query": .string(query)]
        if let variables { object["variables"] = .object(variables) }
        if let operationName { object["operationName"] = .string(operationName) }
        if let extensions { object["extensions"] = .object(extensions) }
        return .object(object)
    }
}

/// The protocol's JSON, so a message nests in other Codable types; ``GraphQLWSMessage/init(text:)`` is the reader
/// that says precisely what is wrong.
extension GraphQLWSMessage: Codable {
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        do {
            self = try GraphQLWSMessage(parsing: value)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.reason))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}
