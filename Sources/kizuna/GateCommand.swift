import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna gate`: the update gate policy through the admin API, and what it decides for a device.
struct GateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "Read, change, publish and check an app's update gate policy.",
        discussion: """
            `set` changes single fields of the live policy; `publish -f policy.json` replaces it; `import --force-alert` \
            turns a hand-made force-update parameter into the minimum version and its notice. `check` prints \
            what a device with the given context is told, and with --fail-if-blocking exits 3 when that is \
            `require` or `maintenance`, for CI.
            """,
        subcommands: [
            ShowDocument<GateDocument>.self, SetFields.self, PublishDocument<GateDocument>.self, ImportForceAlert.self, Check.self, Mirror.self,
            HistoryOfDocument<GateDocument>.self, DiffDocument<GateDocument>.self, RollbackDocument<GateDocument>.self,
        ]
    )

    struct SetFields: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Change fields of the live policy and publish the result as a new version.",
            discussion: "Reads the live policy and publishes over exactly that version, so a concurrent publish fails (412) instead of being lost."
        )

        @Option(name: .customLong("minimum-version"), help: "Below it: require (blocking).") var minimumVersion: String?
        @Option(name: .customLong("recommended-version"), help: "Below it: recommend.") var recommendedVersion: String?
        @Option(name: .customLong("nag-interval"), help: "Least seconds between two recommend prompts.") var nagInterval: Int?
        @Option(help: "Add a blocked version (repeatable).") var block: [String] = []
        @Option(help: "Remove a blocked version (repeatable).") var unblock: [String] = []
        @Option(help: "Turn maintenance on or off (the allow-list and window stay).") var maintenance: Switch?
        @Option(help: "Remove a field: minimumVersion, recommendedVersion, minimumOSVersion, maintenance, … (repeatable).") var clear: [String] =
            []
        @Option(name: .shortAndLong, help: "Why: recorded in the history.") var message: String?
        @OptionGroup var target: AppTarget

        enum Switch: String, ExpressibleByArgument, CaseIterable {
            case on, off
        }

        func validate() throws {
            let changes: [Bool] = [
                minimumVersion != nil, recommendedVersion != nil, nagInterval != nil, !block.isEmpty, !unblock.isEmpty, maintenance != nil,
                !clear.isEmpty,
            ]
            guard changes.contains(true) else { throw ValidationError("Nothing to change: give at least one option; see --help.") }
            for version in [minimumVersion, recommendedVersion].compactMap({ $0 }) + block + unblock {
                do {
                    _ = try SemanticVersion(parsing: version)
                } catch {
                    throw ValidationError("\(error)")
                }
            }
        }

        func run() async throws {
            let (client, app) = try target.resolve()
            let live = try await client.document(.gate, app: app)
            let policy = apply(to: live.document.objectValue ?? [:])
            try await publishDocument(
                .object(policy), of: .gate, message: message, expecting: .version(live.version), client: client, app: app, output: target.output)
        }

        func apply(to live: [String: JSONValue]) -> [String: JSONValue] {
            var policy = live
            for field in clear { policy[field] = nil }
            if let minimumVersion { policy["minimumVersion"] = .string(minimumVersion) }
            if let recommendedVersion { policy["recommendedVersion"] = .string(recommendedVersion) }
            if let nagInterval { policy["nagIntervalSeconds"] = .number(Double(nagInterval)) }
            if !block.isEmpty || !unblock.isEmpty {
                var blocked = (policy["blockedVersions"]?.arrayValue ?? []).filter { !unblock.contains($0.stringValue ?? "") }
                blocked += block.filter { !blocked.contains(.string($0)) }.map(JSONValue.string)
                policy["blockedVersions"] = blocked.isEmpty ? nil : .array(blocked)
            }
            if let maintenance {
                var section = policy["maintenance"]?.objectValue ?? [:]
                section["active"] = .bool(maintenance == .on)
                policy["maintenance"] = .object(section)
            }
            return policy
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what the gate decides for a device (no admin token needed).",
            discussion: "Exit status: 0, or 3 with --fail-if-blocking when the decision is require or maintenance."
        )

        @OptionGroup var device: DeviceOptions
        @Flag(name: .customLong("fail-if-blocking"), help: "Exit 3 when the decision is require or maintenance.") var failIfBlocking = false
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve(requireToken: false)
            let context = try device.context()
            let decision = try await client.checkGate(app: app, device: context)
            if target.output.json {
                try target.output.printJSON(decision)
            } else {
                print("\(decision.action.rawValue) (\(decision.reason.rawValue), policy version \(decision.policyVersion))")
                for (label, value) in [("title", decision.title), ("message", decision.message), ("url", decision.url)] {
                    if let value { print("\(label): \(value)") }
                }
                if let until = decision.until { print("until: \(until.formatted(.iso8601))") }
            }
            if failIfBlocking && decision.isBlocking { throw ExitCode(3) }
        }
    }
}

/// The device context of `gate check`, as flags.
struct DeviceOptions: ParsableArguments {
    @Option(name: .customLong("app-version"), help: "The app version (CFBundleShortVersionString), e.g. 3.10.0.") var appVersion: String
    @Option(name: .customLong("build"), help: "The build number (CFBundleVersion).") var buildNumber: String?
    @Option(help: "One of: \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).") var platform: Platform?
    @Option(name: .customLong("os-version"), help: "The OS version, e.g. 17.5.") var osVersion: String?
    @Option(help: "A BCP 47 locale, e.g. ja-JP.") var locale: String?
    @Option(help: "An ISO 3166-1 country code, e.g. JP.") var country: String?
    @Option(name: .customLong("install-id"), help: "An install id (for allow-lists and percentages).") var installId: String?
    @Option(help: "A custom attribute name=value (repeatable); true/false and numbers are typed.") var attribute: [String] = []

    func context() throws -> DeviceContext {
        var attributes: [String: AttributeValue] = [:]
        for pair in attribute {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--attribute must be name=value, got '\(pair)'.")
            }
            let value = String(pair[pair.index(after: equals)...])
            attributes[String(pair[..<equals])] = Bool(value).map(AttributeValue.bool) ?? Double(value).map(AttributeValue.number) ?? .string(value)
        }
        return DeviceContext(
            appVersion: appVersion, buildNumber: buildNumber, platform: platform, osVersion: osVersion, locale: locale, country: country,
            installId: installId, attributes: attributes.isEmpty ? nil : attributes)
    }
}
