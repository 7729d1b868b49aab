import Foundation
import KizunaCore

extension RemoteConfig {
    /// The value for `key`: the active server value, else the default, else `nil`.
    public subscript(key: String) -> JSONValue? {
        state.withLock { $0.active?.values[key] } ?? defaults[key]
    }

    /// Where the value for `key` comes from.
    public func source(forKey key: String) -> Source {
        if state.withLock({ $0.active?.values[key] }) != nil { return .remote }
        return defaults[key] == nil ? .missing : .default
    }

    /// Every key with a value, active or default.
    public var keys: Set<String> {
        Set(defaults.keys).union(state.withLock { $0.active?.values.keys.map { $0 } ?? [] })
    }

    /// The string for `key`, or `nil` when there is none or it is not a string.
    public func string(forKey key: String) -> String? { self[key]?.stringValue }

    /// The bool for `key`, or `nil` when there is none or it is not a bool.
    public func bool(forKey key: String) -> Bool? { self[key]?.boolValue }

    /// The number for `key`, or `nil` when there is none or it is not a number.
    public func double(forKey key: String) -> Double? { self[key]?.numberValue }

    /// The integer for `key`, or `nil` when there is none or it is not a whole number that fits.
    public func int(forKey key: String) -> Int? {
        guard let number = self[key]?.numberValue, number.rounded() == number, let value = Int(exactly: number) else { return nil }
        return value
    }

    /// Decodes the value for `key` (typically a JSON parameter) into `type`.
    ///
    /// Decode into a type that mirrors the JSON exactly, then convert it into your domain type, so the
    /// conversions live in one place; ``decode(_:forKey:decoder:as:)`` does both.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The parameter key.
    ///   - decoder: The decoder, configured as your API client's is (say, `.convertFromSnakeCase` keys, or a date
    ///     strategy); a plain `JSONDecoder` by default.
    /// - Throws: `not_found` when neither the server nor the defaults have `key`; `validation_failed` naming the
    ///   key and the decoding problem.
    public func decode<Value: Decodable>(
        _ type: Value.Type, forKey key: String, decoder: JSONDecoder = JSONDecoder()
    ) throws(KizunaError) -> Value {
        guard let value = self[key] else {
            throw KizunaError(.notFound, "Remote config has no value and no default for '\(key)'.", field: key)
        }
        do {
            return try decoder.decode(Value.self, from: JSONEncoder().encode(value))
        } catch {
            throw KizunaError(.validationFailed, "The value of '\(key)' is not a \(Value.self): \(Self.describe(error))", field: key)
        }
    }

    /// Decodes the value for `key` into the wire type `DTO`, then converts it with `convert` (the DTO pattern:
    /// decode what the JSON says, then build the domain value in one throwing step).
    /// - Throws: what ``decode(_:forKey:decoder:)`` throws; `validation_failed` naming the key when `convert` throws.
    public func decode<DTO: Decodable, Value>(
        _ dto: DTO.Type, forKey key: String, decoder: JSONDecoder = JSONDecoder(), as convert: (DTO) throws -> Value
    ) throws(KizunaError) -> Value {
        let wire = try decode(DTO.self, forKey: key, decoder: decoder)
        do {
            return try convert(wire)
        } catch let error as KizunaError {
            throw KizunaError(.validationFailed, "The value of '\(key)' is not usable: \(error.message)", field: key)
        } catch {
            throw KizunaError(.validationFailed, "The value of '\(key)' is not usable: \(error)", field: key)
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, let context):
            return "missing \(Self.path(context.codingPath + [key]))"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "expected \(type) at \(Self.path(context.codingPath))"
        case .dataCorrupted(let context):
            return "\(context.debugDescription) at \(Self.path(context.codingPath))"
        default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.reduce("$") { path, key in key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)" }
    }
}
