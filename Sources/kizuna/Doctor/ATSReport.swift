import Foundation
import KizunaCore

/// What `kizuna doctor` found for one URL: the probe's findings, each nscurl configuration's result, the smallest
/// exception that passes and the server settings that would make it unnecessary. Encoded as `--json` prints it.
struct ATSReport: Codable, Sendable {
    /// One configuration's result, under its section.
    struct TestResult: Codable, Sendable {
        var section: String
        var name: String
        var dictionary: String
        var result: ATSResult
    }

    var url: String
    var host: String
    var unreachable = false
    var findings = ATSFindings()
    var handshakes: [ATSFindings.Handshake] = []
    var certificates: [CertificateInspection.Summary] = []
    var redirects: [String] = []
    var results: [TestResult] = []
    /// Per domain; `nil` when no exception passes.
    var smallestException: [ATSDomainException]?
    /// What to change on the server instead, each naming the setting.
    var serverFixes: [String] = []
    var notes: [String] = []

    init(url: String, host: String) {
        self.url = url
        self.host = host
    }

    var defaultPasses: Bool { results.first?.result.passed ?? false }

    /// Runs nscurl's configurations against the findings, and works out the exception and the server's fixes.
    mutating func judge() {
        results = ATSDiagnostics.sections(host: host).flatMap { section in
            section.tests.map {
                TestResult(
                    section: section.title, name: $0.name, dictionary: $0.configuration.plistDescription(host: host),
                    result: findings.result($0.configuration))
            }
        }
        smallestException = ATSDiagnostics.smallestException(findings, host: host)
        notes += findings.certificateNotes
        serverFixes = Self.fixes(findings)
    }

    /// The server settings that make the default configuration pass.
    static func fixes(_ findings: ATSFindings) -> [String] {
        var fixes: [String] = []
        if !findings.certificateProblems.isEmpty {
            fixes.append(
                "Replace the certificate: \(findings.certificateProblems.map(\.message).joined(separator: "; ")). Issue one for the name, with a 2048-bit RSA or P-256 key, signed with SHA-256, serverAuth in its extendedKeyUsage, from a CA iOS trusts (Let's Encrypt's certificates meet every rule)."
            )
        }
        func passes(_ minimum: ATSTLSVersion, _ forwardSecrecy: Bool) -> Bool {
            findings.handshakes.contains { $0.minimum == minimum && $0.forwardSecrecy == forwardSecrecy && $0.negotiated != nil }
        }
        if !findings.handshakes.isEmpty, !passes(.tls12, true) {
            let oldVersionsOnly = !passes(.tls12, false) && (passes(.tls10, true) || passes(.tls10, false))
            let noForwardSecrecy = !passes(.tls10, true) && passes(.tls10, false)
            if oldVersionsOnly || !noForwardSecrecy {
                fixes.append("Enable TLS 1.2 and 1.3 on the server (nginx: ssl_protocols TLSv1.2 TLSv1.3;).")
            }
            if noForwardSecrecy || !oldVersionsOnly {
                fixes.append(
                    "Offer ECDHE key exchange with AES (nginx: ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384;)."
                )
            }
        }
        if findings.cleartext {
            fixes.append(
                findings.handshakes.isEmpty
                    ? "Serve the URL over https:// and have the app load that."
                    : "Redirect to https://, not http:// (nginx: return 301 https://$host$request_uri;).")
        }
        return fixes
    }

    /// nscurl's layout, then the smallest exception, the server's fixes and the notes.
    func text(verbose: Bool) -> String {
        let rule = String(repeating: "=", count: 80)
        var lines = [
            "Starting ATS Diagnostics", "",
            "Configuring ATS Info.plist keys and displaying the result of HTTPS loads to \(url).",
            "A test will \"PASS\" if URLSession:task:didCompleteWithError: returns a nil error.",
        ]
        if unreachable {
            lines += [rule, "", "The server could not be reached: \(notes.last ?? "")", ""]
            return lines.joined(separator: "\n")
        }
        if verbose { lines += verboseLines(rule: rule) }
        var section: String?
        for test in results {
            if test.section != section {
                lines += [rule, "", test.section, "---"]
                section = test.section
            }
            lines += [test.name, "ATS Dictionary:", test.dictionary, "Result : \(test.result.passed ? "PASS" : "FAIL")"]
            if !test.result.passed { lines.append("Error : \(Self.errorText(test.result))") }
            lines.append("---")
            if test.name == results.last(where: { $0.section == test.section })?.name { lines.append("") }
        }
        lines += [rule, "", "Smallest exception that passes", "---"]
        if let exception = smallestException {
            if exception.allSatisfy({ $0.configuration.isDefault }) {
                lines.append("None needed: the default configuration passes.")
            } else {
                lines += [ATSDomainException.plistDescription(exception), "", "In Info.plist:", ATSDomainException.infoPlistXML(exception)]
            }
        } else {
            lines.append("None: no ATS exception lets the load through, not even NSAllowsArbitraryLoads. The fix is on the server.")
        }
        lines.append("---")
        if !serverFixes.isEmpty {
            lines += ["", smallestException == nil ? "The fix on the server" : "Or fix it on the server, so no exception is needed", "---"]
            lines += serverFixes.map { "- \($0)" }
            lines.append("---")
        }
        if !notes.isEmpty {
            lines += ["", "Notes", "---"]
            lines += notes.map { "- \($0)" }
            lines.append("---")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func verboseLines(rule: String) -> [String] {
        var lines = [rule, "", "Handshakes (the client offering TLS n to 1.3, ATS's suites)", "---"]
        for handshake in handshakes {
            let profile = "\(handshake.minimum.rawValue)+\(handshake.forwardSecrecy ? "" : ", PFS disabled")"
            if let negotiated = handshake.negotiated {
                lines.append("\(profile): \(negotiated.rawValue), \(handshake.cipherSuite ?? "suite unknown")")
            } else {
                lines.append("\(profile): failed — \(handshake.failure ?? "refused")")
            }
        }
        lines += ["---", "", "Certificates, leaf first", "---"]
        let formatter = ISO8601DateFormatter()
        for certificate in certificates {
            lines.append("\(certificate.subject) (issued by \(certificate.issuer))")
            lines.append(
                "  \(certificate.key), \(certificate.signature), \(certificate.notBefore.map(formatter.string) ?? "?") to \(certificate.notAfter.map(formatter.string) ?? "?")"
            )
            if !certificate.names.isEmpty { lines.append("  names: \(certificate.names.joined(separator: ", "))") }
        }
        lines += findings.certificateProblems.map { "✗ \($0)" } + ["---"]
        if !redirects.isEmpty { lines += ["", "Redirects", "---"] + redirects + ["---"] }
        lines.append("")
        return lines
    }

    static func errorText(_ result: ATSResult) -> String {
        var parts: [String] = []
        if let code = result.code { parts.append("NSURLErrorDomain Code=\(code)") }
        if let stream = result.streamCode { parts.append("_kCFStreamErrorCodeKey=\(stream)") }
        return parts.joined(separator: ", ") + (parts.isEmpty ? "" : ": ") + (result.reason ?? "")
    }
}
