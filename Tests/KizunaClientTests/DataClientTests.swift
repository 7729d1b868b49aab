import Foundation
import KizunaCore
import Testing

@testable import KizunaClient

/// `app.data` against a live server over loopback: queries and mutations decoded into the app's own types, and every
/// way a call can fail arriving as a ``DataError`` that says which: the server's typed GraphQL errors, an answer that
/// does not fit the app's type, and no answer at all.
@Suite("Data API through the SDK")
struct DataClientTests {
    static let schema = """
        type Note @model @auth(rules: [{ allow: owner }]) {
          text: String!
          rank: Int
        }
        """

    /// The app's own type for a note: only what its documents select.
    struct Note: Codable, Sendable, Hashable {
        var id: String
        var text: String
        var rank: Int?
    }

    struct Page: Codable, Sendable {
        var items: [Note]
        var nextToken: String?
    }

    static let create = "mutation($input: CreateNoteInput!) { createNote(input: $input) { id text rank } }"
    static let get = "query($id: ID!) { getNote(id: $id) { id text rank } }"

    static func graphQLCode(_ error: any Error) -> KizunaError.Code? {
        guard case .graphQL(let errors, _) = error as? DataError else { return nil }
        return errors.first?.code
    }

    @Test func queriesAndMutationsDecodeIntoTheAppsTypesAndFailuresArriveTyped() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await server.createShop()
            let schema = SchemaDocument.document(sdl: Self.schema)
            _ = try await server.admin.publish(.schema, app: "shop", document: schema, message: nil, expecting: .any)
            let app = try AuthTests.app(server, directory: LiveServer.temporaryDirectory())

            // Signed out, the owner rule lets nobody in: the server's code, typed.
            await #expect {
                let _: Note = try await app.data.mutate(Self.create, variables: ["input": ["text": "milk"]], field: "createNote")
            } throws: { Self.graphQLCode($0) == .unauthorized }

            try await app.auth.signUp(identifier: "mio@example.com", password: AuthTests.password)
            let created: Note = try await app.data.mutate(Self.create, variables: ["input": ["text": "milk", "rank": 2]], field: "createNote")
            #expect(created.text == "milk" && created.rank == 2 && !created.id.isEmpty)
            let fetched: Note? = try await app.data.query(Self.get, variables: ["id": .string(created.id)], field: "getNote")
            #expect(fetched == created)
            let missing: Note? = try await app.data.query(Self.get, variables: ["id": "no-such-note"], field: "getNote")
            #expect(missing == nil)
            let list = GraphQLOperation<Page>(document: "{ listNotes { items { id text rank } nextToken } }", field: "listNotes")
            let page = try await app.data.run(list)
            #expect(page.items == [created] && page.nextToken == nil)

            // A bad input names its field; the raw answer keeps the errors beside the data.
            await #expect {
                let _: Note = try await app.data.mutate(Self.create, variables: ["input": ["text": "x", "rank": "high"]], field: "createNote")
            } throws: { Self.graphQLCode($0) == .validationFailed }
            let raw = try await app.data.execute("{ listNotes { items { id } } nope }")
            #expect(raw.data == nil && raw.errors.first?.code == .validationFailed, "\(raw)")

            // An answer that does not fit the app's type is the app's mistake, and says so.
            await #expect {
                let _: [Note] = try await app.data.query(Self.get, variables: ["id": .string(created.id)], field: "getNote")
            } throws: { error in
                guard case .decoding(let message) = error as? DataError else { return false }
                return message.contains("getNote")
            }
        }
    }

    @Test func noServerIsATransportFailureNotAGraphQLError() async throws {
        let app = try KizunaApp(
            server: try #require(URL(string: "http://127.0.0.1:9")), appId: "shop", directory: LiveServer.temporaryDirectory(),
            device: DeviceContext(appVersion: "1.0", platform: .ios), timeout: .seconds(5),
            secureStore: try SecureStore(service: "kizuna.shop", fileOptions: .init(directory: LiveServer.temporaryDirectory())))
        await #expect {
            let _: Note? = try await app.data.query(Self.get, variables: ["id": "a"], field: "getNote")
        } throws: { error in
            guard case .transport(let cause) = error as? DataError else { return false }
            return cause.code == .transport || cause.code == .timeout
        }
    }
}
