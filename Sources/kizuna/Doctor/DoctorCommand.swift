import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `kizuna doctor`: what an iOS device will make of a server, checked from any Linux box or CI job.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check a server the way iOS will: App Transport Security, and its apple-app-site-association file.",
        discussion: "kizuna doctor https://host runs the ATS diagnostics (kizuna doctor ats).",
        subcommands: [ATSDoctor.self, AssociatedDomainsDoctor.self],
        defaultSubcommand: ATSDoctor.self
    )
}

/// `kizuna doctor associated-domains https://host`: the file fetched and judged as iOS fetches and judges it.
struct AssociatedDomainsDoctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "associated-domains",
        abstract: "Fetch a domain's apple-app-site-association as iOS does, and say what iOS will make of it.",
        discussion: """
            Fetches /.well-known/apple-app-site-association (and, for reference, /apple-app-site-association) without \
            following redirects, as iOS does, and judges the answer: 2xx with a valid file associates the domain; a \
            redirect or a 4xx denies the association until the app is next installed or updated; a 5xx is retried \
            every 3 hours, up to 8 times. Checks the content type (application/json), the size (at most 128 KB), the \
            file's form (components, or the legacy paths), that --app-id is in webcredentials and applinks, and for \
            each --url which app opens it under Apple's first-match rules. With --app (and --server/--token) it also \
            compares the live file with the one Kizuna generates.

            Exit codes: 0 when nothing is at or above --fail-on; 1 when something is; 64 for a usage error.
            """
    )

    @Argument(help: "The domain, as https://host[:port].") var domain: String
    @Option(name: .customLong("app-id"), help: "TEAMID.bundle.id: check it is in webcredentials and applinks.") var appID: String?
    @Option(name: .customLong("url"), help: "A URL on the domain: tell which app opens it. Repeatable.") var urls: [String] = []
    @Option(help: "A Kizuna app: compare the live file with the one Kizuna generates (needs --server and --token).") var app: String?
    @Option(name: .customLong("fail-on"), help: "Exit 1 on a finding at this level or above: warning or error.")
    var failOn: PrivateSelectors.Severity = .error
    @OptionGroup var server: ServerOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard let url = URL(string: domain), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("The domain must be https://host[:port], got '\(domain)'.")
        }
        for text in urls where URL(string: text)?.host == nil { throw ValidationError("--url '\(text)' is not an absolute URL.") }
    }

    func run() async throws {
        let diagnosis = try await diagnose(.process)
        if output.json { try output.printJSON(diagnosis) } else { print(Self.report(diagnosis), terminator: "") }
        if let worst = diagnosis.worst, worst >= failOn { throw ExitCode.failure }
    }

    func diagnose(_ environment: Environment) async throws -> AssociationDiagnosis {
        let base = URL(string: domain)!
        let fetcher = NoRedirectFetcher()
        let wellKnown = await fetcher.get(base.appendingPathComponent(".well-known/apple-app-site-association"))
        let root = await fetcher.get(base.appendingPathComponent("apple-app-site-association"))
        var expected: Data?
        if let app {
            // The whole file Kizuna serves: the app's part is what --app names, the rest is other apps'.
            let client = try server.client(environment)
            _ = try await client.app(id: app)
            expected = try await client.associationFile(app: nil)
        }
        return AssociationDiagnosis(
            host: base.host ?? domain, wellKnown: wellKnown, root: root, appID: appID, urls: urls.compactMap(URL.init(string:)), expected: expected)
    }

    static func report(_ diagnosis: AssociationDiagnosis) -> String {
        var lines = ["apple-app-site-association for \(diagnosis.host): \(diagnosis.outcome.rawValue)"]
        for check in diagnosis.checks { lines.append("  \(check.status.mark) \(check.id): \(check.message)") }
        if !diagnosis.openings.isEmpty { lines.append("URLs") }
        for opening in diagnosis.openings { lines.append("  \(opening.url) → \(opening.appID ?? "no app (Safari)")") }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension ReleaseCheck.Status {
    /// ✓, ⚠, ✗ or – in a report.
    var mark: String {
        switch self {
        case .passed: "✓"
        case .warning: "⚠"
        case .error: "✗"
        case .skipped: "–"
        }
    }
}

/// GETs that do not follow redirects (iOS does not, for this file): a 3xx is the answer, with its `Location`.
final class NoRedirectFetcher: NSObject, URLSessionTaskDelegate, Sendable {
    /// The most read of an answer: a little over what iOS reads, to tell an oversized file.
    static let limit = AssociationDiagnosis.maximumSize * 8

    func get(_ url: URL) async -> AssociationDiagnosis.Fetch {
        var request = URLRequest(url: url, timeoutInterval: 20)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("kizuna-doctor", forHTTPHeaderField: "User-Agent")
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                return .init(url: url.absoluteString, status: nil, error: "the answer was not HTTP")
            }
            return .init(
                url: url.absoluteString, status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"),
                location: http.value(forHTTPHeaderField: "Location"), body: data.prefix(Self.limit))
        } catch {
            return .init(url: url.absoluteString, status: nil, error: error.localizedDescription)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
