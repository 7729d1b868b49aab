import ChatAPI
import KizunaClient

// The ```swift blocks of the examples' READMEs, copied verbatim (SnippetSyncTests keeps them so) so that they
// compile with the SDK as it is.

// snippet: Examples/Chat/README.md#1
private enum ChatReadme {
    func post(_ text: String, to room: String, app: KizunaApp) async throws {
        // Stored before this returns; sent until the server has it, in the room's order.
        let item = try await app.data.outbox.send(.create(CreateMessageInput(roomId: room, text: text), parent: "Room:\(room)"))
        for await state in await app.data.outbox.states(of: item.id) {
            switch state {
            case .pending, .sending: print("sending…")
            case .sent: print("sent")
            case .failed(let error): print("not sent: \(error.message)")  // outbox.retry(item.id) or outbox.discard(item.id)
            }
        }
    }

    func show(_ room: String, app: KizunaApp) async throws {
        // The room from the device's copy, now and after every change, offline too; unsent messages first show pending.
        let query = LiveQuery<Message>(matching: ["roomId": .string(room)], sortedBy: \.createdAt)
        for try await messages in app.data.observe(query) {
            print(messages.map { ($0.isPending ? "… " : "") + $0.value.text })
        }
    }

    func latest(in room: String, app: KizunaApp) async throws -> [Message] {
        try await app.data.run(Message.listByRoom(roomId: room, sortDirection: .descending, limit: 50)).items
    }
}
