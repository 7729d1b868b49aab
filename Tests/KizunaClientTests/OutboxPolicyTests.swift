import Foundation
import KizunaCore
import Testing

@testable import KizunaClient

/// The outbox's decisions without a server: what each answer means for an item, and which item goes next.
@Suite("Outbox policy")
struct OutboxPolicyTests {
    typealias Outcome = OutboxPolicy.Outcome

    static let create = OutboxMutation.create("Message", ["id": "m1", "roomId": "r1", "text": "hi"], parent: "Room:r1")
    static let update = OutboxMutation.update("Message", ["id": "m1", "text": "edited", "_version": 1])
    static let delete = OutboxMutation.delete("Message", id: "m1")

    static func answer(_ code: KizunaError.Code, current: JSONValue? = nil, retryAfter: Int? = nil) -> Result<GraphQLResponse, DataError> {
        var extensions: [String: JSONValue] = ["code": .string(code.rawValue)]
        if let current { extensions["current"] = current }
        if let retryAfter { extensions["retryAfter"] = .number(Double(retryAfter)) }
        return .success(GraphQLResponse(data: nil, errors: [GraphQLError(message: "no", extensions: extensions)]))
    }

    @Test(arguments: [
        // An answer without errors is sent, with the record the root field answered.
        (
            Result<GraphQLResponse, DataError>.success(GraphQLResponse(data: ["createMessage": ["id": "m1"]])), create, false,
            Outcome.sent(["id": "m1"])
        ),
        // No answer, or one a retry may get past: retried, after the server's Retry-After when it gave one.
        (.failure(.transport(KizunaError(.transport, "offline"))), create, false, .retry(notBefore: nil)),
        (.failure(.transport(KizunaError(.storeUnavailable, "down", retryAfter: 3))), create, true, .retry(notBefore: .seconds(3))),
        (answer(.rateLimited, retryAfter: 2), create, false, .retry(notBefore: .seconds(2))),
        (answer(.unauthorized), create, false, .retry(notBefore: nil)),
        // A refusal a retry cannot fix fails the item, a conflict with the stored record.
        (answer(.validationFailed), create, false, .failed(KizunaError(.validationFailed, "no"), current: nil)),
        (answer(.forbidden), create, true, .failed(KizunaError(.forbidden, "no"), current: nil)),
        (
            answer(.conflict, current: ["id": "m1", "text": "theirs", "_version": 2]), update, false,
            .failed(KizunaError(.conflict, "no"), current: ["id": "m1", "text": "theirs", "_version": 2])
        ),
        // A first try's not_found or conflict is the server's answer; a retry's may be the first try's effect.
        (answer(.notFound), delete, false, .failed(KizunaError(.notFound, "no"), current: nil)),
        (answer(.notFound), delete, true, .sent(["id": "m1"])),
        (
            answer(.conflict, current: ["id": "m1", "text": "edited", "_version": 2]), update, true,
            .sent(["id": "m1", "text": "edited", "_version": 2])
        ),
        (
            answer(.conflict, current: ["id": "m1", "text": "theirs", "_version": 2]), update, true,
            .failed(KizunaError(.conflict, "no"), current: ["id": "m1", "text": "theirs", "_version": 2])
        ),
    ])
    func anAnswerDecidesTheItemsNextState(answer: Result<GraphQLResponse, DataError>, mutation: OutboxMutation, retried: Bool, expected: Outcome) {
        #expect(OutboxPolicy.outcome(of: answer, for: mutation, retried: retried) == expected)
    }

    static func entry(
        _ seq: Int64, _ mutation: OutboxMutation, _ state: OutboxItem.State = .pending, user: String? = "u1",
        notBefore: ContinuousClock.Instant? = nil
    ) -> OutboxPolicy.Entry {
        let item = OutboxItem(id: "i\(seq)", mutation: mutation, state: state, attempts: 0, queuedAt: Date())
        return OutboxPolicy.Entry(row: OutboxStore.Row(seq: seq, item: item, userId: user), notBefore: notBefore)
    }

    static func message(_ id: String, room: String) -> OutboxMutation { .create("Message", ["id": .string(id)], parent: "Room:\(room)") }

    @Test func itemsOfOneRecordOrOneParentGoInOrderAndOthersGoAround() {
        let now = ContinuousClock.now
        let later = now + .seconds(30)
        // The first of a room backs off: the room's next waits behind it; another room's goes.
        var entries = [
            Self.entry(1, Self.message("a", room: "r1"), notBefore: later),
            Self.entry(2, Self.message("b", room: "r1")),
            Self.entry(3, Self.message("c", room: "r2")),
        ]
        #expect(OutboxPolicy.next(in: entries, user: "u1", now: now) == 2)
        #expect(OutboxPolicy.nextWake(in: entries, user: "u1", now: now) == later)
        // Once its backoff is over, it goes first.
        #expect(OutboxPolicy.next(in: entries, user: "u1", now: later) == 0)
        // An item on the wire holds its lanes; a failed one holds nothing.
        entries[0].item.state = .sending
        #expect(OutboxPolicy.next(in: entries, user: "u1", now: now) == 2)
        entries[0].item.state = .failed(KizunaError(.forbidden, "no"))
        #expect(OutboxPolicy.next(in: entries, user: "u1", now: now) == 1)
        // Updates of one record go in order, whatever their parents.
        let record = [
            Self.entry(1, .update("Note", ["id": "n1", "text": "a"]), .sending), Self.entry(2, .update("Note", ["id": "n1", "text": "b"])),
        ]
        #expect(OutboxPolicy.next(in: record, user: "u1", now: now) == nil)
    }

    @Test func eachItemWaitsForTheUserWhoQueuedIt() {
        let now = ContinuousClock.now
        let entries = [Self.entry(1, Self.message("a", room: "r1"), user: "u1"), Self.entry(2, Self.message("b", room: "r1"), user: nil)]
        #expect(OutboxPolicy.next(in: entries, user: "u2", now: now) == nil)
        #expect(OutboxPolicy.next(in: entries, user: nil, now: now) == 1)  // another user's item holds no lane
        #expect(OutboxPolicy.next(in: entries, user: "u1", now: now) == 0)
    }

    @Test func theOutboxWritesTheDocumentBySchemaNamingAndChecksWhatItIsGiven() async throws {
        #expect(
            Self.create.document
                == "mutation KizunaOutbox($input: CreateMessageInput!) { createMessage(input: $input) { id } }")
        #expect(Self.delete.document.contains("deleteMessage(input: $input)") && Self.delete.document.contains("DeleteMessageInput!"))
        let directory = LiveServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try KizunaApp(
            server: URL(string: "http://127.0.0.1:9")!, appId: "shop", directory: directory, device: DeviceContext(appVersion: "1.0", platform: .ios))
        for (mutation, field) in [
            (OutboxMutation.create("message", ["text": "x"]), "model"), (.update("Message", ["text": "x"]), "input.id"),
            (.create("Message", ["id": ""]), "input.id"),
        ] {
            do {
                try await app.data.outbox.send(mutation)
                Issue.record("\(mutation) was queued")
            } catch {
                #expect(error.code == .validationFailed && error.field == field, "\(error)")
            }
        }
        #expect(await app.data.outbox.item("none") == nil)
    }
}
