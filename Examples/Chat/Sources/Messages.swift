import ArgumentParser
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
        struct Page: Decodable, Sendable { var items: [Message] }
        let page: Page = try await app.data.query(
            "query($room: ID!) { listMessagesByRoom(roomId: $room, limit: 100) { items { id roomId text owner } } }",
            variables: ["room": .string(room)], field: "listMessagesByRoom")
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
        .create("Message", ["roomId": .string(room), "text": .string(text)], parent: "Room:\(room)", selection: "id roomId text owner")
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

    /// Prints the room's messages as they arrive, from the room's history on (its change log's, `since: "0"`).
    static func listen(_ room: String, app: KizunaApp) async throws {
        let document = """
            subscription($filter: ModelSubscriptionMessageFilterInput, $since: String) {
              onCreateMessage(filter: $filter, since: $since) { id roomId text owner }
            }
            """
        let events = app.data.subscribe(
            document, variables: ["filter": ["roomId": ["eq": .string(room)]], "since": "0"], field: "onCreateMessage", as: Message.self)
        say("listening to \(room)")
        for try await event in events {
            switch event {
            case .value(let message, _): say(line(message))
            case .resync: say("(some messages may be missing)")
            }
        }
    }
}
