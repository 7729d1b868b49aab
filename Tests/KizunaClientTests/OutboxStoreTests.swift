import Foundation
import GRDB
import KizunaCore
import Testing

@testable import KizunaClient

/// The SDK's database file as the storage rules want it: versioned, reopened as it was left, an item left `sending` by
/// a stopped app read back as pending (it is sent again with its id), and a file a newer SDK migrated refused.
@Suite("Outbox store")
struct OutboxStoreTests {
    @Test func itemsSurviveAReopenAndOneLeftSendingIsPendingAgain() async throws {
        let directory = LiveServer.temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("data.sqlite")
        let store = try OutboxStore.open(at: url)
        var first = OutboxItem(
            id: "i1", mutation: .create("Message", ["id": "i1", "text": "one"], parent: "Room:r"), state: .pending, attempts: 0, queuedAt: Date())
        let second = OutboxItem(id: "i2", mutation: .delete("Message", id: "m0"), state: .pending, attempts: 0, queuedAt: Date())
        _ = try await store.insert(first, userId: "u1")
        _ = try await store.insert(second, userId: nil)
        first.state = .sending
        first.attempts = 1
        try await store.save(first)
        var refused = second
        refused.state = .failed(KizunaError(.forbidden, "No rule lets this caller delete it.", field: "input.id"))
        try await store.save(refused)

        let rows = try OutboxStore.open(at: url).rows()
        #expect(rows.map(\.item.id) == ["i1", "i2"] && rows.map(\.userId) == ["u1", nil])
        #expect(rows[0].item.state == .pending && rows[0].item.attempts == 1 && rows[0].item.mutation == first.mutation)
        #expect(rows[1].item.state == .failed(KizunaError(.forbidden, "No rule lets this caller delete it.", field: "input.id")))
        var sent = first
        sent.state = .sent(["id": "i1"])
        try await store.save(sent)
        #expect(try OutboxStore.open(at: url).rows().map(\.item.id) == ["i2"])
    }

    @Test func aFileANewerSDKMigratedIsRefusedNotMisread() throws {
        let directory = LiveServer.temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("data.sqlite")
        _ = try OutboxStore.open(at: url)
        var newer = LocalDatabase.migrator
        newer.registerMigration("99-from-a-newer-sdk") { db in try db.execute(sql: "CREATE TABLE later (x INTEGER)") }
        try newer.migrate(try DatabaseQueue(path: url.path))
        #expect {
            _ = try OutboxStore.open(at: url)
        } throws: { error in
            (error as? KizunaError)?.code == .storeTooNew
        }
    }
}
