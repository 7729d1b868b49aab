import ArgumentParser
import Foundation
import KizunaCore
import Subprocess
import Testing

@testable import kizuna

/// `kizuna doctor https://host` against nginx serving TLS the ways servers get it wrong, with certificates openssl
/// makes: each asserts nscurl's PASS/FAIL column, in nscurl's order, and the smallest exception.
@Suite("kizuna doctor (App Transport Security)")
struct DoctorATSTests {
    static let host = TLSFixtures.host

    /// A server: its certificate, its nginx TLS settings, and what the doctor must say.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var leaf = TLSFixtures.Leaf()
        /// nginx's settings beside the certificate; `nil` serves plain http.
        var tls: String? = "ssl_protocols TLSv1.2 TLSv1.3;"
        var locations = ""
        /// Whether the doctor is given the test CA, as a device that installed it.
        var trusted = true
        /// nscurl's 16 results in its order: default, arbitrary loads, TLS 1.3…1.0, PFS off, PFS off + http, TLS
        /// 1.3…1.0 with PFS off, and those with http too.
        var column: String
        var exception: [ATSDomainException]?
        /// What the certificate finding must say, when there is one, and the codes an app gets for it.
        var problem: String?
        var codes: [Int?] = []
        var testDescription: String { name }
    }

    static func only(_ configuration: ATSConfiguration) -> [ATSDomainException] { [ATSDomainException(domain: host, configuration: configuration)] }

    /// OpenSSL 3 refuses TLS 1.0, SHA-1 and 1024-bit keys below security level 0; the old servers need it.
    static let legacy = "ssl_ciphers DEFAULT:@SECLEVEL=0;"

    static let cases: [Case] = [
        Case(name: "a modern TLS 1.2/1.3 ECDHE host", column: "PPPPPPPPPPPPPPPP", exception: only(.default)),
        Case(
            name: "a TLS 1.0-only host without forward secrecy", leaf: .init(key: .rsa(2048)),
            tls: "ssl_protocols TLSv1; ssl_ciphers AES128-SHA:AES256-SHA:@SECLEVEL=0;", column: "FPFFFFFFFFFPFFFP",
            exception: only(ATSConfiguration(minimumTLSVersion: .tls10, requiresForwardSecrecy: false))),
        Case(
            name: "TLS 1.2 with only RSA key exchange", leaf: .init(key: .rsa(2048)),
            tls: "ssl_protocols TLSv1.2; ssl_ciphers AES128-GCM-SHA256:AES256-GCM-SHA384;", column: "FPFFFFPPFPPPFPPP",
            exception: only(ATSConfiguration(requiresForwardSecrecy: false))),
        Case(
            name: "a 1024-bit RSA key", leaf: .init(key: .rsa(1024)), tls: "ssl_protocols TLSv1.2 TLSv1.3; \(legacy)", column: allFail,
            problem: "RSA key is 1024 bits", codes: [-1202, nil]),
        Case(
            name: "a SHA-1 signed certificate", leaf: .init(sha1: true), tls: "ssl_protocols TLSv1.2 TLSv1.3; \(legacy)", column: allFail,
            problem: "signed with SHA-1", codes: [-1202, nil]),
        Case(
            name: "a self-signed certificate", leaf: .init(selfSigned: true), trusted: false, column: allFail, problem: "self-signed",
            codes: [-1202, -9813]),
        Case(
            name: "a name not in the SAN", leaf: .init(names: ["www.kizuna.test"]), column: allFail,
            problem: "the name \(host) is not in its subjectAltName (www.kizuna.test)", codes: [-1202, -9843]),
        Case(
            name: "an expired certificate", leaf: .init(expired: true), column: allFail, problem: "the leaf expired on 2020-12-01",
            codes: [-1201, -9814]),
        Case(
            name: "plain http", tls: nil, column: "FPFFFFFPFFFFPPPP", exception: only(ATSConfiguration(allowsInsecureHTTPLoads: true))),
        Case(
            name: "a redirect to http", locations: "location / { return 301 http://\(host)/; }", column: "FPFFFFFPFFFFPPPP",
            exception: only(ATSConfiguration(allowsInsecureHTTPLoads: true))),
    ]
    static let allFail = String(repeating: "F", count: 16)

    @Test(.enabled(if: TLSFixtures.shouldRun, "openssl and nginx are not installed (apt-get install nginx); .ci/run installs them"), arguments: cases)
    func eachServerGetsNscurlsColumnAndTheSmallestException(_ sample: Case) async throws {
        let fixtures = try await TLSFixtures.make(sample.leaf)
        defer { fixtures.remove() }
        let tls = sample.tls.map { "ssl_certificate \(fixtures.certificateFile.path); ssl_certificate_key \(fixtures.keyFile.path); \($0)" }
        let report = try await Nginx.serve(fixtures.directory, locations: sample.locations, tls: tls) { base in
            let port = try #require(base.port)
            var arguments = ["doctor", "\(base.scheme!)://\(Self.host):\(port)/", "--resolve", "\(Self.host):\(port):127.0.0.1"]
            if sample.trusted { arguments += ["--ca-file", fixtures.caFile.path] }
            let command = try #require(try Kizuna.parseAsRoot(arguments) as? ATSDoctor)
            return try await command.diagnose()
        }
        let column = String(report.results.map { $0.result.passed ? "P" : "F" })
        #expect(column == sample.column, "\(report.text(verbose: true))")
        #expect(report.smallestException == sample.exception)
        if let problem = sample.problem {
            #expect(report.findings.certificateProblems.first?.message.contains(problem) == true, "\(report.findings.certificateProblems)")
            #expect(report.results.allSatisfy { [$0.result.code, $0.result.streamCode] == sample.codes }, "\(report.results.map(\.result))")
        } else {
            #expect(report.findings.certificateProblems == [])
        }
        #expect(report.defaultPasses == (sample.column.first == "P"))
    }

    /// The binary as CI runs it: nscurl's report on standard output, the exception to paste, and the exit code.
    @Test(.enabled(if: TLSFixtures.shouldRun, "openssl and nginx are not installed (apt-get install nginx); .ci/run installs them"))
    func theCommandPrintsNscurlsReportAndExitsForCI() async throws {
        let fixtures = try await TLSFixtures.make(.init(key: .rsa(2048)))
        defer { fixtures.remove() }
        let certificate = "ssl_certificate \(fixtures.certificateFile.path); ssl_certificate_key \(fixtures.keyFile.path);"
        func doctor(_ tls: String, _ extra: [String] = []) async throws -> (lines: [String], status: TerminationStatus) {
            try await Nginx.serve(fixtures.directory, tls: "\(certificate) \(tls)") { base in
                let port = try #require(base.port)
                return try await Self.run(
                    ["doctor", "https://\(Self.host):\(port)/", "--resolve", "\(Self.host):\(port):127.0.0.1", "--ca-file", fixtures.caFile.path]
                        + extra)
            }
        }
        let modern = try await doctor("ssl_protocols TLSv1.2 TLSv1.3;")
        #expect(modern.status == .exited(0))
        #expect(modern.lines.first == "Starting ATS Diagnostics")
        #expect(modern.lines.filter { $0 == "Result : PASS" }.count == 16)
        #expect(modern.lines.contains("None needed: the default configuration passes."))

        let old = try await doctor("ssl_protocols TLSv1; ssl_ciphers AES128-SHA:@SECLEVEL=0;")
        #expect(old.status == .exited(1), "the default configuration fails: CI goes red")
        #expect(
            old.lines.contains(
                "Error : NSURLErrorDomain Code=-1200, _kCFStreamErrorCodeKey=-9836: no handshake offering TLS 1.2 to 1.3 with forward-secret suites only: the server refused the handshake with the alert protocol_version"
            ), "\(old.lines.joined(separator: "\n"))")
        let xml = old.lines.drop { $0 != "In Info.plist:" }.dropFirst().prefix { $0 != "---" }.joined(separator: "\n")
        #expect(
            xml == """
                <key>NSAppTransportSecurity</key>
                <dict>
                    <key>NSExceptionDomains</key>
                    <dict>
                        <key>api.kizuna.test</key>
                        <dict>
                            <key>NSExceptionMinimumTLSVersion</key>
                            <string>TLSv1.0</string>
                            <key>NSExceptionRequiresForwardSecrecy</key>
                            <false/>
                        </dict>
                    </dict>
                </dict>
                """)
        #expect(old.lines.contains { $0.contains("ssl_protocols TLSv1.2 TLSv1.3;") }, "and the server setting that makes it unnecessary")

        let json = try await doctor("ssl_protocols TLSv1.2; ssl_ciphers AES128-GCM-SHA256;", ["--json"])
        let report = try WireFormat.decoder().decode(ATSReport.self, from: Data(json.lines.joined(separator: "\n").utf8))
        #expect(report.smallestException == Self.only(ATSConfiguration(requiresForwardSecrecy: false)))
        #expect(report.results.first.map { [$0.result.code, $0.result.streamCode] } == [-1200, -9824], "no shared suite: errSSLPeerHandshakeFail")
        #expect(report.handshakes.first { $0.minimum == .tls12 && !$0.forwardSecrecy }?.cipherSuite == "TLS_RSA_WITH_AES_128_GCM_SHA256")

        let nobody = try await Self.run(["doctor", "https://\(Self.host):1/", "--resolve", "\(Self.host):1:127.0.0.1"])
        #expect(nobody.status == .exited(2))
        #expect(nobody.lines.contains { $0.contains("could not connect to 127.0.0.1:1") }, "\(nobody.lines)")
    }

    /// `kizuna ARGUMENTS` to its end: its output's lines and how it ended.
    static func run(_ arguments: [String]) async throws -> (lines: [String], status: TerminationStatus) {
        let (lines, status) = try await ServeProcess.run(arguments) { process in
            _ = await process.find { _ -> Bool? in nil }
            return process.seen
        }
        return (lines, status)
    }
}
