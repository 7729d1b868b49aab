import GraphQL
import KizunaCore
import Testing

@testable import KizunaServer

/// Subscribe payloads parsed and checked once: Amplify's `onCreateX`/`onUpdateX`/`onDeleteX` with `filter` and
/// `since`, and every refusal with a stable code, a bad filter's as a list query's.
@Suite("Subscription requests")
struct SubscriptionRequestTests {
    @Test func theSchemaHasAmplifysSubscriptions() async throws {
        let client = try ClientSchema(try DataSchema(sdl: ChatFixture.sdl))
        let introspection = "{ __schema { subscriptionType { fields { name type { name } args { name type { name } } } } } }"
        let result = try await graphql(schema: client.schema, request: introspection)
        let fields = DataRecords.json(try #require(result.data))["__schema"]?["subscriptionType"]?["fields"]?.arrayValue ?? []
        for model in ["Room", "Message", "Note"] {
            for name in ["onCreate\(model)", "onUpdate\(model)", "onDelete\(model)"] {
                let field = try #require(fields.first(where: { $0["name"] == .string(name) }), "\(name) missing")
                #expect(field["type"]?["name"] == .string(model))
                let arguments = field["args"]?.arrayValue ?? []
                #expect(arguments.first(where: { $0["name"] == "filter" })?["type"]?["name"] == .string("ModelSubscription\(model)FilterInput"))
                #expect(arguments.first(where: { $0["name"] == "since" })?["type"]?["name"] == "String")
            }
        }
        for expected in ["type Subscription {", "input ModelSubscriptionMessageFilterInput {", "not: ModelSubscriptionMessageFilterInput"] {
            #expect(client.sdl.contains(expected), "\(expected) missing from:\n\(client.sdl)")
        }
    }

    @Test func aSubscriptionIsParsedOnce() async throws {
        try await withMigratedStore(.sqlite) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            let request = try await fixture.subscribe(
                """
                subscription Mine($filter: ModelSubscriptionNoteFilterInput, $since: String) {
                  changed: onUpdateNote(filter: $filter, since: $since) { id text }
                }
                """, variables: ["filter": ["text": ["beginsWith": "urgent"]], "since": "42"], as: SubscriptionFixture.alice)
            #expect(request.model.name == "Note" && request.kind == .update && request.since == 42)
            #expect(request.filter.matches(["text": "urgent: milk"]) && !request.filter.matches(["text": "milk"]))
            #expect(request.operationName == nil && request.variables["since"] == .string("42"))

            // A variable's default is read as each delivery will read it; no filter matches everything.
            let defaulted = try await fixture.subscribe(
                """
                subscription ($filter: ModelSubscriptionNoteFilterInput = { text: { eq: "x" } }) { onDeleteNote(filter: $filter) { id } }
                """, as: SubscriptionFixture.alice)
            #expect(defaulted.kind == .delete && defaulted.since == nil)
            #expect(defaulted.filter.matches(["text": "x"]) && !defaulted.filter.matches(["text": "y"]))
            let everything = try await fixture.subscribe("subscription { onCreateNote { id } }", as: SubscriptionFixture.alice)
            #expect(everything.kind == .create && everything.filter.matches([:]))
        }
    }

    @Test func refusalsSayWhatIsWrong() async throws {
        try await withMigratedStore(.sqlite) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            func code(_ errors: [JSONValue]?) -> String? { errors?.first?["extensions"]?["code"]?.stringValue }
            func message(_ errors: [JSONValue]?) -> String { errors?.first?["message"]?.stringValue ?? "" }

            let query = try await fixture.refusal("query { getNote(id: \"n1\") { id } }")
            #expect(code(query) == "validation_failed" && message(query).contains("not a subscription"))
            let mutation = try await fixture.refusal("mutation { deleteNote(input: {id: \"n1\"}) { id } }")
            #expect(code(mutation) == "validation_failed" && message(mutation).contains("not a subscription"))

            let two = try await fixture.refusal("subscription { onCreateNote { id } onDeleteNote { id } }")
            #expect(code(two) == "validation_failed" && message(two).contains("exactly one root field"))
            let hidden = try await fixture.refusal(
                "subscription { ...Both } fragment Both on Subscription { onCreateNote { id } b: onCreateNote { text } }")
            #expect(message(hidden).contains("selects 2"))
            let typename = try await fixture.refusal("subscription { __typename }")
            #expect(code(typename) == "validation_failed" && message(typename).contains("__typename"))

            let unknown = try await fixture.refusal("subscription { onCreateNothing { id } }")
            #expect(code(unknown) == "validation_failed" && message(unknown).contains("onCreateNothing"))
            let badVariable = try await fixture.refusal(
                "subscription ($since: String) { onCreateNote(since: $since) { id } }", variables: ["since": ["not": "a string"]])
            #expect(code(badVariable) == "validation_failed")

            // A bad filter: every problem, with its path, as a list query answers.
            let filter = try await fixture.refusal(
                "subscription ($f: ModelSubscriptionNoteFilterInput) { onCreateNote(filter: $f) { id } }",
                variables: ["f": ["text": ["between": ["a"]], "or": []]])
            #expect(code(filter) == "validation_failed" && filter?.first?["extensions"]?["field"] == "filter")
            let paths = filter?.first?["extensions"]?["details"]?.arrayValue?.compactMap { $0["field"]?.stringValue }
            #expect(Set(paths ?? []) == ["filter.text.between", "filter.or"])

            let since = try await fixture.refusal("subscription { onCreateNote(since: \"-1\") { id } }")
            #expect(code(since) == "validation_failed" && since?.first?["extensions"]?["field"] == "since")

            // No read rule of Note lets these in: refused now, as a query would be.
            let anonymous = try await fixture.refusal("subscription { onCreateNote { id } }", as: .anonymous)
            #expect(code(anonymous) == "unauthorized")
            let keyOnly = try await fixture.refusal("subscription { onCreateSecret { id } }", as: DataCaller(hasAPIKey: true))
            #expect(code(keyOnly) == "forbidden")
        }
    }

    /// Posted over HTTP, a subscription has no record to answer: an error, not a crash or an empty success.
    @Test func aSubscriptionPostedOverHTTPIsAnError() async throws {
        try await withMigratedStore(.sqlite) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            let document = try GraphQL.parse(source: GraphQL.Source(body: "subscription { onCreateNote { id } }"))
            let result = try await GraphQL.execute(
                schema: try fixture.runtime.schema(), documentAST: document, rootValue: (),
                context: DataRequest(caller: SubscriptionFixture.alice, notes: RequestNotes()))
            #expect((result.errors.first?.originalError as? KizunaError)?.code == .badRequest)
        }
    }
}
