import Foundation
import GraphQL
import KizunaCore

extension DataSchemaChecker {
    /// The arguments of `directive` by name, with a problem for each one it does not take and each given twice.
    @discardableResult
    mutating func directiveArguments(of directive: GraphQL.Directive, allowed: [String], subject: String) -> [String: GraphQL.Argument] {
        var found: [String: GraphQL.Argument] = [:]
        for argument in directive.arguments {
            let name = argument.name.value
            guard allowed.contains(name) else {
                let expected = allowed.isEmpty ? "it takes none" : "it takes \(allowed.joined(separator: ", "))"
                problem("unknown_argument", "\(subject): @\(directive.name.value) has no argument \(name); \(expected).", at: argument.name)
                continue
            }
            guard found[name] == nil else {
                problem("duplicate_argument", "\(subject): @\(directive.name.value) is given \(name) twice.", at: argument.name)
                continue
            }
            found[name] = argument
        }
        return found
    }

    /// The string `value`, or `nil` after a problem.
    mutating func string(_ value: any GraphQL.Value, subject: String, what: String) -> String? {
        if let string = value as? StringValue { return string.value }
        problem("wrong_type", "\(subject): \(what) must be a string, not \(Self.describe(value)).", at: value)
        return nil
    }

    /// The strings in the list `value` (a single string counts as a list of one, as GraphQL reads input), or `nil`
    /// after a problem.
    mutating func strings(_ value: any GraphQL.Value, subject: String, what: String) -> [String]? {
        if let string = value as? StringValue { return [string.value] }
        guard let list = value as? ListValue else {
            problem("wrong_type", "\(subject): \(what) must be a list of strings, not \(Self.describe(value)).", at: value)
            return nil
        }
        var strings: [String] = []
        for element in list.values {
            guard let string = element as? StringValue else {
                problem("wrong_type", "\(subject): \(what) must be a list of strings; this is \(Self.describe(element)).", at: element)
                return nil
            }
            strings.append(string.value)
        }
        return strings
    }

    /// A name written bare (`owner`, as Amplify does) or as a string (`"owner"`), or `nil` after a problem.
    mutating func symbol(_ value: any GraphQL.Value, subject: String, what: String) -> String? {
        if let name = value as? EnumValue { return name.value }
        if let string = value as? StringValue { return string.value }
        problem("wrong_type", "\(subject): \(what) must be a name such as owner, not \(Self.describe(value)).", at: value)
        return nil
    }

    /// What a value is, in words, for a message saying it is the wrong kind.
    static func describe(_ value: any GraphQL.Value) -> String {
        switch value {
        case is StringValue: "a string"
        case let name as EnumValue: "the name \(name.value)"
        case is IntValue, is FloatValue: "a number"
        case is BooleanValue: "true or false"
        case is NullValue: "null"
        case is ListValue: "a list"
        case is ObjectValue: "an object"
        default: "a variable"
        }
    }

    /// Reads `@default(value: "…")`: a string, as Amplify writes it for every type, converted to the field's type
    /// and checked here so a create never stores a default its own field would refuse.
    mutating func defaultValue(_ directive: GraphQL.Directive, for field: DataField, subject: String) -> JSONValue? {
        let arguments = directiveArguments(of: directive, allowed: ["value"], subject: subject)
        guard let argument = arguments["value"] else {
            problem("missing_argument", "\(subject): @default needs value: \"…\".", at: directive)
            return nil
        }
        if let number = argument.value as? IntValue {
            problem("wrong_type", "\(subject): write the default as a string, @default(value: \"\(number.value)\").", at: argument.value)
            return nil
        }
        guard let text = string(argument.value, subject: subject, what: "@default's value") else { return nil }
        guard !field.isList else {
            problem("bad_default", "\(subject): list fields take no @default; a create without the field stores no list.", at: directive)
            return nil
        }
        let values = enumValues(of: field.type)
        guard let value = Self.convert(text, to: field.type, enumValues: values) else {
            problem(
                "bad_default", "\(subject): the default \"\(text)\" is not \(Self.expectation(for: field.type, enumValues: values)).",
                at: argument.value)
            return nil
        }
        return value
    }

    private func enumValues(of type: FieldType) -> [String] {
        guard case .enumeration(let name) = type else { return [] }
        return enums.first { $0.name == name }?.values ?? []
    }

    /// `text` as a value of `type`, or `nil` when it is not one.
    static func convert(_ text: String, to type: FieldType, enumValues: [String]) -> JSONValue? {
        switch type {
        case .scalar(.id), .scalar(.string):
            return .string(text)
        case .scalar(.int):
            // JSON numbers are doubles: beyond 2^53 an integer would come back changed.
            guard let number = Int(text), number.magnitude <= 1 << 53 else { return nil }
            return .number(Double(number))
        case .scalar(.float):
            guard let number = Double(text), number.isFinite else { return nil }
            return .number(number)
        case .scalar(.boolean):
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return nil
            }
        case .scalar(.dateTime):
            return isDateTime(text) ? .string(text) : nil
        case .scalar(.json):
            return try? JSONValue(parsing: text)
        case .enumeration:
            return enumValues.contains(text) ? .string(text) : nil
        }
    }

    /// Whether `text` is an ISO 8601 date and time with a time zone, with or without fractional seconds.
    static func isDateTime(_ text: String) -> Bool {
        StoredValue.epochMilliseconds(text) != nil  // the one reading of DateTime the filters and the scalar use too
    }

    /// What a default of `type` must look like, for the message refusing one.
    private static func expectation(for type: FieldType, enumValues: [String]) -> String {
        switch type {
        case .scalar(.int): "a whole number such as \"3\""
        case .scalar(.float): "a number such as \"1.5\""
        case .scalar(.boolean): "\"true\" or \"false\""
        case .scalar(.dateTime): "an ISO 8601 date and time such as \"2025-01-31T09:00:00Z\""
        case .scalar(.json): "valid JSON"
        case .scalar(.id), .scalar(.string): "a string"
        case .enumeration(let name): "one of \(name)'s values (\(enumValues.joined(separator: ", ")))"
        }
    }
}
