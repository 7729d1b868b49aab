import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// `syncXs(since:)`: what changed after a position, in commit order, tombstones included, within what the caller
/// may read; and the sweep that ends a tombstone's retention.
@Suite("Data sync")
struct DataSyncTests {
    static let sync = """
        query($since: String, $token: String, $limit: Int) {
          syncNotes(since: $since, nextToken: $token, limit: $limit) { items { id text _version _deleted } nextToken lastSeq }
        }
        """

    /// The seq of a `lastSeq` (`"<seq>:<time>"`).
    static func seq(_ lastSeq: String) -> Int64 {
        lastSeq.split(separator: ":").first.flatMap { Int64($0) } ?? -1
    }

    static func ids(_ answer: JSONValue) -> [String] {
        answer["data"]?["syncNotes"]?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test(arguments: TestBackend.available)
    func aSyncReturnsWhatChangedSinceItsLastPositionInOrder(_ backend: TestBackend) async throws {
        try await DataMutationTests.start(backend) { server, alice, bob in
            for id in ["n1", "n2", "n3"] {
                _ = try await DataMutationTests.graphQL(
                    server, "mutation { createNote(input: { id: \"\(id)\", text: \"\(id)\" }) { id } }", token: alice.token)
            }
            _ = try await DataMutationTests.graphQL(server, #"mutation { createNote(input: { id: "b1", text: "bob's" }) { id } }"#, token: bob.token)

            // From the start, two at a time: every record of Alice's once, in the order written.
            let first = try await DataMutationTests.graphQL(server, Self.sync, ["limit": 2], token: alice.token)
            #expect(Self.ids(first) == ["n1", "n2"], "\(first)")
            let token = try #require(first["data"]?["syncNotes"]?["nextToken"]?.stringValue)
            let second = try await DataMutationTests.graphQL(server, Self.sync, ["limit": 2, "token": .string(token)], token: alice.token)
            #expect(Self.ids(second) == ["n3"])
            #expect(second["data"]?["syncNotes"]?["nextToken"] == .null)
            let position = try #require(second["data"]?["syncNotes"]?["lastSeq"]?.stringValue)

            // Nothing since: an empty page that keeps the position.
            let idle = try await DataMutationTests.graphQL(server, Self.sync, ["since": .string(position)], token: alice.token)
            #expect(Self.ids(idle).isEmpty && idle["data"]?["syncNotes"]?["lastSeq"] == .string(position))

            // A change and a delete after it: both, in the order they happened, the delete as a tombstone.
            _ = try await DataMutationTests.graphQL(server, #"mutation { deleteNote(input: { id: "n2" }) { id } }"#, token: alice.token)
            _ = try await DataMutationTests.graphQL(server, #"mutation { updateNote(input: { id: "n1", text: "one" }) { id } }"#, token: alice.token)
            let delta = try await DataMutationTests.graphQL(server, Self.sync, ["since": .string(position)], token: alice.token)
            #expect(Self.ids(delta) == ["n2", "n1"])
            let items = delta["data"]?["syncNotes"]?["items"]?.arrayValue ?? []
            #expect(items.first?["_deleted"] == true && items.last?["text"] == "one" && items.last?["_version"] == 2)
            #expect(delta["data"]?["syncNotes"]?["lastSeq"] != .string(position))

            // Bob's sync holds only his own record, tombstones of others' included nowhere.
            let bobs = try await DataMutationTests.graphQL(server, Self.sync, token: bob.token)
            #expect(Self.ids(bobs) == ["b1"])

            // A last page answers the change log's head: a change of Bob's, which Alice may not read, still moves her
            // position past it, so a subscription resuming there has nothing of his to replay.
            let after = try #require(delta["data"]?["syncNotes"]?["lastSeq"]?.stringValue)
            _ = try await DataMutationTests.graphQL(server, #"mutation { createNote(input: { id: "b2", text: "bob's" }) { id } }"#, token: bob.token)
            let quiet = try await DataMutationTests.graphQL(server, Self.sync, ["since": .string(after)], token: alice.token)
            let moved = try #require(quiet["data"]?["syncNotes"]?["lastSeq"]?.stringValue)
            #expect(Self.ids(quiet).isEmpty && Self.seq(moved) > Self.seq(after), "\(after) → \(moved)")

            // Positions are checked: a made-up one is refused, one older than the retention is sync_expired.
            let garbage = try await DataMutationTests.graphQL(server, Self.sync, ["since": "yesterday"], token: alice.token)
            #expect(GraphQLEndpointTests.code(garbage) == "validation_failed")
            let ancient = try await DataMutationTests.graphQL(server, Self.sync, ["since": "5:1000"], token: alice.token)
            #expect(GraphQLEndpointTests.code(ancient) == "sync_expired")
            let foreign = try await DataMutationTests.graphQL(server, Self.sync, ["token": "x.y"], token: alice.token)
            #expect(GraphQLEndpointTests.code(foreign) == "bad_cursor")
        }
    }

    @Test(arguments: TestBackend.available)
    func tombstonesAreSweptAfterTheRetention(_ backend: TestBackend) async throws {
        try await DataMutationTests.start(backend) { server, alice, _ in
            for id in ["n1", "n2"] {
                _ = try await DataMutationTests.graphQL(
                    server, "mutation { createNote(input: { id: \"\(id)\", text: \"x\" }) { id } }", token: alice.token)
            }
            _ = try await DataMutationTests.graphQL(server, #"mutation { deleteNote(input: { id: "n2" }) { id } }"#, token: alice.token)
            let table = DataTables.table(app: "shop", model: "Note")
            func stored() async throws -> [String] {
                try await server.database.raw("SELECT \(ident: "id") FROM \(ident: table) ORDER BY \(ident: "id")").all().map {
                    try $0.decode(column: "id", as: String.self)
                }
            }
            // Within the retention the tombstone stays, for syncs to learn of the delete.
            #expect(try await server.sweeper.sweep(now: EpochMillis.now) == 0)
            #expect(try await stored() == ["n1", "n2"])
            // After it, only the tombstone goes.
            #expect(try await server.sweeper.sweep(now: EpochMillis.now + 31 * 86_400_000) == 1)
            #expect(try await stored() == ["n1"])
            // The change log's rows as old go too, but for the newest, which keeps the log's position.
            let kept = try await ChangeLog.read(after: 0, limit: 10, on: server.database)
            #expect(kept.map(\.seq) == [try await ChangeLog.latestSeq(on: server.database)])
        }
    }
}

/// Paging through a list while another task keeps creating records: no record is repeated or skipped.
@Suite("Data pages under writes")
struct DataPagingUnderWritesTests {
    @Test(arguments: TestBackend.available)
    func pagesNeverRepeatOrSkipWhileAnotherTaskCreates(_ backend: TestBackend) async throws {
        try await DataMutationTests.start(backend) { server, alice, _ in
            let create = "mutation($text: String!) { createNote(input: { text: $text }) { id } }"
            var before: Set<String> = []
            for number in 0..<12 {
                let made = try await DataMutationTests.graphQL(server, create, ["text": .string("before \(number)")], token: alice.token)
                before.insert(try #require(made["data"]?["createNote"]?["id"]?.stringValue))
            }
            let page = "query($token: String) { listNotes(limit: 3, nextToken: $token) { items { id createdAt } nextToken } }"
            let (writes, writer) = AsyncStream.makeStream(of: Void.self)
            // The writer creates one record each time the reader has read a page, so writes land between and during pages.
            let creating = Task {
                var number = 0
                for await _ in writes {
                    _ = try await DataMutationTests.graphQL(server, create, ["text": .string("during \(number)")], token: alice.token)
                    number += 1
                }
            }
            var seen: [String] = []
            var keys: [String] = []
            var token: JSONValue = .null
            repeat {
                writer.yield()
                let answer = try await DataMutationTests.graphQL(server, page, ["token": token], token: alice.token)
                let items = answer["data"]?["listNotes"]?["items"]?.arrayValue ?? []
                seen += items.compactMap { $0["id"]?.stringValue }
                keys += items.compactMap { item in item["createdAt"]?.stringValue.map { "\($0) \(item["id"]?.stringValue ?? "")" } }
                token = answer["data"]?["listNotes"]?["nextToken"] ?? .null
            } while token != .null && seen.count < 200
            writer.finish()
            try await creating.value
            #expect(Set(seen).count == seen.count, "no record twice")
            #expect(before.isSubset(of: Set(seen)), "every record that existed when paging began")
            #expect(keys == keys.sorted(), "in (createdAt, id) order")
        }
    }
}
