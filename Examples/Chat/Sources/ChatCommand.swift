import ArgumentParser
import ChatAPI
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna-chat`: the chat example's client, on the Kizuna SDK. Each person runs it with their own `--as`; what it
/// sends goes through the outbox, so a message typed offline, or before a kill, is sent on the next run.
@main
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kizuna-chat",
        abstract: "Chat through a Kizuna server: rooms, members, and messages sent through the SDK's outbox.",
        discussion: "The password is read from KIZUNA_CHAT_PASSWORD. Each identity keeps its session and outbox in --directory.",
        subcommands: [SignUp.self, WhoAmI.self, CreateRoom.self, Invite.self, Send.self, Flush.self, History.self, Listen.self, Chat.self]
    )
}

/// What every command needs: the server, the app, who is chatting, and where their state is kept.
struct Connection: ParsableArguments {
    @Option(help: "The server's URL.") var server = "http://127.0.0.1:8080"
    @Option(help: "The app's id on the server.") var app = "chat"
    @Option(name: .customLong("as"), help: "Your email address.") var identifier: String
    @Option(help: "Where your session and outbox are kept (default: ./kizuna-chat/<email>).") var directory: String?

    var password: String {
        get throws {
            guard let password = ProcessInfo.processInfo.environment["KIZUNA_CHAT_PASSWORD"], !password.isEmpty else {
                throw ValidationError("Set KIZUNA_CHAT_PASSWORD to your password.")
            }
            return password
        }
    }

    /// The SDK's connection for this identity; signed in unless `signUp` (then signed up first).
    func open(signUp: Bool = false) async throws -> KizunaApp {
        guard let url = URL(string: server) else { throw ValidationError("\(server) is not a URL.") }
        let home = URL(fileURLWithPath: directory ?? "kizuna-chat/\(identifier)")
        let secure = try SecureStore(service: "kizuna-chat", fileOptions: .init(directory: home.appendingPathComponent("secure")))
        let app = try KizunaApp(
            server: url, appId: app, directory: home, device: DeviceContext(appVersion: "1.0", platform: nil), secureStore: secure,
            deviceName: "kizuna-chat")
        if signUp {
            try await app.auth.signUp(identifier: identifier, password: try password)
        } else if await app.auth.account?.identifier != identifier.lowercased() {
            try await app.auth.signIn(identifier: identifier, password: try password)
        }
        try await app.data.outbox.start()
        return app
    }
}

struct SignUp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signup", abstract: "Create your account and sign in.")
    @OptionGroup var connection: Connection

    func run() async throws {
        let app = try await connection.open(signUp: true)
        say("signed up \(connection.identifier): \(await app.auth.account?.id ?? "")")
    }
}

struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Print your account id (others invite you by it).")
    @OptionGroup var connection: Connection

    func run() async throws {
        say(await (try await connection.open()).auth.account?.id ?? "")
    }
}

struct CreateRoom: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create-room", abstract: "Create a room with you in it; print its id.")
    @OptionGroup var connection: Connection
    @Argument(help: "The room's name.") var name: String

    func run() async throws {
        let app = try await connection.open()
        let me = await app.auth.account?.id ?? ""
        let room = try await app.data.run(Room.create(CreateRoomInput(name: name, members: [me])))
        say(room.id)
    }
}

struct Invite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add someone to a room you are in, by their account id.")
    @OptionGroup var connection: Connection
    @Argument(help: "The room's id.") var room: String
    @Argument(help: "Their account id (kizuna-chat whoami).") var member: String

    func run() async throws {
        let app = try await connection.open()
        guard let current = try await app.data.run(Room.get(id: room)) else {
            throw ValidationError("No room \(room) that you are a member of.")
        }
        let members = Array(Set((current.members ?? []) + [member])).sorted()
        let updated = try await app.data.run(Room.update(UpdateRoomInput(id: room, members: members, _version: current._version)))
        say("\(updated.name): \(updated.members?.count ?? 0) members")
    }
}

/// Writes a line to standard output at once: `print` holds its output back when standard output is a pipe (another
/// program reading the chat).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
