import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Manage accounts through the admin API. USER is an account id (usr_…) or its identifier.",
        subcommands: [
            List.self, Show.self, Sessions.self, SignOut.self, Disable.self, Enable.self, Remove.self, ResetPassword.self, UserGroupCommand.self,
        ]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts in identifier order.")
        @Option(help: "Only identifiers containing this.") var search: String?
        @Option(help: "Accounts per page (1–500).") var limit = 50
        @Option(help: "Start after this identifier (the 'next' of the previous page).") var after: String?
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let page = try await client.users(after: after, limit: limit, search: search)
            if output.json { return try output.printJSON(page) }
            if page.users.isEmpty { return print("No accounts.") }
            for user in page.users {
                print("\(user.id)  \(user.identifier)  \(user.disabled ? "disabled" : "active")  sessions: \(user.activeSessions)")
            }
            if let next = page.next { print("More: --after '\(next)'") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one account with its devices.")
        @Argument(help: "The account's id or identifier.") var user: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let record = try await client.user(user)
            if output.json { return try output.printJSON(record) }
            printDetails(record)
        }
    }

    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List where an account is signed in: its sessions that have not expired.")
        @Argument(help: "The account's id or identifier.") var user: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let sessions = try await client.userSessions(user)
            if output.json { return try output.printJSON(SessionList(sessions: sessions)) }
            if sessions.isEmpty { return print("Signed in nowhere.") }
            for session in sessions {
                let place = [session.appId, session.name].compactMap { $0 }.joined(separator: " ")
                print(
                    "\(session.id)  \(session.kind.rawValue)  \(place.isEmpty ? "-" : place)  last used \(session.lastUsedAt.formatted(.iso8601))  "
                        + "expires \(session.expiresAt.formatted(.iso8601))")
            }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-out", abstract: "Sign one session of an account out at once (see 'kizuna user sessions'); 'disable' signs out all.")
        @Argument(help: "The account's id or identifier.") var user: String
        @Argument(help: "The session's id (ses_…).") var session: String
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let client = try server.client(.process)
            try await client.endUserSession(user, session: session)
            print("Signed out \(session).")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account and sign out every session.")
        @OptionGroup var target: StatusChange

        func run() async throws { try await target.apply(disabled: true) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled account.")
        @OptionGroup var target: StatusChange

        func run() async throws { try await target.apply(disabled: false) }
    }

    /// What `disable` and `enable` share: the account and where to reach the server.
    struct StatusChange: ParsableArguments {
        @Argument(help: "The account's id or identifier.") var user: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func apply(disabled: Bool) async throws {
            let client = try server.client(.process)
            let record = try await client.setUserDisabled(user, disabled)
            if output.json { return try output.printJSON(record) }
            print(disabled ? "Disabled \(record.identifier); every session is signed out." : "Enabled \(record.identifier).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete an account with its sessions and devices.")
        @Argument(help: "The account's id or identifier.") var user: String
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let client = try server.client(.process)
            try await client.deleteUser(user)
            print("Deleted \(user).")
        }
    }

    struct ResetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-password",
            abstract: "Create a single-use password-reset link (valid an hour) to hand to the account's owner.",
            discussion: "Kizuna sends no mail: pass the link on yourself. Redeeming it signs every session of the account out."
        )
        @Argument(help: "The account's id or identifier.") var user: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let grant = try await client.createPasswordReset(user)
            if output.json { return try output.printJSON(grant) }
            let url = grant.url.hasPrefix("/") ? client.server.absoluteString.trimmingTrailingSlash + grant.url : grant.url
            print(
                """
                Reset link (single use, until \(grant.expiresAt.formatted(.iso8601))):
                \(url)
                """)
        }
    }
}

private func printDetails(_ user: UserRecord) {
    print(
        """
        id:               \(user.id)
        identifier:       \(user.identifier) (\(user.kind.rawValue))
        status:           \(user.disabled ? "disabled" : "active")
        created:          \(user.createdAt.formatted(.iso8601))
        password changed: \(user.passwordChangedAt.formatted(.iso8601))
        last sign-in:     \(user.lastSignInAt?.formatted(.iso8601) ?? "-")
        active sessions:  \(user.activeSessions)
        """)
    for device in user.devices {
        print(
            "device:           \(device.appId) \(device.installId)\(device.name.map { " (\($0))" } ?? "")  last seen \(device.lastSeenAt.formatted(.iso8601))"
        )
    }
}

extension String {
    fileprivate var trimmingTrailingSlash: String { hasSuffix("/") ? String(dropLast()) : self }
}
