import Foundation

/// What `kizuna doctor associated-domains` finds about a domain's apple-app-site-association file, judged the way iOS
/// judges it: fetched without following redirects, a 2xx with a valid file associates, a 3xx or 4xx denies the
/// association until the app is next installed or updated, a 5xx is retried. Pure: the command does the fetching.
public struct AssociationDiagnosis: Sendable, Hashable, Codable {
    /// What one GET answered.
    public struct Fetch: Sendable, Hashable, Codable {
        public var url: String
        /// `nil` when there was no answer (``error`` says why).
        public var status: Int?
        public var contentType: String?
        /// A redirect's target.
        public var location: String?
        public var body: Data
        public var error: String?

        public init(url: String, status: Int?, contentType: String? = nil, location: String? = nil, body: Data = Data(), error: String? = nil) {
            self.url = url
            self.status = status
            self.contentType = contentType
            self.location = location
            self.body = body
            self.error = error
        }
    }

    /// How iOS takes the answer.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// A 2xx with a file iOS can read: the domain is associated.
        case associated
        /// A 2xx iOS cannot read, a redirect, or a 4xx: denied until the app is next installed or updated.
        case denied
        /// A 5xx, or no answer: iOS tries again every 3 hours, up to 8 times.
        case retried
    }

    /// Which app a URL opens.
    public struct Opening: Sendable, Hashable, Codable {
        public var url: String
        /// `nil` when no app opens it (Safari does).
        public var appID: String?
    }

    /// The largest file iOS reads, uncompressed.
    public static let maximumSize = 128 * 1024

    public var host: String
    public var outcome: Outcome
    public var checks: [ReleaseCheck]
    public var openings: [Opening]
    /// The file, when it could be read.
    public var file: AppSiteAssociation?

    /// Judges `wellKnown` (the answer for `/.well-known/apple-app-site-association`), with `root` (the answer for
    /// `/apple-app-site-association`, which only iOS before 9.3 reads) beside it.
    /// - Parameters:
    ///   - appID: `TEAMID.bundle.id`, checked in `webcredentials` and `applinks`.
    ///   - urls: URLs whose opening app to tell, by Apple's first-match rules.
    ///   - expected: The file the registry generates for the domain (`--app`), compared with the live one.
    public init(host: String, wellKnown: Fetch, root: Fetch?, appID: String? = nil, urls: [URL] = [], expected: Data? = nil) {
        self.host = host
        var checks: [ReleaseCheck] = []
        if !wellKnown.url.lowercased().hasPrefix("https://") {
            let message = "iOS fetches the file over HTTPS only, with a certificate it trusts; this was \(wellKnown.url)"
            checks.append(ReleaseCheck("https", .error, message))
        }
        let (outcome, file) = Self.judge(wellKnown, into: &checks)
        self.outcome = outcome
        self.file = file
        if let file {
            Self.checkForms(file, into: &checks)
            if let appID { Self.checkAppID(appID, in: file, into: &checks) }
            if let expected { Self.compare(wellKnown.body, with: expected, into: &checks) }
        }
        if let root {
            let answer = root.status.map { "answers \($0)" } ?? "gives no answer"
            let message = "/apple-app-site-association \(answer): only iOS before 9.3 reads it; the /.well-known/ file is the one"
            checks.append(ReleaseCheck("root", .passed, message))
        }
        openings = urls.map { url in Opening(url: url.absoluteString, appID: file?.applinks?.appID(opening: url)) }
        self.checks = checks
    }

    /// The worst finding, for the exit code (`--fail-on`), as ``IPAInspection/worst`` gives it.
    public var worst: PrivateSelectors.Severity? { checks.compactMap(\.status.severity).max() }

    private static func judge(_ fetch: Fetch, into checks: inout [ReleaseCheck]) -> (Outcome, AppSiteAssociation?) {
        guard let status = fetch.status else {
            checks.append(ReleaseCheck("answer", .error, "no answer (\(fetch.error ?? "unknown")): iOS tries again every 3 hours, up to 8 times"))
            return (.retried, nil)
        }
        switch status {
        case 200..<300: break
        case 300..<400:
            let target = fetch.location.map { " to \($0)" } ?? ""
            checks.append(
                ReleaseCheck(
                    "answer", .error,
                    "\(status) redirect\(target): iOS does not follow redirects for this file, so the association is denied until the app is next installed or updated"
                ))
            return (.denied, nil)
        case 400..<500:
            checks.append(ReleaseCheck("answer", .error, "\(status): the association is denied until the app is next installed or updated"))
            return (.denied, nil)
        default:
            let message = "\(status): iOS tries again every 3 hours, up to 8 times, then gives up until the app is updated"
            checks.append(ReleaseCheck("answer", .error, message))
            return (.retried, nil)
        }
        checks.append(ReleaseCheck("answer", .passed, "\(status), no redirect"))
        let type = fetch.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        checks.append(
            type == "application/json"
                ? ReleaseCheck("content-type", .passed, "served as application/json")
                : ReleaseCheck("content-type", .error, "served as \(fetch.contentType ?? "no content type"): it must be application/json"))
        guard fetch.body.count <= maximumSize else {
            let message = "\(fetch.body.count) bytes: iOS reads at most \(maximumSize) (128 KB), so the association fails"
            checks.append(ReleaseCheck("size", .error, message))
            return (.denied, nil)
        }
        checks.append(ReleaseCheck("size", .passed, "\(fetch.body.count) bytes, within 128 KB"))
        do {
            let file = try JSONDecoder().decode(AppSiteAssociation.self, from: fetch.body)
            checks.append(ReleaseCheck("json", .passed, "a valid apple-app-site-association file"))
            return (.associated, file)
        } catch {
            checks.append(ReleaseCheck("json", .error, "not a valid apple-app-site-association file (\(Self.reason(error))): the association fails"))
            return (.denied, nil)
        }
    }

    private static func checkForms(_ file: AppSiteAssociation, into checks: inout [ReleaseCheck]) {
        if file.applinks == nil, file.webcredentials == nil, file.appclips == nil {
            checks.append(ReleaseCheck("services", .error, "the file has no applinks, webcredentials or appclips: it associates nothing"))
        }
        for (index, detail) in (file.applinks?.details ?? []).enumerated() where detail.isLegacyOnly {
            let app = detail.appIDs.first ?? "?"
            checks.append(
                ReleaseCheck(
                    "applinks.legacy", .warning,
                    "applinks detail \(index + 1) (\(app)) has only the legacy \"paths\" form: iOS 13 and later prefer \"components\", which can also match queries and fragments and exclude per rule"
                ))
        }
    }

    private static func checkAppID(_ appID: String, in file: AppSiteAssociation, into checks: inout [ReleaseCheck]) {
        let credentials = file.webcredentials?.apps.contains(appID) == true
        let links = file.applinks?.details.contains { $0.appIDs.contains(appID) } == true
        guard credentials || links else {
            return checks.append(ReleaseCheck("app-id", .error, "\(appID) is in neither webcredentials nor applinks: the file does not associate it"))
        }
        checks.append(
            credentials
                ? ReleaseCheck("webcredentials", .passed, "\(appID) may use the domain's saved passwords")
                : ReleaseCheck(
                    "webcredentials", .warning, "\(appID) is not in webcredentials: AutoFill will not offer the domain's passwords in the app"))
        checks.append(
            links
                ? ReleaseCheck("applinks", .passed, "\(appID) has universal-link rules")
                : ReleaseCheck("applinks", .warning, "\(appID) is in no applinks detail: universal links to the domain open Safari"))
    }

    private static func compare(_ live: Data, with expected: Data, into checks: inout [ReleaseCheck]) {
        let decoder = JSONDecoder()
        guard let served = try? decoder.decode(JSONValue.self, from: live), let generated = try? decoder.decode(JSONValue.self, from: expected)
        else { return }
        if served == generated {
            checks.append(ReleaseCheck("registry", .passed, "the live file is what Kizuna generates"))
        } else {
            let keys = Set((served.objectValue ?? [:]).keys).union((generated.objectValue ?? [:]).keys).sorted()
            let differing = keys.filter { served[$0] != generated[$0] }
            checks.append(
                ReleaseCheck(
                    "registry", .error,
                    "the live file differs from what Kizuna generates (in \(differing.joined(separator: ", "))): a proxy or CDN serving an older copy, or another server answering for the domain"
                ))
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).filter { !$0.isEmpty }.joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, let context):
            let path = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            return "\(path) is missing"
        default:
            return "\(error)"
        }
    }
}
