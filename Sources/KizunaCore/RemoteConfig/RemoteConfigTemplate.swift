import Foundation

/// A remote config template: named conditions in order, and typed parameters with defaults and
/// conditional values.
///
/// The JSON form:
/// ```json
/// {
///   "conditions": [{"name": "beta", "when": {"appVersion": {">=": "3.10"}}, "description": "…"}],
///   "parameters": {
///     "welcome": {"type": "string", "default": "Hello", "conditionalValues": {"beta": "Hello, tester"},
///                 "description": "…", "group": "home"}
///   }
/// }
/// ```
/// A parameter's value is the conditional value of the first condition, in template order, that is true and
/// for which the parameter has a value; otherwise its default.
public struct RemoteConfigTemplate: Sendable {
    /// The most parameters a template may hold.
    public static let maximumParameters = 2000
    /// The most conditions a template may hold.
    public static let maximumConditions = 500

    /// A parameter's type.
    public enum ValueType: String, Sendable, Hashable, CaseIterable {
        case string, number, bool, json

        /// A value of this type written as text — on the command line (`kizuna config set`), or in a Firebase
        /// template, which keeps every value as text: a string as it is; a number or `true`/`false` (any case)
        /// with surrounding spaces ignored; JSON parsed.
        /// - Throws: `validation_failed` saying what the text is not.
        public func value(fromText text: String) throws(KizunaError) -> JSONValue {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch self {
            case .string:
                return .string(text)
            case .number:
                guard let number = Double(trimmed), number.isFinite else { throw KizunaError(.validationFailed, "'\(text)' is not a number") }
                return .number(number)
            case .bool:
                switch trimmed.lowercased() {
                case "true": return .bool(true)
                case "false": return .bool(false)
                default: throw KizunaError(.validationFailed, "'\(text)' is not true or false")
                }
            case .json:
                guard let json = try? JSONValue(parsing: text) else {
                    let shown = text.count > 60 ? text.prefix(60) + "…" : Substring(text)
                    throw KizunaError(.validationFailed, "'\(shown)' is not JSON")
                }
                return json
            }
        }
    }

    /// A named condition.
    public struct NamedCondition: Sendable {
        public let name: String
        public let condition: Condition
    }

    /// A typed parameter.
    public struct Parameter: Sendable {
        public let type: ValueType
        public let defaultValue: JSONValue
        /// Values by condition index in ``RemoteConfigTemplate/conditions``.
        let conditionalValues: [(index: Int, value: JSONValue)]
    }

    /// The conditions, in the order they are tried.
    public let conditions: [NamedCondition]
    /// The parameters by key.
    public let parameters: [String: Parameter]
    /// The template exactly as published.
    public let source: JSONValue
    /// The indexes of the conditions some parameter has a value for, ascending: the only ones an answer depends on.
    let referenced: [Int]

    /// An empty template: no conditions and no parameters.
    public static let empty = try! RemoteConfigTemplate(parsing: .object([:]))

    /// Reads and checks a template.
    ///
    /// - Throws: `validation_failed` listing every problem, each with the JSON path of its node.
    public init(parsing source: JSONValue) throws(KizunaError) {
        var reader = DocumentReader()
        var conditions: [NamedCondition] = []
        var parameters: [String: Parameter] = [:]
        if let root = reader.object(source, at: .root) {
            reader.rejectUnknownKeys(root, known: ["conditions", "parameters"], at: .root)
            let declared: Set<String>
            (conditions, declared) = Self.conditions(root["conditions"], reader: &reader)
            parameters = Self.parameters(root["parameters"], conditions: conditions, declared: declared, reader: &reader)
        }
        try reader.throwIfFailed("The template")
        self.conditions = conditions
        self.parameters = parameters
        self.source = source
        referenced = Set(parameters.values.flatMap { $0.conditionalValues.map(\.index) }).sorted()
    }

    /// The valid conditions, and the names of all, valid or not.
    private static func conditions(_ value: JSONValue?, reader: inout DocumentReader) -> ([NamedCondition], Set<String>) {
        let path = JSONPath.root["conditions"]
        guard let value, let list = reader.array(value, at: path) else { return ([], []) }
        if list.count > maximumConditions { reader.problem(path, "holds \(list.count) conditions; at most \(maximumConditions) are allowed") }
        var seen: Set<String> = []
        var result: [NamedCondition] = []
        for (index, element) in list.enumerated() {
            let at = path[index]
            guard let object = reader.object(element, at: at) else { continue }
            reader.rejectUnknownKeys(object, known: ["name", "when", "description"], at: at)
            let name = object["name"].flatMap { reader.string($0, at: at["name"]) }
            if object["name"] == nil { reader.problem(at["name"], "is required", code: "missing") }
            if let name, name.isEmpty { reader.problem(at["name"], "must not be empty", code: "empty") }
            if let name, !name.isEmpty, !seen.insert(name).inserted {
                reader.problem(at["name"], "\"\(name)\" names an earlier condition too; names must be unique", code: "duplicate")
            }
            if let description = object["description"] { _ = reader.string(description, at: at["description"]) }
            guard let when = object["when"] else {
                reader.problem(at["when"], "is required: the condition itself", code: "missing")
                continue
            }
            if let condition = Condition.parse(when, at: at["when"], reader: &reader), let name {
                result.append(NamedCondition(name: name, condition: condition))
            }
        }
        return (result, seen)
    }

    private static func parameters(
        _ value: JSONValue?,
        conditions: [NamedCondition],
        declared: Set<String>,
        reader: inout DocumentReader
    ) -> [String: Parameter] {
        let path = JSONPath.root["parameters"]
        guard let value, let object = reader.object(value, at: path) else { return [:] }
        if object.count > maximumParameters { reader.problem(path, "holds \(object.count) parameters; at most \(maximumParameters) are allowed") }
        let conditionIndex = Dictionary(conditions.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var result: [String: Parameter] = [:]
        for key in object.keys.sorted() {
            let at = path[key]
            if !isValidKey(key) {
                reader.problem(at, "\"\(key)\" is not a parameter key: use 1 to 256 letters, digits, '_', '-' or '.', starting with a letter or '_'")
            }
            guard let parameter = reader.object(object[key]!, at: at) else { continue }
            reader.rejectUnknownKeys(parameter, known: ["type", "default", "conditionalValues", "description", "group"], at: at)
            for field in ["description", "group"] { if let text = parameter[field] { _ = reader.string(text, at: at[field]) } }
            guard let typeValue = parameter["type"] else {
                reader.problem(at["type"], "is required: string, number, bool or json", code: "missing")
                continue
            }
            guard let typeName = reader.string(typeValue, at: at["type"]) else { continue }
            guard let type = ValueType(rawValue: typeName) else {
                reader.problem(at["type"], "\"\(typeName)\" is not a type; expected string, number, bool or json")
                continue
            }
            guard let defaultValue = parameter["default"] else {
                reader.problem(at["default"], "is required", code: "missing")
                continue
            }
            var valid = check(defaultValue, is: type, at: at["default"], reader: &reader)
            var conditional: [(index: Int, value: JSONValue)] = []
            if let values = parameter["conditionalValues"], let byName = reader.object(values, at: at["conditionalValues"]) {
                for name in byName.keys.sorted() {
                    guard let index = conditionIndex[name] else {
                        // A declared condition that failed to parse has its own problem already.
                        if !declared.contains(name) {
                            reader.problem(at["conditionalValues"][name], "names no condition in $.conditions", code: "unknown_condition")
                        }
                        valid = false
                        continue
                    }
                    valid = check(byName[name]!, is: type, at: at["conditionalValues"][name], reader: &reader) && valid
                    conditional.append((index, byName[name]!))
                }
            }
            if valid, isValidKey(key) {
                result[key] = Parameter(type: type, defaultValue: defaultValue, conditionalValues: conditional.sorted { $0.index < $1.index })
            }
        }
        return result
    }

    private static func isValidKey(_ key: String) -> Bool {
        guard let first = key.first, key.count <= 256, first.isASCIILetter || first == "_" else { return false }
        return key.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || "_-.".contains($0) }
    }

    private static func check(_ value: JSONValue, is type: ValueType, at path: JSONPath, reader: inout DocumentReader) -> Bool {
        switch (type, value) {
        case (.string, .string), (.bool, .bool), (.json, _): return true
        case (.number, .number(let number)) where number.isFinite: return true
        default:
            reader.problem(path, "must be a \(type.rawValue) value, not \(value.typeName)", code: "wrong_type")
            return false
        }
    }

    /// The value of every parameter for `context`.
    public func evaluate(_ context: EvaluationContext) -> [String: JSONValue] {
        evaluate(outcomes(context))
    }

    /// Which conditions hold for `context`: each one some parameter has a value for, evaluated once. The values
    /// depend on the device only through these, so two devices with the same outcomes get the same answer, and the
    /// outcomes can key a memo of encoded answers for one template version.
    public func outcomes(_ context: EvaluationContext) -> ConditionOutcomes {
        var outcomes = ConditionOutcomes(count: conditions.count)
        for index in referenced where conditions[index].condition.evaluate(context) { outcomes.set(index) }
        return outcomes
    }

    /// The value of every parameter when the conditions hold as `outcomes` says.
    public func evaluate(_ outcomes: ConditionOutcomes) -> [String: JSONValue] {
        parameters.mapValues { parameter in
            parameter.conditionalValues.first { outcomes[$0.index] }?.value ?? parameter.defaultValue
        }
    }
}

/// Which of a template's conditions hold, as bits by condition index.
public struct ConditionOutcomes: Sendable, Hashable {
    private var words: [UInt64]

    init(count: Int) { words = Array(repeating: 0, count: (count + 63) / 64) }

    mutating func set(_ index: Int) { words[index / 64] |= 1 << UInt64(index % 64) }

    subscript(index: Int) -> Bool { words[index / 64] & (1 << UInt64(index % 64)) != 0 }
}
