/// Why a text frame is not a `graphql-transport-ws` message, in the order graphql-ws's `validateMessage` checks.
///
/// Each case's ``reason`` is a close reason that fits a close frame (graphql-ws itself closes with the vaguer
/// `Invalid message received`): a client developer reading the close event learns which field of which message.
public enum GraphQLWSMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is not JSON.
    case notJSON
    /// The JSON is not an object; `found` is what it is (`array`, `string`, …: ``JSONValue/typeName``).
    case notAnObject(found: String)
    /// `type` is not one of the protocol's eight message types.
    case unknownType(String)
    /// A required field is absent or `null`. `type` is the message's (`nil` when `type` itself is missing); `field`
    /// is a path such as `id` or `payload.query`.
    case missingField(type: String?, field: String)
    /// A field has the wrong JSON type: `expected` in words (`a string`, `an object or null`), `found` a
    /// ``JSONValue/typeName``.
    case wrongType(type: String?, field: String, expected: String, found: String)
    /// A field that must not be empty is: an operation's `id`, an `error` message's list of errors.
    case empty(type: String, field: String)

    /// The close reason for code 4400.
    public var reason: String {
        switch self {
        case .notJSON:
            "Invalid message: not JSON"
        case .notAnObject(let found):
            "Invalid message: expected a JSON object, not \(found)"
        case .unknownType(let type):
            "Invalid message: unknown type \"\(type.prefix(32))\""
        case .missingField(let type, let field):
            "\(Self.subject(type)): '\(field)' is missing"
        case .wrongType(let type, let field, let expected, let found):
            "\(Self.subject(type)): '\(field)' must be \(expected), not \(found)"
        case .empty(let type, let field):
            "\(Self.subject(type)): '\(field)' must not be empty"
        }
    }

    public var description: String { reason }

    private static func subject(_ type: String?) -> String {
        type.map { "Invalid \($0) message" } ?? "Invalid message"
    }
}

extension GraphQLWSMessage {
    /// Reads a message from its JSON. Members the protocol does not define are ignored, as graphql-ws does; a `null`
    /// optional payload reads as absent.
    ///
    /// - Throws: ``GraphQLWSMessageError`` for the first thing wrong.
    public init(parsing value: JSONValue) throws(GraphQLWSMessageError) {
        guard let object = value.objectValue else { throw GraphQLWSMessageError.notAnObject(found: value.typeName) }
        guard let typeValue = object["type"], typeValue != .null else {
            throw GraphQLWSMessageError.missingField(type: nil, field: "type")
        }
        guard let type = typeValue.stringValue else {
            throw GraphQLWSMessageError.wrongType(type: nil, field: "type", expected: "a string", found: typeValue.typeName)
        }
        guard let kind = Kind(rawValue: type) else { throw GraphQLWSMessageError.unknownType(type) }
        let fields = Fields(object: object, type: type)
        switch kind {
        case .connectionInit: self = .connectionInit(payload: try fields.optionalObject("payload"))
        case .connectionAck: self = .connectionAck(payload: try fields.optionalObject("payload"))
        case .ping: self = .ping(payload: try fields.optionalObject("payload"))
        case .pong: self = .pong(payload: try fields.optionalObject("payload"))
        case .subscribe:
            let id = try fields.id()
            let payload = Fields(object: try fields.object("payload"), type: type, path: "payload.")
            self = .subscribe(
                id: id,
                payload: GraphQLWSSubscribePayload(
                    query: try payload.string("query"),
                    variables: try payload.optionalObject("variables"),
                    operationName: try payload.optionalString("operationName"),
                    extensions: try payload.optionalObject("extensions")
                ))
        case .next:
            let id = try fields.id()
            self = .next(id: id, payload: try fields.object("payload"))
        case .error:
            let id = try fields.id()
            self = .error(id: id, payload: try fields.errors("payload"))
        case .complete:
            self = .complete(id: try fields.id())
        }
    }
}

/// The members of one JSON object of a message, read with the message's type and the object's path for errors.
private struct Fields {
    var object: [String: JSONValue]
    var type: String
    var path = ""

    /// The member `name`, or `nil` when it is absent or `null`.
    private func member(_ name: String) -> JSONValue? {
        guard let value = object[name], value != .null else { return nil }
        return value
    }

    private func missing(_ name: String) -> GraphQLWSMessageError {
        .missingField(type: type, field: path + name)
    }

    private func wrong(_ name: String, _ expected: String, _ value: JSONValue) -> GraphQLWSMessageError {
        .wrongType(type: type, field: path + name, expected: expected, found: value.typeName)
    }

    /// An operation's `id`: a string that is not empty.
    func id() throws(GraphQLWSMessageError) -> String {
        let id = try string("id")
        guard !id.isEmpty else { throw GraphQLWSMessageError.empty(type: type, field: path + "id") }
        return id
    }

    func string(_ name: String) throws(GraphQLWSMessageError) -> String {
        guard let value = member(name) else { throw missing(name) }
        guard let string = value.stringValue else { throw wrong(name, "a string", value) }
        return string
    }

    func optionalString(_ name: String) throws(GraphQLWSMessageError) -> String? {
        guard let value = member(name) else { return nil }
        guard let string = value.stringValue else { throw wrong(name, "a string or null", value) }
        return string
    }

    func object(_ name: String) throws(GraphQLWSMessageError) -> [String: JSONValue] {
        guard let value = member(name) else { throw missing(name) }
        guard let object = value.objectValue else { throw wrong(name, "an object", value) }
        return object
    }

    func optionalObject(_ name: String) throws(GraphQLWSMessageError) -> [String: JSONValue]? {
        guard let value = member(name) else { return nil }
        guard let object = value.objectValue else { throw wrong(name, "an object or null", value) }
        return object
    }

    /// A non-empty array of GraphQL errors: objects, each with a string `message`.
    func errors(_ name: String) throws(GraphQLWSMessageError) -> [[String: JSONValue]] {
        guard let value = member(name) else { throw missing(name) }
        guard let array = value.arrayValue else { throw wrong(name, "an array of GraphQL errors", value) }
        guard !array.isEmpty else { throw GraphQLWSMessageError.empty(type: type, field: path + name) }
        var errors: [[String: JSONValue]] = []
        for (index, element) in array.enumerated() {
            let elementName = "\(name)[\(index)]"
            guard let error = element.objectValue else { throw wrong(elementName, "an object", element) }
            _ = try Fields(object: error, type: type, path: path + elementName + ".").string("message")
            errors.append(error)
        }
        return errors
    }
}
