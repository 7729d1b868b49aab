import Foundation
import KizunaClient
import KizunaCore
import KizunaTestSupport
import Subprocess
import Testing

@testable import KizunaServer

/// The chat example (`Examples/Chat`) as people use it: `kizuna-chat` in child processes against a live server, two
/// members chatting while an outsider sees nothing, and a message whose sender is killed with SIGKILL — while the
/// server could not be reached, and after the server stored it but before the answer came — sent exactly once by the
/// next run.
@Suite("Examples/Chat through kizuna-chat")
struct ChatExampleTests {
    static let password = "correct horse battery"

    /// A server with the app `chat` and the example's schema.
    static func withChatServer(_ body: (CLIServer) async throws -> Void) async throws {
        try await CLIServer.run { server in
            _ = try await server.admin.createApp(NewApp(id: "chat", name: "Chat", platform: .ios, bundleId: "com.example.chat", teamId: "ABCDE12345"))
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/Chat/schema.graphql")
            let sdl = try String(contentsOf: file, encoding: .utf8)
            _ = try await server.admin.publish(.schema, app: "chat", document: SchemaDocument.document(sdl: sdl), message: nil, expecting: .any)
            try await body(server)
        }
    }

    /// One person's `kizuna-chat`, their state in a directory of its own.
    struct Person {
        let identifier: String
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-chat-\(UUID().uuidString)")

        func arguments(_ command: [String], server: String) -> [String] {
            [command[0], "--server", server, "--app", "chat", "--as", identifier, "--directory", directory.path] + command.dropFirst()
        }

        /// Runs a command to its end; answers its output and how it ended.
        @discardableResult
        func run(_ command: String..., server: String) async throws -> (lines: [String], status: TerminationStatus) {
            let (lines, status) = try await ServeProcess.run(
                arguments(command, server: server), executable: "kizuna-chat", environment: ["KIZUNA_CHAT_PASSWORD": ChatExampleTests.password]
            ) { running in
                _ = await running.find { _ in nil as Bool? }
                return running.seen
            }
            return (lines, status)
        }

        /// Runs a command while `body` reads its output.
        func running<R: Sendable>(
            _ command: String..., server: String, _ body: (ServeProcess) async throws -> R
        ) async throws -> (value: R, status: TerminationStatus) {
            try await ServeProcess.run(
                arguments(command, server: server), executable: "kizuna-chat", environment: ["KIZUNA_CHAT_PASSWORD": ChatExampleTests.password], body)
        }
    }

    /// Reads `process`'s output until `count` lines end with `suffix`.
    static func waitForLines(endingWith suffix: String, count: Int, in process: ServeProcess) async {
        var seen = 0
        _ = await process.find { line -> Bool? in
            if line.hasSuffix(suffix) { seen += 1 }
            return seen >= count ? true : nil
        }
    }

    @Test func twoMembersChatAndSomeoneOutsideTheRoomSeesNothing() async throws {
        try await Self.withChatServer { server in
            let mio = Person(identifier: "mio@example.com")
            let sora = Person(identifier: "sora@example.com")
            let ren = Person(identifier: "ren@example.com")
            for person in [mio, sora, ren] {
                #expect(try await person.run("signup", server: server.url).status == .exited(0))
            }
            let room = try #require(try await mio.run("create-room", "lobby", server: server.url).lines.last)
            let soraId = try #require(try await sora.run("whoami", server: server.url).lines.last)
            #expect(try await mio.run("invite", room, soraId, server: server.url).lines.last == "lobby: 2 members")

            // Sora listens while Mio sends; Sora's answer reaches Mio's listener the same way.
            let (heard, listenStatus) = try await sora.running("listen", room, server: server.url) { sora in
                _ = await sora.find { $0.hasPrefix("listening to") ? true : nil }
                let sent = try await mio.run("send", room, "hello sora", server: server.url)
                #expect(sent.status == .exited(0) && sent.lines.last?.hasPrefix("sent ") == true, "\(sent)")
                return await sora.find { $0.hasSuffix(": hello sora") ? $0 : nil }
            }
            #expect(heard != nil)
            #expect(listenStatus == .signaled(SIGKILL))
            #expect(try await sora.run("send", room, "hi mio", server: server.url).status == .exited(0))
            let history = try await mio.run("history", room, server: server.url).lines
            #expect(
                history.suffix(3).map { $0.split(separator: ": ").last.map(String.init) } == ["hello sora", "hi mio", "2 messages"], "\(history)")

            // Ren is not a member: the room's messages are not Ren's to read, nor is the room Ren's to post to.
            #expect(try await ren.run("history", room, server: server.url).lines.last == "0 messages")
            let refused = try await ren.run("send", room, "let me in", server: server.url)
            #expect(refused.status == .exited(1))
            #expect(refused.lines.contains { $0.hasPrefix("not sent (forbidden)") || $0.hasPrefix("not sent (unauthorized)") }, "\(refused.lines)")
        }
    }

    @Test func aMessageWhoseSenderIsKilledIsSentExactlyOnceByTheNextRun() async throws {
        try await Self.withChatServer { server in
            let mio = Person(identifier: "mio@example.com")
            #expect(try await mio.run("signup", server: server.url).status == .exited(0))
            let room = try #require(try await mio.run("create-room", "lobby", server: server.url).lines.last)
            let port = try #require(URL(string: server.url)?.port)

            // Killed while the server cannot be reached (the proxy refuses connections), after a try failed: the
            // message is stored, and the server never saw it.
            let proxy = try await TCPProxy.start(to: "127.0.0.1", port: port)
            defer { Task { await proxy.cut() } }
            await proxy.cut()
            let viaProxy = "http://127.0.0.1:\(proxy.port)"
            let first = try await mio.running("send", room, "first", server: viaProxy) { sending in
                #expect(await sending.find { $0.hasPrefix("queued ") ? true : nil } == true)
                // pending, sending, and pending again after the refused try.
                await Self.waitForLines(endingWith: ": sending…", count: 3, in: sending)
                await sending.stop(.kill)
            }
            #expect(first.status == .signaled(SIGKILL))

            // The next run sends it (in the room's lane, before the new "second") and is killed after the server stored
            // it but before the answer came (the proxy drops answers): a watcher on the server sees it arrive.
            let watcher = try KizunaApp(
                server: try #require(URL(string: server.url)), appId: "chat", directory: mio.directory.appendingPathComponent("watcher"),
                device: DeviceContext(appVersion: "1.0", platform: .ios),
                secureStore: try SecureStore(
                    service: "watcher", fileOptions: .init(directory: mio.directory.appendingPathComponent("watcher-secure"))))
            try await watcher.auth.signIn(identifier: mio.identifier, password: Self.password)
            struct Message: Decodable, Sendable { var text: String }
            // From the change log's start, so a message stored before the subscription is registered is not missed.
            let (arrivals, arrived) = AsyncStream.makeStream(of: String.self)
            let watching = Task {
                let document = "subscription($since: String) { onCreateMessage(since: $since) { text } }"
                for try await case .value(let message, _) in watcher.data.subscribe(
                    document, variables: ["since": "0"], field: "onCreateMessage", as: Message.self)
                {
                    arrived.yield(message.text)
                }
            }
            try await proxy.restore(.dropAnswers)
            let second = try await mio.running("send", room, "second", server: viaProxy) { sending in
                #expect(await sending.find { $0.hasPrefix("queued ") ? true : nil } == true)
                var texts = arrivals.makeAsyncIterator()
                #expect(await texts.next() == "first")
                await sending.stop(.kill)
            }
            // The watcher's socket closes before the server goes (a socket left reconnecting could reach another
            // test's server on a reused port).
            watching.cancel()
            for await state in await watcher.data.connectionStates() where state == .idle { break }
            #expect(second.status == .signaled(SIGKILL))

            // The run after that sends "first" again, with its id, and "second": each is stored once.
            let flushed = try await mio.run("outbox", server: server.url)
            #expect(flushed.status == .exited(0) && flushed.lines.filter { $0.hasPrefix("sent ") }.count == 2, "\(flushed.lines)")
            let history = try await mio.run("history", room, server: server.url).lines
            #expect(history.suffix(3).map { $0.split(separator: ": ").last.map(String.init) } == ["first", "second", "2 messages"], "\(history)")
        }
    }
}
