import Foundation
import GraphQL
import KizunaCore
import OrderedCollections
import SQLKit

/// Rows of a model's table as GraphQL values, and GraphQL arguments as JSON: the two conversions between the store
/// and the API.
enum DataRecords {
    /// A row as the values GraphQL returns for the model's fields: DateTime as ISO 8601 text (stored as epoch
    /// milliseconds), lists and JSON as JSON (stored as JSON text, or JSONB on PostgreSQL), booleans as booleans.
    static func output(_ row: any SQLRow, model: DataModel) throws -> [String: any Sendable] {
        var record: [String: any Sendable] = [:]
        for field in model.fields {
            guard try !row.decodeNil(column: field.name) else {
                record[field.name] = pendingDefault(of: field)
                continue
            }
            record[field.name] = try value(of: field, in: row)
        }
        record["_deleted"] = try row.decode(column: DataTables.deletedColumn, as: Bool.self)
        return record
    }

    /// What a required field with a default reads as while its column is NULL: the default, as the schema job that
    /// backfills it will store it (a DateTime in the API's ISO form). `nil` for other fields, whose NULL is a value.
    private static func pendingDefault(of field: DataField) -> (any Sendable)? {
        guard field.isRequired, !field.isList, let value = field.defaultValue else { return nil }
        switch field.type {
        case .scalar(.dateTime): return value.stringValue.flatMap(StoredValue.epochMilliseconds).map(StoredValue.isoText)
        case .scalar(.int): return value.numberValue.map { Int($0) }
        case .scalar(.float): return value.numberValue
        case .scalar(.boolean): return value.boolValue
        case .scalar(.json): return map(value)
        case .enumeration, .scalar(.id), .scalar(.string): return value.stringValue
        }
    }

    private static func value(of field: DataField, in row: any SQLRow) throws -> any Sendable {
        if field.isList {
            let text = try row.decode(column: field.name, as: String.self)
            let list = (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))?.arrayValue ?? []
            return list.map { element -> any Sendable in
                if case .scalar(.dateTime) = field.type, case .number(let millis) = element { return StoredValue.isoText(Int64(millis)) }
                return map(element)
            }
        }
        switch field.type {
        case .enumeration, .scalar(.id), .scalar(.string): return try row.decode(column: field.name, as: String.self)
        case .scalar(.int): return Int(try row.decode(column: field.name, as: Int64.self))
        case .scalar(.float): return try row.decode(column: field.name, as: Double.self)
        case .scalar(.boolean): return try row.decode(column: field.name, as: Bool.self)
        case .scalar(.dateTime): return StoredValue.isoText(try row.decode(column: field.name, as: Int64.self))
        case .scalar(.json):
            let text = try row.decode(column: field.name, as: String.self)
            return map((try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) ?? .null)
        }
    }

    /// A JSON value as GraphQL's `Map`.
    static func map(_ value: JSONValue) -> Map {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return number.rounded() == number && abs(number) < 1e15 ? .number(Number(Int(number))) : .number(Number(number))
        case .string(let text): return .string(text)
        case .array(let elements): return .array(elements.map(map))
        case .object(let fields):
            var dictionary = OrderedDictionary<String, Map>()
            for key in fields.keys.sorted() { dictionary[key] = map(fields[key] ?? .null) }
            return .dictionary(dictionary)
        }
    }

    /// GraphQL's `Map` (an argument) as a JSON value; `undefined` (an argument left out) as `null`.
    static func json(_ map: Map) -> JSONValue {
        switch map {
        case .undefined, .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number.doubleValue)
        case .string(let text): return .string(text)
        case .array(let elements): return .array(elements.map(json))
        case .dictionary(let fields):
            var object: [String: JSONValue] = [:]
            for (key, value) in fields where value != .undefined { object[key] = json(value) }
            return .object(object)
        }
    }
}
