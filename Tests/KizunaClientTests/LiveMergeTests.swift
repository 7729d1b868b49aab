import Foundation
import KizunaCore
import Testing

@testable import KizunaClient

/// How a live query's answer is made from the cache's rows and the outbox's unconfirmed items, apart from any I/O.
@Suite("Live query answers")
struct LiveMergeTests {
    struct Message: Codable, Sendable, Hashable {
        var id: String
        var roomId: String
        var text: String
        var createdAt: String
    }

    static let queued = Date(timeIntervalSince1970: 1_790_000_000.25)

    static func item(_ id: String, _ mutation: OutboxMutation, _ state: OutboxItem.State = .pending) -> OutboxItem {
        OutboxItem(id: id, mutation: mutation, state: state, attempts: 0, queuedAt: queued)
    }

    static func row(_ id: String, _ text: String, at time: String, room: String = "r1") -> (id: String, record: [String: JSONValue]) {
        (id, ["id": .string(id), "roomId": .string(room), "text": .string(text), "createdAt": .string(time), "_version": 1])
    }

    static let rows = [
        row("m1", "first", at: "2026-11-26T00:00:01.000Z"),
        row("m2", "second", at: "2026-11-26T00:00:02.000Z"),
        row("x1", "elsewhere", at: "2026-11-26T00:00:03.000Z", room: "r2"),
    ]

    @Test func outboxItemsAreAppliedOnTopOfTheServersRecords() throws {
        let items = [
            Self.item("c1", .create("Message", ["id": "m3", "roomId": "r1", "text": "third"])),
            Self.item("u1", .update("Message", ["id": "m1", "text": "first, edited", "_version": 1]), .sending),
            Self.item("d1", .delete("Message", id: "m2")),
            Self.item("d2", .delete("Message", id: "x1"), .failed(KizunaError(.forbidden, "not yours"))),
            Self.item("u2", .update("Message", ["id": "gone", "text": "?"])),
        ]
        let entries = LiveMerge.apply(items, to: Self.rows)
        #expect(entries.map(\.id) == ["m1", "x1", "m3"])
        #expect(entries[0].record["text"] == "first, edited" && entries[0].record["_version"] == 1 && entries[0].item?.id == "u1")
        // A failed delete leaves the record, marked with the failure; a pending one hides it.
        #expect(entries[1].item?.id == "d2" && !entries[1].isLocal)
        // A create shows its input, stamped with when it was queued, until the server's copy arrives.
        #expect(entries[2].isLocal && entries[2].record["createdAt"] == .string(WireFormat.dateTimeText(Self.queued)))
        #expect(WireFormat.dateTimeText(Self.queued) == "2026-09-21T14:13:20.250Z")
        // Once it has, the server's copy is shown, still marked while the item is unconfirmed.
        let arrived = LiveMerge.apply([items[0]], to: Self.rows + [Self.row("m3", "third", at: "2026-11-26T00:00:04.000Z")])
        #expect(arrived.last?.isLocal == false && arrived.last?.record["createdAt"] == "2026-11-26T00:00:04.000Z" && arrived.last?.item?.id == "c1")
    }

    @Test func anAnswerIsMatchedDecodedTestedSortedAndLimited() throws {
        let items = [Self.item("c1", .create("Message", ["id": "m0", "roomId": "r1", "text": "zeroth", "createdAt": "2026-11-26T00:00:00.000Z"]))]
        let entries = LiveMerge.apply(items, to: Self.rows)
        let newestFirst = LiveQuery<Message>("Message", matching: ["roomId": "r1"], sortedBy: \.createdAt, descending: true)
        let answer = try newestFirst.answer(from: entries)
        #expect(answer.map(\.id) == ["m2", "m1", "m0"])
        #expect(answer.map(\.isPending) == [false, false, true])
        let limited = LiveQuery<Message>("Message", where: { $0.text != "second" }, limit: 2, sortedBy: \.createdAt)
        #expect(try limited.answer(from: entries).map(\.id) == ["m0", "m1"])
        // Equal keys fall back to the id, so the order never depends on the store's.
        let byRoom = LiveQuery<Message>("Message", sortedBy: \.roomId)
        #expect(try byRoom.answer(from: entries).map(\.id) == ["m0", "m1", "m2", "x1"])
    }

    @Test func aLocalRecordMissingServerFieldsWaitsButABadServerRecordIsAnError() throws {
        struct Strict: Decodable, Sendable {
            var id: String
            var owner: String
        }
        let query = LiveQuery<Strict>("Message", sortedBy: \.id)
        let local = LiveMerge.apply([Self.item("c1", .create("Message", ["id": "m3", "roomId": "r1", "text": "x"]))], to: [])
        #expect(try query.answer(from: local).isEmpty)
        #expect(throws: DataError.self) { try query.answer(from: LiveMerge.apply([], to: Self.rows)) }
    }
}
