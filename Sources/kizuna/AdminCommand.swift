import ArgumentParser
import Foundation
import KizunaCore
import KizunaServer
import Logging

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Administer the server.",
        subcommands: [TokenCommand.self]
    )

    struct TokenCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "token",
            abstract: "Create, list and revoke admin tokens (works on the store directly).",
            subcommands: [Create.self, List.self, Revoke.self]
        )
    }
}

/// Opens the store, checks it is migrated, and hands a token repository to `body`.
private func withTokens<R>(_ store: StoreOptions, _ body: (any AdminTokenRepository) async throws -> R) async throws -> R {
    try await withStore(store) { database in
        guard try await !MigrationRunner(database: database).status().needsMigration else {
            throw KizunaError(.unavailable, "The store needs migrating first: run 'kizuna migrate' (or start 'kizuna serve').")
        }
        return try await body(AdminTokenSQLRepository(database: database))
    }
}

extension AdminCommand.TokenCommand {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an admin token and print it once.")

        @Option(help: "What the token is for, e.g. 'ci' or 'alice laptop'.")
        var name: String

        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let (token, credential) = try await withTokens(store) { try await $0.create(name: name) }
            if output.json {
                struct Created: Encodable {
                    let id: String
                    let name: String
                    let token: String
                }
                return try output.printJSON(Created(id: token.id, name: token.name, token: credential.token))
            }
            print("Created admin token '\(token.name)' (id \(token.id)). It is shown once:\n\n  \(credential.token)\n")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List admin tokens (never their secrets).")

        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let tokens = try await withTokens(store) { try await $0.list() }
            if output.json { return try output.printJSON(tokens) }
            if tokens.isEmpty { return print("No admin tokens.") }
            for token in tokens {
                let state = token.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                let used = token.lastUsedAt.map { "last used \($0.formatted(.iso8601))" } ?? "never used"
                print("\(token.id)  \(token.name)  created \(token.createdAt.formatted(.iso8601))  \(used)  \(state)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an admin token; it stops working at once.")

        @Argument(help: "The token's id (from 'kizuna admin token list').")
        var id: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let token = try await withTokens(store) { try await $0.revoke(id: id) }
            print("Revoked admin token '\(token.name)' (id \(token.id)).")
        }
    }
}
