import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

extension PrivateSelectors.Severity: ExpressibleByArgument {}

/// `kizuna release inspect App.ipa [--app APP]`: what an archive is and whether the store will take it, on Linux.
struct ReleaseInspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Report an .ipa's identity, profile and entitlements, check them, and lint its binaries for private selectors.",
        discussion: """
            Reads the archive with the system's unzip (Info-ZIP). Reports the bundle id, version, build and minimum OS \
            from Info.plist; the team, expiry, kind and entitlements (associated domains, aps-environment, keychain \
            groups) of embedded.mobileprovision. Checks that the profile has not expired, is not ad hoc or development, \
            and covers the bundle id; with --app (and --server/--token) also that the bundle and team id are the app's, \
            that the profile has the associated domains Kizuna serves for it (on --domain, by default --server's host), \
            and that aps-environment is the app's push environment. Lints every Mach-O binary (main executable, \
            frameworks, app extensions; thin or fat): Objective-C selectors in Kizuna's private-selector denylist are \
            errors, other names with a leading underscore warnings.

            Exit codes: 0 when no finding is at or above --fail-on; 1 when one is; 2 when the archive cannot be read \
            or the app's record fetched; 64 for a usage error.
            """
    )

    @Argument(help: "The .ipa to inspect.") var ipa: String
    @Option(help: "The Kizuna app the build is for: also check it against the app's record.") var app: String?
    @Option(help: "The host Kizuna serves apple-app-site-association on. Default: --server's host.") var domain: String?
    @Option(name: .customLong("fail-on"), help: "Exit 1 on a finding at this level or above: warning or error.")
    var failOn: PrivateSelectors.Severity = .error
    @OptionGroup var server: ServerOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let inspection: IPAInspection
        do {
            inspection = try await inspect(.process)
        } catch let error as KizunaError {
            var standardError = StandardError()
            print("Error: \(error)", to: &standardError)
            throw ExitCode(2)
        }
        if output.json { try output.printJSON(inspection) } else { print(Self.report(inspection), terminator: "") }
        if let worst = inspection.worst, worst >= failOn { throw ExitCode.failure }
    }

    /// The inspection, with the app's record fetched when `--app` is given.
    func inspect(_ environment: Environment, now: Date = Date()) async throws -> IPAInspection {
        guard FileManager.default.isReadableFile(atPath: ipa) else { throw KizunaError(.badRequest, "Cannot read \(ipa).") }
        var registry: ReleaseChecks.Registry?
        if let app {
            let client = try server.client(environment)
            let record = try await client.app(id: app)
            let settings = try await client.associatedDomains(app: app)
            var released: [String: Set<String>] = [:]
            for release in try await client.releases(app: app, limit: 500) {
                released[(try? SemanticVersion(parsing: release.version))?.releaseKey ?? release.version, default: []].insert(release.build)
            }
            registry = ReleaseChecks.Registry(
                app: record, domain: domain ?? client.server.host ?? "", associatedDomains: settings, push: try await Self.push(client, app),
                released: released)
        }
        return try await IPAInspector.inspect(IPAArchive(path: ipa), registry: registry, now: now)
    }

    /// The app's APNs credentials; `nil` when it has none.
    private static func push(_ client: AdminClient, _ app: String) async throws -> PushCredentialsInfo? {
        do {
            return try await client.pushCredentials(app: app)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
    }

    /// The human-readable report: App, Profile, Entitlements, Checks, Private selectors.
    static func report(_ inspection: IPAInspection) -> String {
        var lines: [String] = []
        func row(_ label: String, _ value: String?) { lines.append("  \(label.padding(toLength: 24, withPad: " ", startingAt: 0))\(value ?? "–")") }
        let info = inspection.info
        lines.append("App  \(inspection.bundlePath)")
        row("bundle id", info.bundleId)
        row("version (build)", "\(info.version ?? "–") (\(info.build ?? "–"))")
        row("minimum OS", info.minimumOSVersion)
        if let profile = inspection.profile {
            lines.append("Profile")
            row("name", profile.name)
            row("team", profile.teamIdentifiers.joined(separator: ", "))
            row("kind", profile.kind.rawValue)
            row("expires", profile.expirationDate.map { ISO8601DateFormatter().string(from: $0) })
            lines.append("Entitlements")
            row("application-identifier", profile.applicationIdentifier)
            row("aps-environment", profile.apsEnvironment)
            row("associated domains", profile.associatedDomains?.joined(separator: ", "))
            row("keychain groups", profile.keychainAccessGroups?.joined(separator: ", "))
        } else {
            lines.append("Profile  none")
        }
        lines.append("Checks")
        for check in inspection.checks {
            lines.append("  \(check.status.mark) \(check.id): \(check.message)")
        }
        lines.append("Private selectors (\(inspection.binaries.count) binaries read)")
        if inspection.privateSelectors.isEmpty { lines.append("  none") }
        for finding in inspection.privateSelectors {
            let mark = finding.severity == .error ? "✗" : "⚠"
            lines.append("  \(mark) \(finding.selector)  \(finding.binary) (\(finding.architectures.joined(separator: ", ")))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
