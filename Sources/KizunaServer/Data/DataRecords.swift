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

    /// A row as the stored record in JSON: the form the rule engine decides on (a list as an array, a DateTime as
    /// epoch milliseconds) and idempotent creates compare. `_deleted` is included.
    static func stored(_ row: any SQLRow, model: DataModel) throws -> [String: JSONValue] {
        var record: [String: JSONValue] = [:]
        for field in model.fields {
            guard try !row.decodeNil(column: field.name) else {
                record[field.name] = .null
                continue
            }
            if field.isList {
                let text = try row.decode(column: field.name, as: String.self)
                record[field.name] = StoredValue.json(text).json
                continue
            }
            switch field.type {
            case .enumeration, .scalar(.id), .scalar(.string): record[field.name] = .string(try row.decode(column: field.name, as: String.self))
            case .scalar(.int), .scalar(.dateTime): record[field.name] = .number(Double(try row.decode(column: field.name, as: Int64.self)))
            case .scalar(.float): record[field.name] = .number(try row.decode(column: field.name, as: Double.self))
            case .scalar(.boolean): record[field.name] = .bool(try row.decode(column: field.name, as: Bool.self))
            case .scalar(.json): record[field.name] = StoredValue.json(try row.decode(column: field.name, as: String.self)).json
            }
        }
        record[DataTables.deletedColumn] = .bool(try row.decode(column: DataTables.deletedColumn, as: Bool.self))
        return record
    }

    /// A stored record (as ``stored(_:model:)`` reads it and a change's `record` carries it: a list as an array, a
    /// DateTime as epoch milliseconds) as the values GraphQL returns, as ``output(_:model:)`` makes them from a row.
    static func output(stored record: [String: JSONValue], model: DataModel) -> [String: any Sendable] {
        var output: [String: any Sendable] = [:]
        for field in model.fields {
            let value = record[field.name] ?? .null
            if value == .null {
                output[field.name] = pendingDefault(of: field)
            } else {
                output[field.name] = outputValue(value, of: field)
            }
        }
        output["_deleted"] = record[DataTables.deletedColumn]?.boolValue ?? false
        return output
    }

    private static func outputValue(_ value: JSONValue, of field: DataField) -> any Sendable {
        if field.isList {
            return (value.arrayValue ?? []).map { element -> any Sendable in
                if case .scalar(.dateTime) = field.type, case .number(let millis) = element { return StoredValue.isoText(Int64(millis)) }
                return map(element)
            }
        }
        if field.type == .scalar(.json) { return map(value) }
        switch value {
        case .string(let text): return text
        case .bool(let flag): return flag
        case .number(let number):
            switch field.type {
            case .scalar(.dateTime): return StoredValue.isoText(Int64(number))
            case .scalar(.int): return Int(exactly: number.rounded()) ?? 0
            default: return number
            }
        case .array, .object, .null: return map(value)
        }
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
            let list = (try? JSONValue(parsing: text))?.arrayValue ?? []
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
            return map((try? JSONValue(parsing: text)) ?? .null)
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

    /// A record as ``output(_:model:)`` makes it, as JSON: what an error's `extensions` carry.
    static func json(output record: [String: any Sendable]) -> JSONValue {
        .object(record.mapValues(json(outputValue:)))
    }

    /// One value of a record as ``output(_:model:)`` makes it, as JSON.
    static func json(outputValue value: any Sendable) -> JSONValue {
        switch value {
        case let text as String: return .string(text)
        case let number as Int: return .number(Double(number))
        case let number as Double: return .number(number)
        case let flag as Bool: return .bool(flag)
        case let map as Map: return json(map)
        case let list as [any Sendable]: return .array(list.map(json(outputValue:)))
        case let record as [String: any Sendable]: return json(output: record)
        default: return .null
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
