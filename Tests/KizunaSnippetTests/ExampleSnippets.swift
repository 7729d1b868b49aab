import KizunaClient

// The ```swift blocks of the examples' READMEs, copied verbatim (SnippetSyncTests keeps them so) so that they
// compile with the SDK as it is.

// snippet: Examples/Chat/README.md#1
private enum ChatReadme {
    struct Message: Codable, Sendable {
        var id: String
        var roomId: String
        var text: String
        var owner: String?
    }

    func post(_ text: String, to room: String, app: KizunaApp) async throws {
        // Stored before this returns; sent until the server has it, in the room's order.
        let item = try await app.data.outbox.send(
            .create("Message", ["roomId": .string(room), "text": .string(text)], parent: "Room:\(room)"))
        for await state in await app.data.outbox.states(of: item.id) {
            switch state {
            case .pending, .sending: print("sending…")
            case .sent: print("sent")
            case .failed(let error): print("not sent: \(error.message)")  // outbox.retry(item.id) or outbox.discard(item.id)
            }
        }
    }

    func messages(in room: String, app: KizunaApp) async throws {
        let document = """
            subscription($filter: ModelSubscriptionMessageFilterInput, $since: String) {
              onCreateMessage(filter: $filter, since: $since) { id roomId text owner }
            }
            """
        let filter: JSONValue = ["roomId": ["eq": .string(room)]]
        for try await event in app.data.subscribe(document, variables: ["filter": filter], field: "onCreateMessage", as: Message.self) {
            if case .value(let message, _) = event { print(message.text) }
        }
    }
}
