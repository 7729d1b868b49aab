import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// The pages of several partitions in one statement (what a `hasMany` relation reads) against the lists each partition
/// would be alone, on both engines: the same pages, in both directions, by `createdAt` and through an index.
@Suite("Keyset pages of partitions")
struct KeysetPartitionsTests {
    typealias Note = NotesFixture.Note

    /// Three rooms: r1 with ties on `createdAt` and on the title, a deleted note and one without a title (outside the
    /// `byRoom` index); r2 and r3 smaller; r4 empty.
    static let notes: [Note] = [
        Note(id: "n01", title: "b", createdAt: 10), Note(id: "n02", title: "a", createdAt: 10), Note(id: "n03", title: "c", createdAt: 11),
        Note(id: "n04", createdAt: 12), Note(id: "n05", title: "a", createdAt: 13), Note(id: "n06", title: "d", createdAt: 9, deleted: true),
        Note(id: "n07", roomId: "r2", title: "x", createdAt: 10), Note(id: "n08", roomId: "r2", title: "y", createdAt: 14),
        Note(id: "n09", roomId: "r3", title: "m", createdAt: 8),
    ]

    static let rooms = ["r1", "r2", "r3", "r4"]

    @Test(arguments: TestBackend.available)
    func eachPartitionPagesAsItsOwnListWould(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await NotesFixture.make(database)
            try await fixture.insert(Self.notes)
            for index in [nil, "byRoom"] as [String?] {
                for descending in [false, true] {
                    for limit in [1, 2, 10] {
                        for room in Self.rooms {
                            let order: KeysetPage.Order = if let index { .index(index, partition: .string(room)) } else { .createdAt }
                            let filter: JSONValue? = index == nil ? ["roomId": ["eq": .string(room)]] : nil
                            let alone = try await fixture.pages(order, descending: descending, limit: limit, filter: filter)
                            let together = try await Self.pages(of: room, fixture, index: index, descending: descending, limit: limit)
                            #expect(together == alone, "\(room), index \(index ?? "none"), descending \(descending), limit \(limit)")
                        }
                    }
                }
            }

            let wrongIndex = #expect(throws: KizunaError.self) {
                try KeysetPage(
                    model: fixture.model, schema: fixture.schema, table: fixture.table, dialect: fixture.dialect,
                    partitions: .init(key: "roomId", values: ["r1"]), index: "byMood", scope: "")
            }
            #expect(wrongIndex?.code == .validationFailed)
        }
    }

    /// Every page of `room`, each read with the statement of all the rooms' pages, following that room's cursor.
    static func pages(
        of room: String, _ fixture: NotesFixture, index: String?, descending: Bool, limit: Int
    ) async throws -> [[String]] {
        var pages: [[String]] = []
        var after: PageCursor?
        repeat {
            let page = try KeysetPage(
                model: fixture.model, schema: fixture.schema, table: fixture.table, dialect: fixture.dialect,
                partitions: .init(key: "roomId", values: rooms), index: index, descending: descending, limit: limit, after: after, scope: "")
            let own = try await page.runPartitions(on: fixture.database)[room]
            pages.append(try (own?.rows ?? []).map { try $0.decode(column: "id", as: String.self) })
            after = own?.next
        } while after != nil && pages.count <= 50
        return pages
    }
}
