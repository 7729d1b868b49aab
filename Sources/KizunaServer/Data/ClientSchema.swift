import Foundation
import GraphQL
import KizunaCore
import OrderedCollections

/// The GraphQL API generated from an app's data schema: an object type per model, with Amplify's shapes and names
/// (`getX`, `listXs`, `createX`, `onCreateX`, `ModelXFilterInput`, `ModelXConnection`, …) so app teams' tooling and
/// habits carry over, plus one query per `@index` (`listXsBy<Index>`) and `syncXs` for offline caches.
///
/// Built with the GraphQL package's own type system, so introspection, validation and `printSchema` come with it.
/// The same builder will take the resolvers; without them it describes the API (the client SDL an app's codegen
/// reads).
package struct ClientSchema: Sendable {
    package let schema: GraphQLSchema
    /// Kept as long as the schema: GraphQL reads object and input fields lazily, through closures that hold the
    /// types weakly (a strong hold would be a cycle through the types they make).
    private let types: ClientTypes

    /// The API of `data`.
    /// - Throws: what the GraphQL package throws for a type system it refuses (a bug here, never the app's input:
    ///   `DataSchema` accepts only names and shapes that build).
    package init(_ data: DataSchema) throws {
        try self.init(data, resolvers: nil)
    }

    /// The API of `data`, served by `runtime` when given (an executable schema), else a description only.
    init(_ data: DataSchema, resolvers runtime: DataRuntime?) throws {
        let types = ClientTypes(data, runtime: runtime)
        self.types = types
        var query: GraphQLFieldMap = [:]
        var mutation: GraphQLFieldMap = [:]
        var subscription: GraphQLFieldMap = [:]
        for model in data.models {
            let names = ClientNames(model: model.name)
            let object = try types.object(model.name)
            let connection = try types.connection(model.name)
            query[names.get] = GraphQLField(
                type: object, args: ["id": GraphQLArgument(type: GraphQLNonNull(GraphQLID))],
                resolve: runtime?.getResolver(model))
            query[names.list] = GraphQLField(
                type: GraphQLNonNull(connection), args: try types.pageArguments(model),
                resolve: runtime?.listResolver(model, index: nil))
            for index in model.indexes {
                query[names.list(by: index.name)] = GraphQLField(
                    type: GraphQLNonNull(connection), args: try types.indexArguments(model, index),
                    resolve: runtime?.listResolver(model, index: index))
            }
            query[names.sync] = GraphQLField(
                type: GraphQLNonNull(try types.syncConnection(model.name)),
                description: "Every \(model.name) created, changed or deleted after `since` (a `lastSeq`), in that order.",
                args: [
                    "since": GraphQLArgument(type: GraphQLString, description: "The `lastSeq` of the previous sync; from the start when left out."),
                    "limit": GraphQLArgument(type: GraphQLInt), "nextToken": GraphQLArgument(type: GraphQLString),
                ],
                resolve: runtime?.syncResolver(model))
            let condition = GraphQLArgument(type: try types.filter(model.name, condition: true))
            mutation[names.create] = GraphQLField(
                type: object, args: ["input": GraphQLArgument(type: GraphQLNonNull(try types.createInput(model))), "condition": condition],
                resolve: runtime?.createResolver(model))
            mutation[names.update] = GraphQLField(
                type: object, args: ["input": GraphQLArgument(type: GraphQLNonNull(try types.updateInput(model))), "condition": condition],
                resolve: runtime?.updateResolver(model))
            mutation[names.delete] = GraphQLField(
                type: object, args: ["input": GraphQLArgument(type: GraphQLNonNull(try types.deleteInput(model))), "condition": condition],
                resolve: runtime?.deleteResolver(model))
            let events: [(name: String, kind: SubscriptionRequest.Kind)] = [
                (names.onCreate, .create), (names.onUpdate, .update), (names.onDelete, .delete),
            ]
            for event in events {
                subscription[event.name] = GraphQLField(
                    type: object, description: "Each \(model.name) \(event.kind.pastTense) that the caller may read and the filter matches.",
                    args: [
                        "filter": GraphQLArgument(type: try types.subscriptionFilter(model.name)),
                        "since": GraphQLArgument(
                            type: GraphQLString,
                            description: "The seq of the last change received (`extensions.seq`): the changes after it are sent first."),
                    ],
                    resolve: runtime?.subscriptionResolver(model))
            }
        }
        if query.isEmpty {
            // GraphQL needs a query type with a field; an app without models still answers introspection.
            query["_models"] = GraphQLField(type: GraphQLNonNull(GraphQLInt), description: "How many models the schema declares (none yet).")
        }
        schema = try GraphQLSchema(
            query: try GraphQLObjectType(name: "Query", fields: query),
            mutation: mutation.isEmpty ? nil : try GraphQLObjectType(name: "Mutation", fields: mutation),
            subscription: subscription.isEmpty ? nil : try GraphQLObjectType(name: "Subscription", fields: subscription),
            types: types.registered()
        )
    }

    /// The API as SDL, for an app's codegen and for people.
    package var sdl: String { printSchema(schema: schema) }
}

/// What the resolvers of one GraphQL request know: who asks, and what to note in the answer's `extensions`.
struct DataRequest: Sendable {
    let caller: DataCaller
    let notes: RequestNotes

    static func from(_ context: any Sendable) throws(KizunaError) -> DataRequest {
        guard let request = context as? DataRequest else { throw KizunaError(.internalError, "A data resolver ran without its request.") }
        return request
    }
}
