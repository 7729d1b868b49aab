import Foundation
import KizunaCore

/// A field's value in the form its column stores it, ready to bind: what filters, key conditions and page cursors
/// compare rows against.
///
/// The API speaks GraphQL values (a DateTime is an ISO 8601 string); the tables store what compares and sorts the same
/// way on both engines (epoch milliseconds, see ``DataTables``). Converting once, before any SQL is written, keeps
/// every comparison in the database's own terms, so the index serves it.
package enum StoredValue: Sendable, Hashable {
    /// ID, String and enum values.
    case text(String)
    /// Int values, and DateTime values as epoch milliseconds.
    case integer(Int64)
    /// Float values.
    case real(Double)
    /// Boolean values.
    case bool(Bool)
    /// JSON text: a whole list, or a JSON field's document.
    case json(String)

    /// The value to bind. A Bool binds as 0 or 1 on SQLite (its BOOLEAN columns hold those) and as `bool` on
    /// PostgreSQL, through each driver's own encoding.
    package var bindable: any Encodable & Sendable {
        switch self {
        case .text(let value): return value
        case .integer(let value): return value
        case .real(let value): return value
        case .bool(let value): return value
        case .json(let value): return value
        }
    }

    /// The value as one element of a JSON array, the way list columns hold their elements.
    package var jsonElement: String {
        switch self {
        case .text(let value): return Self.jsonText(.string(value))
        case .integer(let value): return String(value)
        case .real(let value): return Self.jsonText(.number(value))
        case .bool(let value): return value ? "true" : "false"
        case .json(let value): return value
        }
    }

    /// Why a value could not be converted, as a message for the problem's detail.
    package struct Problem: Error, Sendable {
        package var message: String
    }

    /// `value` as one stored value of `type` (an element's type, for a list field).
    /// - Parameters:
    ///   - value: The value as the API received it.
    ///   - type: The field's type.
    ///   - schema: The schema, for the values of an enum.
    /// - Returns: The stored form, or the problem with `value`.
    package static func convert(_ value: JSONValue, to type: FieldType, schema: DataSchema) -> Result<StoredValue, Problem> {
        switch type {
        case .scalar(.id), .scalar(.string):
            guard case .string(let text) = value else { return .failure(Problem(message: "must be a string, not \(value.typeName)")) }
            return .success(.text(text))
        case .scalar(.int):
            // JSON numbers are doubles: beyond 2^53 the integer a client meant is already lost.
            guard case .number(let number) = value, number.rounded() == number, number.magnitude <= 9_007_199_254_740_992 else {
                return .failure(Problem(message: "must be a whole number (at most 2^53 in magnitude), not \(describe(value))"))
            }
            return .success(.integer(Int64(number)))
        case .scalar(.float):
            guard case .number(let number) = value else { return .failure(Problem(message: "must be a number, not \(value.typeName)")) }
            return .success(.real(number))
        case .scalar(.boolean):
            guard case .bool(let flag) = value else { return .failure(Problem(message: "must be true or false, not \(value.typeName)")) }
            return .success(.bool(flag))
        case .scalar(.dateTime):
            guard case .string(let text) = value, let millis = epochMilliseconds(text) else {
                return .failure(
                    Problem(message: "must be an ISO 8601 date and time with a time zone, such as 2025-01-31T09:00:00.000Z, not \(describe(value))"))
            }
            return .success(.integer(millis))
        case .scalar(.json):
            // Amplify sends AWSJSON as a string holding JSON; any other value is taken as the document itself.
            if case .string(let text) = value {
                guard let document = try? JSONValue(parsing: text) else {
                    return .failure(Problem(message: "must be JSON (a string holding JSON, or the value itself)"))
                }
                return .success(.json(jsonText(document)))
            }
            return .success(.json(jsonText(value)))
        case .enumeration(let name):
            let values = schema.enumeration(named: name)?.values ?? []
            guard case .string(let text) = value, values.contains(text) else {
                return .failure(Problem(message: "must be one of \(name)'s values (\(values.joined(separator: ", "))), not \(describe(value))"))
            }
            return .success(.text(text))
        }
    }

    /// Epoch milliseconds as the API writes every DateTime (``WireFormat/dateTimeText(_:)``, the SDK's form too), the
    /// inverse of ``epochMilliseconds(_:)``.
    package static func isoText(_ millis: Int64) -> String {
        WireFormat.dateTimeText(EpochMillis.date(millis))
    }

    /// Epoch milliseconds of an ISO 8601 date and time with a zone (`Z` or `±hh:mm`), with or without fractional
    /// seconds; `nil` for anything else. Digits beyond milliseconds are cut, as the column keeps milliseconds.
    ///
    /// The fraction is read here rather than by the formatter, whose fractional-seconds parsing takes a fixed number
    /// of digits on some platforms; `2025-01-31T09:00:00.5+09:00` and `…00.123456Z` both read.
    package static func epochMilliseconds(_ text: String) -> Int64? {
        guard text.utf8.count <= 64 else { return nil }
        var whole = text
        var fraction: Int64 = 0
        if let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            var milliseconds = String(digits.prefix(3))
            while milliseconds.count < 3 { milliseconds += "0" }
            guard (1...9).contains(digits.count), let value = Int64(milliseconds) else { return nil }
            fraction = value
            whole = String(text[..<dot]) + String(text[digits.endIndex...])
        }
        // A time without a zone names no instant; refused here rather than left to the formatter's leniency.
        let bytes = Array(whole.utf8)
        let zoned =
            bytes.last == UInt8(ascii: "Z")
            || (bytes.count > 6 && (bytes[bytes.count - 6] == UInt8(ascii: "+") || bytes[bytes.count - 6] == UInt8(ascii: "-"))
                && bytes[bytes.count - 3] == UInt8(ascii: ":"))
        guard zoned, let date = ISO8601DateFormatter().date(from: whole), let seconds = Int64(exactly: date.timeIntervalSince1970.rounded()) else {
            return nil
        }
        return seconds * 1000 + fraction
    }

    /// `value` as canonical JSON (``WireFormat/canonicalEncoder()``: compact, keys sorted, whole numbers without a
    /// fraction), so the same document always has the same text (SQLite compares JSON as text). A value JSON cannot
    /// hold (a NaN or infinite number anywhere in it) is written `null`.
    package static func jsonText(_ value: JSONValue) -> String {
        (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    private static let encoder = WireFormat.canonicalEncoder()

    /// A value as a message quotes it: short, and typed.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return text.count > 40 ? "a string" : "\"\(text)\""
        case .number(let number): return number.rounded() == number && number.magnitude < 1e15 ? String(Int64(number)) : "\(number)"
        default: return value.typeName
        }
    }
}
