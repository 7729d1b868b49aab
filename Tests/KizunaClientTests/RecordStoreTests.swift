import Foundation
import GRDB
import KizunaCore
import Testing

@testable import KizunaClient

/// The offline cache's tables on their own: changes arriving out of order leave the newest, a tombstone keeps a late
/// create out, a full sync drops what it did not see, each user has a copy of their own.
@Suite("Offline cache store")
struct RecordStoreTests {
    static func withStore(_ body: (RecordStore) async throws -> Void) async throws {
        let directory = LiveServer.temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(RecordStore(database: try LocalDatabase.open(at: directory.appendingPathComponent("data.sqlite"))))
    }

    static func note(_ id: String, _ text: String, deleted: Bool = false) -> [String: JSONValue] {
        ["id": .string(id), "text": .string(text), "_deleted": .bool(deleted)]
    }

    static func texts(_ store: RecordStore, user: String = "u1") throws -> [String] {
        try store.records(user: user, model: "Note", matching: [:]).compactMap { $0.record["text"]?.stringValue }
    }

    @Test func theNewestChangeWinsWhateverOrderChangesArriveIn() async throws {
        try await Self.withStore { store in
            var v2 = Self.note("n1", "v2")
            v2["_version"] = 2
            #expect(try await store.write([v2], user: "u1", model: "Note", seq: 20, generation: 1) == ["n1": 2])
            // An older change, delivered late, does not take effect (and says so).
            #expect(try await store.write([Self.note("n1", "v1")], user: "u1", model: "Note", seq: 10, generation: 1).isEmpty)
            #expect(try Self.texts(store) == ["v2"])
            // Deleted at 30; the create (seq 5) delivered late on another subscription does not bring it back.
            try await store.write([Self.note("n1", "v2", deleted: true)], user: "u1", model: "Note", seq: 30, generation: 1)
            try await store.write([Self.note("n1", "v0")], user: "u1", model: "Note", seq: 5, generation: 1)
            #expect(try Self.texts(store).isEmpty)
            // Each user's copy is their own.
            try await store.write([Self.note("n2", "bob's")], user: "u2", model: "Note", seq: 31, generation: 1)
            #expect(try Self.texts(store).isEmpty && Self.texts(store, user: "u2") == ["bob's"])
        }
    }

    @Test func aFullSyncDropsWhatItDidNotSeeAndRecordsWhereItGot() async throws {
        try await Self.withStore { store in
            try await store.write(
                [Self.note("n1", "kept"), Self.note("n2", "pruned on the server")], user: "u1", model: "Note", seq: 10, generation: 1)
            try await store.write([Self.note("n1", "kept")], user: "u1", model: "Note", seq: 40, generation: 2)
            let state = RecordStore.SyncState(fields: ["_deleted", "id", "text"], lastSeq: "40:1790000000000", generation: 2)
            try await store.finishSync(user: "u1", model: "Note", state: state, full: true)
            #expect(try Self.texts(store) == ["kept"])
            #expect(try store.syncState(user: "u1", model: "Note") == state)
            #expect(try store.syncState(user: "u2", model: "Note") == nil)
        }
    }

    @Test func matchingIsTestedByTheStore() async throws {
        try await Self.withStore { store in
            let records: [[String: JSONValue]] = [
                ["id": "a", "roomId": "r1", "pinned": true, "stars": 3],
                ["id": "b", "roomId": "r1", "pinned": false, "stars": 3],
                ["id": "c", "roomId": "r2", "stars": 1],
            ]
            try await store.write(records, user: "u1", model: "Note", seq: 1, generation: 1)
            func ids(_ matching: [String: JSONValue]) throws -> [String] {
                try store.records(user: "u1", model: "Note", matching: matching).map(\.id)
            }
            #expect(try ids(["roomId": "r1"]) == ["a", "b"])
            #expect(try ids(["roomId": "r1", "pinned": true]) == ["a"])
            #expect(try ids(["stars": 3]) == ["a", "b"])
            #expect(try ids(["pinned": .null]) == ["c"])
        }
    }

    @Test func aCopyIsSyncedFromTheStartWhenNewWhenItsFieldsChangeAndOncePerInterval() async throws {
        let day = Duration.seconds(86_400)
        let state = RecordStore.SyncState(fields: ["id", "text"], lastSeq: "40:1", generation: 3, fullSyncAt: 1_000_000)
        #expect(RecordStore.SyncState.needsFullSync(nil, fields: ["id"], now: 0, interval: day))
        #expect(RecordStore.SyncState.needsFullSync(state, fields: ["id", "text", "when"], now: 1_000_001, interval: day))
        #expect(!RecordStore.SyncState.needsFullSync(state, fields: ["id", "text"], now: 1_000_000 + 86_399_999, interval: day))
        #expect(RecordStore.SyncState.needsFullSync(state, fields: ["id", "text"], now: 1_000_000 + 86_400_000, interval: day))
        // An incremental sync keeps the time of the last full one.
        try await Self.withStore { store in
            try await store.finishSync(user: "u1", model: "Note", state: state, full: true)
            var later = state
            later.lastSeq = "50:2"
            later.fullSyncAt = 9_000_000
            try await store.finishSync(user: "u1", model: "Note", state: later, full: false)
            #expect(try store.syncState(user: "u1", model: "Note")?.fullSyncAt == 1_000_000)
            #expect(try store.syncState(user: "u1", model: "Note")?.lastSeq == "50:2")
        }
    }
}
