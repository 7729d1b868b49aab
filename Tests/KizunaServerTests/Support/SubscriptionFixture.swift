import Crypto
import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

/// The chat app's tables (``ChatFixture``) served by a data runtime, with subscriptions parsed on it and changes
/// written as a mutation writes them to the `changes` log: what the subscription tests decide deliveries on.
struct SubscriptionFixture {
    let chat: ChatFixture
    let runtime: DataRuntime

    static let alice = DataCaller(userId: "alice")
    static let bob = DataCaller(userId: "bob")
    static let carol = DataCaller(userId: "carol")
    static let dave = DataCaller(userId: "dave")

    static func make(_ database: KizunaDatabase) async throws -> SubscriptionFixture {
        let chat = try await ChatFixture.make(database)
        let runtime = DataRuntime(app: ChatFixture.app, version: 1, data: chat.schema, database: database, cursorKey: SymmetricKey(size: .bits256))
        return SubscriptionFixture(chat: chat, runtime: runtime)
    }

    /// `query` subscribed by `caller`.
    func subscribe(_ query: String, variables: [String: JSONValue] = [:], as caller: DataCaller) async throws -> SubscriptionRequest {
        try await SubscriptionRequest.parse(query: query, variables: variables, operationName: nil, caller: caller, on: runtime)
    }

    /// What subscribing with `query` is refused with: each error's `extensions` (its `code`, `field`, `details`), or
    /// `nil` when it is not refused.
    func refusal(_ query: String, variables: [String: JSONValue] = [:], as caller: DataCaller = alice) async throws -> [JSONValue]? {
        do {
            _ = try await subscribe(query, variables: variables, as: caller)
            return nil
        } catch let refusal as SubscriptionRefusal {
            return try refusal.json()
        }
    }

    /// A change of `model` as a mutation appends it: the app as entity, the record as the change left it (with
    /// `_version` and `_deleted`), and the version it made.
    static func change(_ seq: Int64, _ model: String, _ record: [String: JSONValue], version: Int64, deleted: Bool = false) -> ChangeRecord {
        var stored = record
        stored["_version"] = .number(Double(version))
        stored["createdAt"] = stored["createdAt"] ?? 1_000
        stored["updatedAt"] = stored["updatedAt"] ?? .number(Double(1_000 + seq))
        stored[DataTables.deletedColumn] = .bool(deleted)
        let payload: JSONValue = [
            "model": .string(model), "id": record["id"] ?? .null, "deleted": .bool(deleted), "facts": [:], "record": .object(stored),
        ]
        return ChangeRecord(
            seq: seq, kind: DataRuntime.changeKind, entityId: ChatFixture.app, owner: record["owner"]?.stringValue, version: version,
            payload: StoredValue.jsonText(payload), createdAt: Date())
    }
}

/// Counts calls from concurrent code.
actor CallCounter {
    private(set) var count = 0

    func add() { count += 1 }
}
