import Foundation
import GraphQL
import KizunaCore
import OrderedCollections
import Synchronization

/// The named GraphQL types of one client schema, each made once: GraphQL wants one instance per name, and models
/// refer to each other (a room's messages, a message's room), so object fields are resolved lazily through here.
final class ClientTypes: Sendable {
    let data: DataSchema
    /// Serves relation fields (through ``DataRuntime/relationResolver(_:_:)``) when the schema is executable.
    let runtime: DataRuntime?
    /// Behind a lock because GraphQL reads input fields lazily, from any request; the lock is never held while a
    /// type is made, since making one makes the types it refers to.
    private let named = Mutex<[String: any GraphQLNamedType]>([:])

    init(_ data: DataSchema, runtime: DataRuntime? = nil) {
        self.data = data
        self.runtime = runtime
    }

    /// Every type made so far, for the schema's type list.
    func registered() -> [any GraphQLNamedType] {
        named.withLock { named in named.keys.sorted().compactMap { named[$0] } }
    }

    func once<T: GraphQLNamedType>(_ name: String, _ make: () throws -> T) rethrows -> T {
        if let existing = named.withLock({ $0[name] as? T }) { return existing }
        let made = try make()
        return named.withLock { named in
            // Made twice only if two threads raced to make it: the first one in wins, so there is one instance per name.
            if let existing = named[name] as? T { return existing }
            named[name] = made
            return made
        }
    }

    // MARK: Output types

    /// The object type of a model: its stored fields, then its relations.
    func object(_ model: String) throws -> GraphQLObjectType {
        try once(model) {
            try GraphQLObjectType(name: model) { [weak self] in
                guard let self, let definition = data.model(named: model) else { return [:] }
                var fields: GraphQLFieldMap = [:]
                for field in definition.fields {
                    fields[field.name] = GraphQLField(type: try outputType(field))
                }
                fields["_deleted"] = GraphQLField(
                    type: GraphQLNonNull(GraphQLBoolean), description: "True for a deleted record, as `sync` returns it (a tombstone).")
                for relation in definition.relations {
                    switch relation.kind {
                    case .belongsTo:
                        fields[relation.field] = GraphQLField(
                            type: try object(relation.target), resolve: runtime?.relationResolver(definition, relation))
                    case .hasMany:
                        guard let target = data.model(named: relation.target) else { continue }
                        fields[relation.field] = GraphQLField(
                            type: GraphQLNonNull(try connection(relation.target)), args: try pageArguments(target),
                            resolve: runtime?.relationResolver(definition, relation))
                    }
                }
                return fields
            }
        }
    }

    /// `ModelXConnection { items, nextToken }`: one page.
    func connection(_ model: String) throws -> GraphQLObjectType {
        try once("Model\(model)Connection") {
            try GraphQLObjectType(
                name: "Model\(model)Connection",
                description: "A page of \(model) records; `nextToken` asks for the next page, and is null after the last.",
                fields: [
                    "items": GraphQLField(type: GraphQLNonNull(GraphQLList(try object(model)))),
                    "nextToken": GraphQLField(type: GraphQLString),
                ])
        }
    }

    /// `ModelXSyncConnection { items, nextToken, lastSeq }`: a page of changes.
    func syncConnection(_ model: String) throws -> GraphQLObjectType {
        try once("Model\(model)SyncConnection") {
            try GraphQLObjectType(
                name: "Model\(model)SyncConnection",
                description: "A page of \(model) changes in order; deleted records come with `_deleted: true`.",
                fields: [
                    "items": GraphQLField(type: GraphQLNonNull(GraphQLList(try object(model)))),
                    "nextToken": GraphQLField(type: GraphQLString),
                    "lastSeq": GraphQLField(
                        type: GraphQLNonNull(GraphQLString), description: "Pass as `since` to the next sync to get what changed after."),
                ])
        }
    }

    private func outputType(_ field: DataField) throws -> any GraphQLOutputType {
        let element = try namedType(field.type)
        let nullable: any GraphQLNullableType & GraphQLOutputType =
            field.isList ? GraphQLList(GraphQLNonNull(element as any GraphQLNullableType)) : element
        return field.isRequired ? GraphQLNonNull(nullable as any GraphQLNullableType) : nullable
    }

    /// The scalar or enum type a field's values have.
    func namedType(_ type: FieldType) throws -> any GraphQLNamedType & GraphQLInputType & GraphQLOutputType {
        switch type {
        case .scalar(let scalar):
            switch scalar {
            case .id: return GraphQLID
            case .string: return GraphQLString
            case .int: return GraphQLInt
            case .float: return GraphQLFloat
            case .boolean: return GraphQLBoolean
            case .dateTime: return ClientScalars.dateTime
            case .json: return ClientScalars.json
            }
        case .enumeration(let name):
            let enumeration: GraphQLEnumType = try once(name) {
                let values = data.enumeration(named: name)?.values ?? []
                var map: GraphQLEnumValueMap = [:]
                for value in values { map[value] = GraphQLEnumValue(value: .string(value)) }
                return try GraphQLEnumType(name: name, values: map)
            }
            return enumeration
        }
    }

    /// `ModelSortDirection`: `ASC` or `DESC`.
    func sortDirection() throws -> GraphQLEnumType {
        try once("ModelSortDirection") {
            try GraphQLEnumType(name: "ModelSortDirection", values: ["ASC": GraphQLEnumValue(value: "ASC"), "DESC": GraphQLEnumValue(value: "DESC")])
        }
    }

    // MARK: Arguments

    /// `filter`, `sortDirection`, `limit`, `nextToken`: a list query's arguments.
    func pageArguments(_ model: DataModel) throws -> GraphQLArgumentConfigMap {
        [
            "filter": GraphQLArgument(type: try filter(model.name, condition: false)),
            "sortDirection": GraphQLArgument(type: try sortDirection(), description: "By createdAt, then id; ASC when left out."),
            "limit": GraphQLArgument(type: GraphQLInt, description: "Records to return (1–1000; 100 when left out), counted after the filter."),
            "nextToken": GraphQLArgument(type: GraphQLString),
        ]
    }

    /// An index query's arguments: its partition key (required), a condition on its first sort key, then a page's.
    func indexArguments(_ model: DataModel, _ index: DataIndex) throws -> GraphQLArgumentConfigMap {
        var arguments: GraphQLArgumentConfigMap = [:]
        if let key = model.field(named: index.partitionKey) {
            arguments[key.name] = GraphQLArgument(type: GraphQLNonNull(try namedType(key.type)))
        }
        if let first = index.sortKeys.first, let sortKey = model.field(named: first) {
            arguments[sortKey.name] = GraphQLArgument(type: try keyCondition(sortKey.type))
        }
        for (name, argument) in try pageArguments(model) { arguments[name] = argument }
        return arguments
    }
}
