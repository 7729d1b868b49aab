import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send push notifications through APNs, and manage an app's credentials and registry.",
        subcommands: [Credentials.self, Send.self, Jobs.self, Status.self, Cancel.self, Devices.self]
    )

    struct Credentials: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "credentials", abstract: "An app's APNs token-signing key.", subcommands: [Set.self, Show.self, Remove.self])

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set the app's .p8 key, key id and team id; stored encrypted, never shown again.",
                discussion: """
                    The key comes from Certificates, Identifiers & Profiles → Keys (with Apple Push Notifications \
                    service enabled). The topic defaults to the app's bundle id; --environment limits sends to one APNs \
                    environment (each device's own by default).
                    """)
            @Option(help: "The .p8 file Apple gave for the key.") var p8: String
            @Option(name: .customLong("key-id"), help: "The key's 10-character id.") var keyId: String
            @Option(name: .customLong("team-id"), help: "Your team's 10-character id.") var teamId: String
            @Option(help: "The apns-topic, when not the app's bundle id.") var topic: String?
            @Option(help: "sandbox or production: send only there.") var environment: APNsEnvironment?
            @OptionGroup var target: AppTarget

            func run() async throws {
                let (client, app) = try target.resolve()
                let text: String
                do {
                    text = try String(contentsOfFile: p8, encoding: .utf8)
                } catch {
                    throw ValidationError("Could not read --p8 \(p8): \(error.localizedDescription)")
                }
                let info = try await client.setPushCredentials(
                    app: app, PushCredentialsUpload(p8: text, keyId: keyId, teamId: teamId, topic: topic, environment: environment))
                if target.output.json { return try target.output.printJSON(info) }
                print("Set APNs credentials for \(app): key \(info.keyId), team \(info.teamId), topic \(info.topic).")
                print("Key fingerprint (SHA-256 of its public half): \(info.keyFingerprint)")
            }
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show the app's credentials (never the key).")
            @OptionGroup var target: AppTarget

            func run() async throws {
                let (client, app) = try target.resolve()
                let info = try await client.pushCredentials(app: app)
                if target.output.json { return try target.output.printJSON(info) }
                print("key \(info.keyId)  team \(info.teamId)  topic \(info.topic)  environment \(info.environment?.rawValue ?? "each device's own")")
                print("fingerprint \(info.keyFingerprint)")
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove the app's credentials.")
            @OptionGroup var target: AppTarget

            func run() async throws {
                let (client, app) = try target.resolve()
                try await client.deletePushCredentials(app: app)
                print("Removed the APNs credentials of \(app).")
            }
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a notification to one install, a user's devices, or every device matching a condition.",
            discussion: """
                Exactly one of --install, --user, --where or --all. Texts in other languages: --title-in ja=こんにちは \
                (repeatable; a device gets its locale's, else the plain --title). --at takes an RFC 3339 time \
                (2026-12-01T09:00:00Z); with --local-time, a time without offset (2026-12-01T09:00) reached in each \
                device's own time zone.
                """)
        @Option(help: "An install id (repeatable).") var install: [String] = []
        @Option(help: "A user id (repeatable): every device registered as them.") var user: [String] = []
        @Option(name: .customLong("where"), help: #"A condition as JSON, such as '{"appVersion":{">=":"2.0"}}'."#) var condition: String?
        @Flag(help: "Every device of the app.") var all = false
        @Option(help: "The title.") var title: String?
        @Option(help: "The subtitle.") var subtitle: String?
        @Option(help: "The body.") var body: String?
        @Option(name: .customLong("title-in"), help: "LANG=TEXT: the title in a language (repeatable).") var titleIn: [String] = []
        @Option(name: .customLong("body-in"), help: "LANG=TEXT: the body in a language (repeatable).") var bodyIn: [String] = []
        @Option(help: "The badge number.") var badge: Int?
        @Option(help: "A sound's name, or default.") var sound: String?
        @Option(name: .customLong("collapse-id"), help: "Notifications with one collapse id replace each other.") var collapseId: String?
        @Option(help: "The app's own keys beside aps, as a JSON object.") var data: String?
        @Option(help: "When to send (RFC 3339; with --local-time, without offset). Now by default.") var at: String?
        @Flag(name: .customLong("local-time"), help: "Send at --at in each device's own time zone.") var localTime = false
        @Option(name: .customLong("time-zone"), help: "With --local-time: the zone of devices that registered none (UTC).") var timeZone: String?
        @OptionGroup var target: AppTarget

        func validate() throws {
            guard [!install.isEmpty, !user.isEmpty, condition != nil, all].filter({ $0 }).count == 1 else {
                throw ValidationError("Name exactly one target: --install, --user, --where or --all.")
            }
        }

        func run() async throws {
            let (client, app) = try target.resolve()
            let job = try await client.sendPush(app: app, try request())
            if target.output.json { return try target.output.printJSON(job) }
            print("Created push job \(job.id) (\(job.state.rawValue)); follow it with: kizuna push status \(job.id)")
        }

        func request() throws -> PushSendRequest {
            try validate()
            let target: PushTarget =
                if !install.isEmpty { .installs(install) } else if !user.isEmpty { .users(user) } else if let condition {
                    .condition(try Self.json(condition, "--where"))
                } else { .all }
            var dataObject: [String: JSONValue]?
            if let data {
                guard case .object(let object) = try Self.json(data, "--data") else { throw ValidationError("--data must be a JSON object.") }
                dataObject = object
            }
            let message = PushMessage(
                title: try Self.text(title, titleIn, "--title"), subtitle: subtitle.map { PushText($0) }, body: try Self.text(body, bodyIn, "--body"),
                badge: badge, sound: sound, data: dataObject, collapseId: collapseId)
            return PushSendRequest(target: target, message: message, sendAt: at, localTime: localTime ? true : nil, fallbackTimeZone: timeZone)
        }

        private static func json(_ text: String, _ flag: String) throws -> JSONValue {
            do {
                return try JSONValue(parsing: text)
            } catch {
                throw ValidationError("\(flag) is not JSON: \(text)")
            }
        }

        private static func text(_ plain: String?, _ localized: [String], _ flag: String) throws -> PushText? {
            var texts: [String: String] = [:]
            for entry in localized {
                guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                    throw ValidationError("\(flag)-in takes LANG=TEXT, such as ja=こんにちは; got '\(entry)'.")
                }
                texts[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
            }
            guard let plain else {
                if texts.isEmpty { return nil }
                throw ValidationError("\(flag)-in needs \(flag) too: the text of every other language.")
            }
            return PushText(plain, localized: texts)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a push job: its state, its devices by outcome and the reasons.")
        @Argument(help: "The job's id (push_…).") var id: String
        @Flag(help: "List each device's outcome too.") var deliveries = false
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let job = try await client.pushJob(id)
            if output.json && !deliveries { return try output.printJSON(job) }
            var outcomes: [PushDeliveryStatus] = []
            if deliveries {
                var after: String?
                repeat {
                    let page = try await client.pushDeliveries(job: id, after: after, limit: 1000)
                    outcomes += page.deliveries
                    after = page.next
                } while after != nil
            }
            if output.json { return try output.printJSON(PushDeliveryList(deliveries: outcomes, next: nil)) }
            let totals = job.totals
            print("\(job.id)  \(job.app)  \(job.state.rawValue)")
            print("devices \(totals.devices): sent \(totals.sent), pending \(totals.pending), failed \(totals.failed), skipped \(totals.skipped)")
            for (reason, count) in job.reasons.sorted(by: { $0.key < $1.key }) { print("  \(reason): \(count)") }
            for outcome in outcomes {
                print("\(outcome.installId)  \(outcome.state.rawValue)\(outcome.reason.map { "  \($0)" } ?? "")  attempts \(outcome.attempts)")
            }
        }
    }

    struct Jobs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the app's latest push jobs, newest first.")
        @Option(help: "How many (1–100).") var limit = 20
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let jobs = try await client.pushJobs(app: app, limit: limit)
            if target.output.json { return try target.output.printJSON(PushJobList(jobs: jobs)) }
            if jobs.isEmpty { return print("No push jobs.") }
            for job in jobs {
                let totals = job.totals
                print(
                    "\(job.id)  \(job.state.rawValue)  devices \(totals.devices)  sent \(totals.sent)  failed \(totals.failed)  skipped \(totals.skipped)"
                )
            }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a push job; devices not yet sent to are skipped.")
        @Argument(help: "The job's id (push_…).") var id: String
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let job = try await server.client(.process).cancelPushJob(id)
            print("Cancelled \(job.id): \(job.totals.sent) sent before, \(job.totals.skipped) skipped.")
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the app's registered push devices in install id order.")
        @Option(help: "Devices per page (1–1000).") var limit = 100
        @Option(help: "Start after this install id (the 'next' of the previous page).") var after: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let page = try await client.pushDevices(app: app, after: after, limit: limit)
            if target.output.json { return try target.output.printJSON(page) }
            if page.devices.isEmpty { return print("No devices registered for push.") }
            for device in page.devices {
                let state = device.retiredAt == nil ? "active" : "retired"
                print(
                    "\(device.installId)  \(device.environment.rawValue)  \(state)  \(device.userId ?? "-")  \(device.appVersion ?? "-")  "
                        + "\(device.locale ?? "-")  \(device.timeZone ?? "-")  \(device.token.prefix(12))…")
            }
            if let next = page.next { print("More: --after '\(next)'") }
        }
    }
}

extension APNsEnvironment: ExpressibleByArgument {}
