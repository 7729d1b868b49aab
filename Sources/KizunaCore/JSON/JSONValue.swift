/// Any JSON value, kept as written: the raw form of templates, policies and parameter values.
public enum JSONValue: Sendable, Hashable, Codable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    /// Asks for an object first, then an array, then a string, a number, a Boolean: every type a decoder is asked for
    /// and does not find costs it an error to build, and documents are mostly objects and strings. (Text the server
    /// holds itself is read with ``init(parsing:)-(Data)``, which walks the bytes once.)
    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: MemberName.self) {
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(object.allKeys.count)
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
        } else if var list = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            if let count = list.count { elements.reserveCapacity(count) }
            while !list.isAtEnd { elements.append(try list.decode(JSONValue.self)) }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else {
                self = .bool(try container.decode(Bool.self))
            }
        }
    }

    /// An object member's name, whatever it is.
    private struct MemberName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The JSON type's name, for messages: `string`, `number`, `bool`, `array`, `object` or `null`.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "bool"
        case .array: "array"
        case .object: "object"
        case .null: "null"
        }
    }

    /// The string, if this is one.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The number, if this is one.
    public var numberValue: Double? { if case .number(let value) = self { value } else { nil } }
    /// The bool, if this is one.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }

    /// The member `key` of an object, or `nil`.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

/// Literals, so defaults and test documents read like JSON: `["greeting": "hi", "limit": 10, "on": true]`.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(Dictionary(elements) { _, last in last }) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// The JSON path (`$.a[0].b`) of the first array or object nested deeper than `limit` levels, or `nil`. The
    /// document itself is level 1. It stops at the limit, so a hostile document costs no more than a legal one.
    public func pathDeeperThan(_ limit: Int) -> String? {
        func walk(_ value: JSONValue, depth: Int, path: String) -> String? {
            switch value {
            case .array(let items):
                if depth > limit { return path }
                for (index, item) in items.enumerated() {
                    if let found = walk(item, depth: depth + 1, path: "\(path)[\(index)]") { return found }
                }
            case .object(let members):
                if depth > limit { return path }
                for key in members.keys.sorted() {
                    if let found = walk(members[key]!, depth: depth + 1, path: "\(path).\(key)") { return found }
                }
            default: break
            }
            return nil
        }
        return walk(self, depth: 1, path: "$")
    }
}
