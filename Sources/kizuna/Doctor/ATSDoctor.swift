import ArgumentParser
import Foundation
import KizunaCore
import NIOCore
import SwiftASN1
import X509

/// `kizuna doctor https://host`: will an iOS app be able to load this URL, and if not, what is the smallest App
/// Transport Security exception that lets it, or the server setting that makes one unnecessary.
struct ATSDoctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ats",
        abstract: "Say whether App Transport Security lets an iOS app load a URL, and the smallest exception that does.",
        discussion: """
            Probes the server with real TLS handshakes, the client constrained as each ATS configuration constrains \
            URLSession (TLS 1.3 to 1.0; ATS's cipher suites with and without forward secrecy), judges its certificate \
            chain as iOS does (trust, expiry, the name in the SAN, RSA and ECC key sizes, SHA-1 signatures, \
            extendedKeyUsage, validity limits, embedded SCTs), and follows redirects to http://. Then runs the \
            configurations `nscurl --ats-diagnostics` runs, in its order, printing each ATS dictionary and its result \
            with the error an app would see, and the smallest per-domain exception that passes, as Info.plist XML, or \
            the fix on the server when no exception can help.

            Trust is judged against Debian's CA bundle and the --ca-file certificates; Apple's root store is a \
            different list. iOS exempts IP addresses, unqualified names and .local names from ATS; test a server \
            by its public name, with --resolve to reach it at another address.

            Exit codes: 0 when the default configuration passes; 1 when it fails; 2 when the server cannot be reached; \
            64 for a usage error.
            """
    )

    @Argument(help: "The URL an app loads: https://host[:port][/path], or http://…") var url: String
    @Option(name: .customLong("ca-file"), help: "PEM certificates of a private CA the app's devices trust. Repeatable.")
    var caFiles: [String] = []
    @Option(help: "Connect to ADDRESS for HOST:PORT instead of resolving HOST, as curl's --resolve: HOST:PORT:ADDRESS.")
    var resolve: String?
    @Option(help: "Seconds to wait for each connection and handshake.") var timeout: Int = 10
    @Flag(help: "Also print each handshake's version and suite, and each certificate.") var verbose = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme), parsed.host != nil else {
            throw ValidationError("The URL must be https://host[:port][/path] or http://…, got '\(url)'.")
        }
        if let resolve, resolve.split(separator: ":", maxSplits: 2).count != 3 || Int(resolve.split(separator: ":")[1]) == nil {
            throw ValidationError("--resolve must be HOST:PORT:ADDRESS, got '\(resolve)'.")
        }
        guard (1...300).contains(timeout) else { throw ValidationError("--timeout must be 1 to 300 seconds.") }
    }

    func run() async throws {
        let report = try await diagnose()
        if output.json { try output.printJSON(report) } else { print(report.text(verbose: verbose), terminator: "") }
        if report.unreachable { throw ExitCode(2) }
        if !report.defaultPasses { throw ExitCode.failure }
    }

    /// Probes, inspects, and judges every configuration.
    func diagnose() async throws -> ATSReport {
        let target = URL(string: url)!
        let host = target.host!.lowercased()
        let secure = target.scheme?.lowercased() == "https"
        let port = target.port ?? (secure ? 443 : 80)
        var report = ATSReport(url: url, host: host)
        if TLSProbe.isAddress(host) || !host.contains(".") || host.hasSuffix(".local") {
            report.notes.append(
                "iOS 10 and later exempt IP addresses, unqualified names and .local names from ATS; what follows is what a public name would get")
        }
        guard secure else {
            report.findings.cleartext = true
            report.judge()
            return report
        }
        let probe = TLSProbe(
            host: host, port: port, address: address(host: host, port: port), path: Self.path(target), timeout: .seconds(Int64(timeout)))
        let outcomes = await withTaskGroup(of: (Int, TLSProbe.Outcome).self) { group in
            for (index, profile) in ATSFindings.profiles.enumerated() {
                group.addTask { (index, await probe.handshake(minimum: profile.minimum, forwardSecrecy: profile.forwardSecrecy)) }
            }
            var outcomes = [TLSProbe.Outcome?](repeating: nil, count: ATSFindings.profiles.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.compactMap { $0 }
        }
        if outcomes.allSatisfy(\.unreachable) {
            report.unreachable = true
            report.notes.append(outcomes.first?.failure ?? "the server could not be reached")
            return report
        }
        report.handshakes = zip(ATSFindings.profiles, outcomes).map { profile, outcome in
            ATSFindings.Handshake(
                minimum: profile.minimum, forwardSecrecy: profile.forwardSecrecy, negotiated: outcome.version,
                cipherSuite: outcome.cipherSuite.map(ServerHelloReader.name), failure: outcome.failure, alert: outcome.alert)
        }
        report.findings.handshakes = report.handshakes
        // The chain and the answer from the handshake most like an app's: the default's, else the widest.
        let preferred = ATSFindings.profiles.firstIndex { $0.minimum == .tls12 && $0.forwardSecrecy }!
        if let answered = ([outcomes[preferred]] + outcomes.reversed()).first(where: { $0.version != nil }) {
            let roots = try caFiles.flatMap(Self.certificates(inPEMFile:))
            let inspection = await CertificateInspection.inspect(
                chain: answered.chain, host: host, customRoots: roots, systemRoots: CertificateStore.systemTrustRoots)
            report.certificates = inspection.certificates
            report.findings.certificateProblems = inspection.problems
            report.findings.certificateNotes = inspection.notes
            try await followRedirects(from: answered, probe: probe, base: target, into: &report)
        }
        report.judge()
        return report
    }

    /// Follows the answer's redirects on the same host (up to five), to find a hop to `http://`.
    private func followRedirects(from first: TLSProbe.Outcome, probe: TLSProbe, base: URL, into report: inout ATSReport) async throws {
        var answer = first
        var current = base
        for _ in 0..<5 {
            guard let status = answer.status, (300..<400).contains(status), let location = answer.location,
                let next = URL(string: location, relativeTo: current)?.absoluteURL, let nextHost = next.host?.lowercased()
            else { return }
            report.redirects.append("\(status) → \(next.absoluteString)")
            if next.scheme?.lowercased() == "http" {
                report.findings.cleartext = true
                report.findings.cleartextHost = nextHost == report.host ? nil : nextHost
                return
            }
            guard nextHost == report.host, (next.port ?? 443) == probe.port else {
                report.notes.append("it redirects to \(next.absoluteString); run kizuna doctor on that URL too, as an app's load goes on there")
                return
            }
            var hop = probe
            hop.path = Self.path(next)
            answer = await hop.handshake(minimum: .tls10, forwardSecrecy: false)
            current = next
        }
    }

    private func address(host: String, port: Int) -> String? {
        guard let resolve else { return nil }
        let parts = resolve.split(separator: ":", maxSplits: 2).map(String.init)
        return parts[0].lowercased() == host && Int(parts[1]) == port ? parts[2] : nil
    }

    static func path(_ url: URL) -> String {
        let path = url.path.isEmpty ? "/" : url.path
        return url.query.map { "\(path)?\($0)" } ?? path
    }

    static func certificates(inPEMFile path: String) throws -> [Certificate] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("--ca-file '\(path)' could not be read: \(error.localizedDescription)")
        }
        do {
            let certificates = try PEMDocument.parseMultiple(pemString: text).map { try Certificate(pemDocument: $0) }
            guard !certificates.isEmpty else { throw ValidationError("--ca-file '\(path)' holds no PEM certificate.") }
            return certificates
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("--ca-file '\(path)' is not PEM certificates: \(error)")
        }
    }
}
