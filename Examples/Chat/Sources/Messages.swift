import ArgumentParser
import ChatAPI
import Foundation
import KizunaClient
import KizunaCore

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a message through the outbox; wait until the server has it.",
        discussion: "The message is stored before it is sent: if this process is stopped before the server has it, the next run sends it.")
    @OptionGroup var connection: Connection
    @Argument(help: "The room's id.") var room: String
    @Argument(help: "The message.") var text: String

    func run() async throws {
        let app = try await connection.open()
        let item = try await app.data.outbox.send(Messages.post(text, to: room))
        say("queued \(item.id)")
        guard try await Messages.follow(item.id, in: app) else { throw ExitCode.failure }
    }
}

struct Flush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Send what an earlier run left in your outbox; wait until each is sent or has failed.")
    @OptionGroup var connection: Connection

    func run() async throws {
        let app = try await connection.open()
        var failed = false
        for item in try await Messages.unsent(app) {
            say("queued \(item.id)")
            failed = try await !Messages.follow(item.id, in: app) || failed
        }
        if failed { throw ExitCode.failure }
    }
}

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a room's messages so far, oldest first (only a member's are answered).")
    @OptionGroup var connection: Connection
    @Argument(help: "The room's id.") var room: String

    func run() async throws {
        let app = try await connection.open()
        let page = try await app.data.run(Message.listByRoom(roomId: room, limit: 100))
        for message in page.items { say(Messages.line(message)) }
        say("\(page.items.count) messages")
    }
}

struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a room's messages as they arrive.")
    @OptionGroup var connection: Connection
    @Argument(help: "The room's id.") var room: String

    func run() async throws {
        try await Messages.listen(room, app: try await connection.open())
    }
}

struct Chat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a room's messages as they arrive, and send each line you type.")
    @OptionGroup var connection: Connection
    @Argument(help: "The room's id.") var room: String

    func run() async throws {
        let app = try await connection.open()
        let listening = Task { try await Messages.listen(room, app: app) }
        var typed: [String] = []
        while let line = readLine() {
            guard !line.isEmpty else { continue }
            typed.append(try await app.data.outbox.send(Messages.post(line, to: room)).id)
        }
        // The input ended: wait until what was typed is sent (or has failed) before leaving.
        for id in typed { _ = try await Messages.follow(id, in: app, quiet: true) }
        listening.cancel()
    }
}

enum Messages {
    /// A message to `room`, in the room's lane so the room's messages go in order.
    static func post(_ text: String, to room: String) -> OutboxMutation {
        .create(CreateMessageInput(roomId: room, text: text), parent: "Room:\(room)")
    }

    /// Prints an item's states until it is sent (true) or has failed (false).
    static func follow(_ id: String, in app: KizunaApp, quiet: Bool = false) async throws -> Bool {
        for await state in await app.data.outbox.states(of: id) {
            switch state {
            case .pending, .sending: if !quiet { say("\(id): sending…") }
            case .sent: if !quiet { say("sent \(id)") }
            case .failed(let error):
                say("not sent (\(error.code.rawValue)): \(error.message)")
                return false
            }
        }
        return true
    }

    /// The items this run found in the outbox, not yet sent.
    static func unsent(_ app: KizunaApp) async throws -> [OutboxItem] {
        var items = try await app.data.outbox.items().makeAsyncIterator()
        return (await items.next() ?? []).filter { $0.state.isUnsent }
    }

    /// A message as the commands print it: its author's account id, shortened, and its text.
    static func line(_ message: Message) -> String {
        "\(message.owner?.prefix(8) ?? "?"): \(message.text)"
    }

    /// Prints the room's messages, oldest first, then each new one as it arrives: a live query on the device's copy of
    /// the room (synced, then followed; it answers offline too). Messages still in the outbox are left until the server
    /// has them.
    static func listen(_ room: String, app: KizunaApp) async throws {
        say("listening to \(room)")
        var printed: Set<String> = []
        for try await messages in app.data.observe(LiveQuery<Message>(matching: ["roomId": .string(room)], sortedBy: \.createdAt)) {
            for message in messages where message.outboxItem == nil && printed.insert(message.id).inserted {
                say(line(message.value))
            }
        }
    }
}
