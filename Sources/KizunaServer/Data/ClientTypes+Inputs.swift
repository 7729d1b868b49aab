import Foundation
import GraphQL
import KizunaCore
import OrderedCollections

extension ClientTypes {
    /// `ModelXFilterInput` (or `ModelXConditionInput`, without `id`): a condition per field, combined with
    /// `and`, `or` and `not`.
    func filter(_ model: String, condition: Bool) throws -> GraphQLInputObjectType {
        try filterInput("Model\(model)\(condition ? "Condition" : "Filter")Input", model: model, withId: !condition)
    }

    /// `ModelSubscriptionXFilterInput`: a subscription's filter, under the name Amplify's generated documents declare
    /// their `$filter` variable with. Amplify's has fewer operators (no `not`, no `attributeExists`, booleans only
    /// `eq` and `ne`), all of which this takes as its list filter does: one grammar, decided by the same code.
    func subscriptionFilter(_ model: String) throws -> GraphQLInputObjectType {
        try filterInput("ModelSubscription\(model)FilterInput", model: model, withId: true)
    }

    private func filterInput(_ name: String, model: String, withId: Bool) throws -> GraphQLInputObjectType {
        try once(name) {
            try GraphQLInputObjectType(name: name) { [weak self] in
                guard let self, let definition = data.model(named: model) else { return [:] }
                var fields: InputObjectFieldMap = [:]
                for field in definition.fields where withId || field.name != "id" {
                    fields[field.name] = InputObjectField(type: try fieldFilter(field))
                }
                let this = try filterInput(name, model: model, withId: withId)
                fields["and"] = InputObjectField(type: GraphQLList(this))
                fields["or"] = InputObjectField(type: GraphQLList(this))
                fields["not"] = InputObjectField(type: this)
                return fields
            }
        }
    }

    /// The operators a field can be tested with, by its type (`ModelStringInput`, `ModelIntListInput`, …).
    private func fieldFilter(_ field: DataField) throws -> GraphQLInputObjectType {
        let element = try namedType(field.type)
        let typeName = element.name
        if field.isList {
            return try operators("Model\(typeName)ListInput", element, ["eq", "ne", "contains", "notContains", "attributeExists"], listValues: true)
        }
        switch field.type {
        case .scalar(.string), .scalar(.id):
            let all = ["ne", "eq", "le", "lt", "ge", "gt", "contains", "notContains", "between", "beginsWith", "attributeExists", "in", "notIn"]
            return try operators("Model\(typeName)Input", element, all)
        case .scalar(.int), .scalar(.float), .scalar(.dateTime):
            return try operators("Model\(typeName)Input", element, ["ne", "eq", "le", "lt", "ge", "gt", "between", "attributeExists", "in", "notIn"])
        case .scalar(.boolean):
            return try operators("Model\(typeName)Input", element, ["ne", "eq", "attributeExists"])
        case .scalar(.json):
            return try operators("Model\(typeName)Input", element, ["ne", "eq", "attributeExists"])
        case .enumeration:
            return try operators("Model\(typeName)Input", element, ["ne", "eq", "in", "notIn", "attributeExists"])
        }
    }

    /// `Model<Type>KeyConditionInput`: what an index query may say about its first sort key.
    func keyCondition(_ type: FieldType) throws -> GraphQLInputObjectType {
        let element = try namedType(type)
        var names = ["eq", "le", "lt", "ge", "gt", "between"]
        if case .scalar(let scalar) = type, scalar == .string || scalar == .id { names.append("beginsWith") }
        if case .enumeration = type { names.append("beginsWith") }
        return try operators("Model\(element.name)KeyConditionInput", element, names)
    }

    private func operators(
        _ name: String, _ element: any GraphQLNamedType & GraphQLInputType, _ names: [String], listValues: Bool = false
    ) throws -> GraphQLInputObjectType {
        try once(name) {
            var fields: InputObjectFieldMap = [:]
            let list = GraphQLList(GraphQLNonNull(element as any GraphQLNullableType))
            for operation in names {
                switch operation {
                case "attributeExists":
                    fields[operation] = InputObjectField(type: GraphQLBoolean, description: "Whether the field is set.")
                case "between":
                    fields[operation] = InputObjectField(type: list, description: "Two values, both included.")
                case "in", "notIn":
                    fields[operation] = InputObjectField(type: list, description: "At most 100 values.")
                case "eq", "ne":
                    // A list field is compared whole; `contains` tests one element.
                    fields[operation] = listValues ? InputObjectField(type: list, description: "The whole list.") : InputObjectField(type: element)
                default:
                    fields[operation] = InputObjectField(type: element)
                }
            }
            return try GraphQLInputObjectType(name: name, fields: fields)
        }
    }

    // MARK: Mutation inputs

    /// `CreateXInput`: the declared fields (required ones without a default required here too) and an optional
    /// client-generated `id`. Owner fields are not in it: the server fills them from the session.
    func createInput(_ model: DataModel) throws -> GraphQLInputObjectType {
        try once("Create\(model.name)Input") {
            var fields: InputObjectFieldMap = ["id": InputObjectField(type: GraphQLID, description: "A client-generated id makes retries safe.")]
            for field in writable(model) {
                let type = try inputType(field)
                let required = field.isRequired && field.defaultValue == nil
                fields[field.name] = InputObjectField(type: required ? GraphQLNonNull(type as any GraphQLNullableType) : type)
            }
            try addIgnoredOwners(model, to: &fields)
            return try GraphQLInputObjectType(name: "Create\(model.name)Input", fields: fields)
        }
    }

    /// `UpdateXInput`: the id, the fields to change, and the `_version` the change expects.
    func updateInput(_ model: DataModel) throws -> GraphQLInputObjectType {
        try once("Update\(model.name)Input") {
            var fields: InputObjectFieldMap = ["id": InputObjectField(type: GraphQLNonNull(GraphQLID))]
            for field in writable(model) { fields[field.name] = InputObjectField(type: try inputType(field)) }
            try addIgnoredOwners(model, to: &fields)
            fields["_version"] = InputObjectField(type: GraphQLInt, description: "The version this change expects; a conflict when it moved.")
            return try GraphQLInputObjectType(name: "Update\(model.name)Input", fields: fields)
        }
    }

    /// `DeleteXInput`: the id and the `_version` the delete expects.
    func deleteInput(_ model: DataModel) throws -> GraphQLInputObjectType {
        try once("Delete\(model.name)Input") {
            try GraphQLInputObjectType(
                name: "Delete\(model.name)Input",
                fields: [
                    "id": InputObjectField(type: GraphQLNonNull(GraphQLID)),
                    "_version": InputObjectField(type: GraphQLInt, description: "The version this delete expects; a conflict when it moved."),
                ])
        }
    }

    /// The fields a client writes: declared ones, without the owner fields of owner rules.
    func writable(_ model: DataModel) -> [DataField] {
        DataWrite.writable(model, ownerFields: model.serverFilledOwnerFields)
    }

    /// Owner fields the SDL declares are accepted, as Amplify's generated inputs and models send them, and ignored:
    /// the server sets them from the session, so a forged owner changes nothing.
    private func addIgnoredOwners(_ model: DataModel, to fields: inout InputObjectFieldMap) throws {
        for rule in model.rules where rule.via == nil {
            guard case .owner(let name) = rule.allow, let field = model.field(named: name), !field.isAutomatic, fields[name] == nil else { continue }
            fields[name] = InputObjectField(type: try inputType(field), description: "Ignored: the server sets it to the signed-in user.")
        }
    }

    private func inputType(_ field: DataField) throws -> any GraphQLInputType & GraphQLNullableType {
        let element = try namedType(field.type)
        return field.isList ? GraphQLList(GraphQLNonNull(element as any GraphQLNullableType)) : element
    }
}

/// Kizuna's two scalars beyond GraphQL's own.
enum ClientScalars {
    /// `DateTime`: an ISO 8601 date and time with its offset, such as `2026-11-23T09:00:00.250Z`.
    static let dateTime = try! GraphQLScalarType(
        name: "DateTime",
        description: "An ISO 8601 date and time with an offset, such as 2026-11-23T09:00:00.250Z (Amplify's AWSDateTime).",
        serialize: { value in try map(from: value) },
        parseValue: { value in
            guard case .string(let text) = value, StoredValue.epochMilliseconds(text) != nil else {
                throw GraphQLError(message: "DateTime must be an ISO 8601 string with an offset, such as 2026-11-23T09:00:00Z.")
            }
            return value
        },
        parseLiteral: { literal in
            guard let string = literal as? StringValue, StoredValue.epochMilliseconds(string.value) != nil else {
                throw GraphQLError(message: "DateTime must be an ISO 8601 string with an offset, such as 2026-11-23T09:00:00Z.")
            }
            return .string(string.value)
        })

    /// `JSON`: any JSON value, given and returned as JSON (not as a string holding JSON).
    static let json = try! GraphQLScalarType(
        name: "JSON", description: "Any JSON value.", serialize: { value in try map(from: value) }, parseValue: { $0 },
        parseLiteral: { literal in try valueFromASTUntyped(valueAST: literal) })
}

extension DataModel {
    /// The owner fields the server fills from the caller (owner rules without `via`): not a client's to write.
    package var serverFilledOwnerFields: [String] {
        var fields: [String] = []
        for rule in rules {
            if case .owner(let field) = rule.allow, rule.via == nil, !fields.contains(field) { fields.append(field) }
        }
        return fields
    }
}
