import ArgumentParser
import Foundation
import Hummingbird
import KizunaClient
import KizunaCore
import KizunaTestSupport
import Logging
import ServiceLifecycle
import Testing

@testable import KizunaServer
@testable import kizuna

/// A real server on a loopback port over a fresh SQLite store, and a way to run `kizuna …` in-process against it.
struct CLIServer {
    let url: String
    let token: String
    let admin: AdminClient
    let directory: URL

    /// Runs `kizuna <arguments> --server … --token …`; a failure comes back as the exit code `main()` would end with.
    func kizuna(_ arguments: [String]) async throws {
        var command = try Kizuna.parseAsRoot(arguments + ["--server", url, "--token", token])
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as KizunaError {
            // The commands leave the report to argument-parser: `Error: <code>: <message>` on standard error, status 1.
            #expect(Kizuna.fullMessage(for: error) == "Error: \(error)")
            throw Kizuna.exitCode(for: error)
        }
    }

    static func run(configure: (inout KizunaConfiguration) -> Void = { _ in }, _ body: (CLIServer) async throws -> Void) async throws {
        try await ServerSlots.withSlot { try await start(configure: configure, body) }
    }

    private static func start(configure: (inout KizunaConfiguration) -> Void, _ body: (CLIServer) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (tokens, announce) = AsyncStream.makeStream(of: AdminCredential.self)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        var configuration = KizunaConfiguration(port: 0, database: .sqlite(dataDirectory: directory.path), logLevel: .warning) { announce.yield($0) }
        configuration.useTestSettings()  // a test wanting others sets them in `configure`
        configure(&configuration)
        let parts = try await ServerParts(configuration: configuration)
        let group = ServiceGroup(services: [parts.application { listening.yield($0) }], logger: parts.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                var portIterator = ports.makeAsyncIterator()
                let port = try #require(await portIterator.next())
                // A server that failed to start announces no token: stop here rather than wait for one forever.
                try #require(await parts.readiness.settled() == .ready)
                var tokenIterator = tokens.makeAsyncIterator()
                let token = try #require(await tokenIterator.next()).token
                let url = "http://127.0.0.1:\(port)"
                try await body(CLIServer(url: url, token: token, admin: AdminClient(server: URL(string: url)!, token: token), directory: directory))
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
