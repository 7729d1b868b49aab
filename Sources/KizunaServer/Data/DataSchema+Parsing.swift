import Foundation
import GraphQL
import KizunaCore

extension DataSchema {
    /// Parses and checks `sdl`, the schema an app publishes.
    ///
    /// Every problem is found in one pass and thrown together, each with its line and column, so a person fixes the
    /// whole file at once instead of publishing it once per mistake. Text with no definitions (only white space and
    /// comments) is ``empty``.
    /// - Parameter sdl: GraphQL SDL: `@model` object types and enums, with `@index`, `@default`, `@belongsTo`,
    ///   `@hasMany` and `@auth`.
    /// - Throws: `validation_failed` with field `sdl`, one detail per problem, each with a stable code, field `sdl`,
    ///   and its `line` and `column`.
    package init(sdl: String) throws(KizunaError) {
        let text = SDLText(sdl)
        if text.isBlank {
            self = .empty
            return
        }
        var checker = DataSchemaChecker(text: text)
        if let offset = text.offsetNestedDeeper(than: SDLText.maximumNesting) {
            checker.problem(
                "too_deep", "Brackets are nested more than \(SDLText.maximumNesting) deep; a data schema never needs that.", offset: offset)
        } else {
            do {
                let document = try GraphQL.parse(source: sdl)
                checker.read(document)
            } catch {
                checker.syntaxError(error)
            }
        }
        self = try checker.schema()
    }
}

/// One pass over a parsed SDL document that builds the models and records every problem with where it is.
///
/// Reading goes in phases because names point forward: type names are declared first so a field can refer to a model
/// further down, relations resolve once every model's fields are known, owner rules may add an `owner` field, and
/// indexes come last because their sort keys may name the automatic fields.
struct DataSchemaChecker {
    /// The most models a schema may declare, and the most fields a model may.
    static let maximumModels = 200
    static let maximumFields = 200
    /// The longest model or enum name, and the longest field name: they become table and column names.
    static let maximumTypeNameLength = 48
    static let maximumFieldNameLength = 60

    /// What a declared type name stands for.
    enum Declared: Equatable {
        case model, enumeration
        /// An object type without `@model`; not supported yet.
        case plainObject
    }

    let text: SDLText
    /// The problems found so far, in the order they were found.
    var problems: [KizunaError.Detail] = []
    var declared: [String: Declared] = [:]
    var enums: [DataEnum] = []
    var drafts: [ModelDraft] = []

    init(text: SDLText) {
        self.text = text
    }

    /// Records a problem at `node`'s first character.
    mutating func problem(_ code: String, _ message: String, at node: (any GraphQL.Node)?) {
        problem(code, message, offset: node?.loc?.start)
    }

    /// Records a problem at a UTF-8 offset into the SDL, or with no place when there is none.
    mutating func problem(_ code: String, _ message: String, offset: Int?) {
        let position = offset.map { text.position(of: $0) }
        problems.append(KizunaError.Detail(code: code, message: message, field: "sdl", line: position?.line, column: position?.column))
    }

    /// Records the parser's error, keeping its sentence and dropping the place and source excerpt it repeats.
    mutating func syntaxError(_ error: any Error) {
        guard let error = error as? GraphQLError else {
            problem("syntax_error", "The SDL could not be parsed.", offset: nil)
            return
        }
        var message = error.message
        if let excerpt = message.range(of: "\n\n") { message = String(message[..<excerpt.lowerBound]) }
        if message.hasPrefix("Syntax Error "), let place = message.range(of: ") ") { message = String(message[place.upperBound...]) }
        let detail = "Syntax error: \(message)"
        if let offset = error.positions.first {
            problem("syntax_error", detail, offset: offset)
        } else {
            let location = error.locations.first
            problems.append(KizunaError.Detail(code: "syntax_error", message: detail, field: "sdl", line: location?.line, column: location?.column))
        }
    }

    /// The checked schema, or `validation_failed` listing every problem.
    func schema() throws(KizunaError) -> DataSchema {
        guard !problems.isEmpty else { return DataSchema(models: drafts.map(\.model), enums: enums) }
        // In the order they appear in the file, whichever phase found them, so a person reads them top to bottom.
        func place(_ index: Int) -> [Int] { [problems[index].line ?? 0, problems[index].column ?? 0, index] }
        let sorted = problems.indices.sorted { place($0).lexicographicallyPrecedes(place($1)) }.map { problems[$0] }
        let first = sorted[0]
        let location = first.line.map { "line \($0), column \(first.column ?? 1): " } ?? ""
        let more = sorted.count > 1 ? " (and \(sorted.count - 1) more \(sorted.count == 2 ? "problem" : "problems"))" : ""
        throw KizunaError(.validationFailed, "The data schema is not valid: \(location)\(first.message)\(more)", field: "sdl", details: sorted)
    }

    /// Reads every definition: names first, then enums, then models and what links them.
    mutating func read(_ document: GraphQL.Document) {
        var objects: [ObjectTypeDefinition] = []
        var enumTypes: [EnumTypeDefinition] = []
        for definition in document.definitions {
            switch definition {
            case let object as ObjectTypeDefinition:
                let isModel = object.directives.contains { $0.name.value == "model" }
                if declare(object.name, as: isModel ? .model : .plainObject) { objects.append(object) }
            case let enumType as EnumTypeDefinition:
                if declare(enumType.name, as: .enumeration) { enumTypes.append(enumType) }
            default:
                problem(
                    "unsupported_definition", "\(Self.describe(definition.kind)) is not supported in a data schema; declare @model types and enums.",
                    at: definition)
            }
        }
        for enumType in enumTypes { readEnum(enumType) }
        var models = 0
        for object in objects {
            guard declared[object.name.value] == .model else {
                problem("not_a_model", "\(object.name.value) has no @model; only @model types are supported for now.", at: object.name)
                continue
            }
            models += 1
            if models == Self.maximumModels + 1 {
                problem(
                    "too_many_models", "A data schema holds at most \(Self.maximumModels) models; \(object.name.value) is one too many.",
                    at: object.name)
            }
            let draft = readModel(object)
            drafts.append(draft)
        }
        resolveRelations()
        resolveRules()
        resolveIndexes()
    }

    /// Declares a type name; `false` (after a problem) when it cannot be used.
    private mutating func declare(_ name: GraphQL.Name, as kind: Declared) -> Bool {
        let value = name.value
        if declared[value] != nil {
            problem("duplicate_type", "\(value) is declared twice; type and enum names must be unique.", at: name)
            return false
        }
        if ScalarType.sdlNames.contains(value) {
            problem("reserved_name", "\(value) is a built-in scalar type; choose another name.", at: name)
            return false
        }
        declared[value] = kind
        // A bad name is still declared, so the fields that use it do not also fail as unknown types.
        _ = checkName(name, subject: value, maximumLength: Self.maximumTypeNameLength)
        return true
    }

    /// Checks a declared name: `_` starts the server's own names (`_version`), and names become table and column
    /// names, so they have a length limit. GraphQL's parser already holds them to `[_A-Za-z][_0-9A-Za-z]*`.
    mutating func checkName(_ name: GraphQL.Name, subject: String, maximumLength: Int) -> Bool {
        if name.value.hasPrefix("_") {
            problem("reserved_name", "\(subject): names starting with _ are reserved for the server's own fields.", at: name)
            return false
        }
        if name.value.count > maximumLength {
            problem("too_long", "\(subject): the name has \(name.value.count) characters; at most \(maximumLength) are allowed.", at: name)
            return false
        }
        return true
    }

    private mutating func readEnum(_ enumType: EnumTypeDefinition) {
        let name = enumType.name.value
        for directive in enumType.directives {
            problem("unknown_directive", "\(name): enums take no directives; remove @\(directive.name.value).", at: directive)
        }
        if enumType.values.isEmpty { problem("empty_enum", "\(name) has no values; an enum needs at least one.", at: enumType.name) }
        var values: [String] = []
        for value in enumType.values {
            let subject = "\(name).\(value.name.value)"
            for directive in value.directives {
                problem("unknown_directive", "\(subject): enum values take no directives; remove @\(directive.name.value).", at: directive)
            }
            guard checkName(value.name, subject: subject, maximumLength: Self.maximumFieldNameLength) else { continue }
            guard !values.contains(value.name.value) else {
                problem("duplicate_enum_value", "\(subject) is listed twice.", at: value.name)
                continue
            }
            values.append(value.name.value)
        }
        enums.append(DataEnum(name: name, values: values))
    }

    /// A definition's kind in words, for the message refusing it.
    static func describe(_ kind: GraphQL.Kind) -> String {
        switch kind {
        case .scalarTypeDefinition: "A custom scalar"
        case .interfaceTypeDefinition: "An interface"
        case .unionTypeDefinition: "A union"
        case .inputObjectTypeDefinition: "An input type"
        case .directiveDefinition: "A directive definition"
        case .schemaDefinition: "A schema definition"
        case .operationDefinition, .fragmentDefinition: "An operation"
        default: "A type extension"
        }
    }
}
