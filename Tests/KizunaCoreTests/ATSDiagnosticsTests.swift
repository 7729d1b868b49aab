import Foundation
import KizunaCore
import Testing

/// The ATS configurations nscurl tries, their results from probe findings, and the smallest exception that passes.
@Suite("ATS diagnostics")
struct ATSDiagnosticsTests {
    /// Findings for a server speaking `versions`, with forward-secret suites when `forwardSecret`, and plain-RSA ones
    /// when `plainRSA`.
    static func findings(versions: Set<ATSTLSVersion>, forwardSecret: Bool, plainRSA: Bool, certificate: [String] = []) -> ATSFindings {
        ATSFindings(
            handshakes: ATSFindings.profiles.map { profile in
                let common = versions.filter { $0 >= profile.minimum }.max()
                let suites = forwardSecret || (!profile.forwardSecrecy && plainRSA)
                guard let common, suites || common == .tls13 else {
                    return .init(
                        minimum: profile.minimum, forwardSecrecy: profile.forwardSecrecy, negotiated: nil,
                        failure: common == nil ? "the server speaks none of these versions" : "the server shares no cipher suite",
                        alert: common == nil ? "protocol_version" : "handshake_failure")
                }
                return .init(minimum: profile.minimum, forwardSecrecy: profile.forwardSecrecy, negotiated: common)
            }, certificateProblems: certificate.map { ATSFindings.CertificateProblem(.expired, $0) })
    }

    @Test func nscurlsSequenceHasSixteenConfigurationsInItsOrder() {
        let sections = ATSDiagnostics.sections(host: "api.example.com")
        #expect(sections.flatMap(\.tests).count == 16, "1 + 1 + 4 + 1 + 1 + 4 + 4")
        #expect(sections.map(\.title).first == "Default ATS Secure Connection")
        #expect(sections[2].tests.map(\.name) == ["TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1.0"])
        #expect(sections[6].title == "Configuring TLS exceptions with PFS disabled and insecure HTTP allowed for api.example.com")
    }

    @Test func dictionariesPrintAsNscurlAndAsInfoPlist() {
        let exception = ATSConfiguration(minimumTLSVersion: .tls10, requiresForwardSecrecy: false, allowsInsecureHTTPLoads: true)
        #expect(
            exception.plistDescription(host: "api.example.com") == """
                {
                    NSExceptionDomains =     {
                        "api.example.com" =         {
                            NSExceptionAllowsInsecureHTTPLoads = true;
                            NSExceptionMinimumTLSVersion = "TLSv1.0";
                            NSExceptionRequiresForwardSecrecy = false;
                        };
                    };
                }
                """)
        #expect(ATSConfiguration.default.plistDescription(host: "x.example") == "{\n}")
        #expect(ATSConfiguration(allowsArbitraryLoads: true).plistDescription(host: "x") == "{\n    NSAllowsArbitraryLoads = true;\n}")
        let xml = ATSConfiguration(requiresForwardSecrecy: false).infoPlistXML(host: "api.example.com")
        #expect(
            xml == """
                <key>NSAppTransportSecurity</key>
                <dict>
                    <key>NSExceptionDomains</key>
                    <dict>
                        <key>api.example.com</key>
                        <dict>
                            <key>NSExceptionRequiresForwardSecrecy</key>
                            <false/>
                        </dict>
                    </dict>
                </dict>
                """)
    }

    @Test func aModernHostPassesByDefaultAndNeedsNoException() {
        let modern = Self.findings(versions: [.tls12, .tls13], forwardSecret: true, plainRSA: false)
        #expect(modern.result(.default).passed)
        #expect(ATSDiagnostics.smallestException(modern, host: "h") == [.init(domain: "h", configuration: .default)])
        let tls13 = ATSDiagnostics.sections(host: "h").flatMap(\.tests).map { modern.result($0.configuration).passed }
        #expect(tls13.allSatisfy { $0 })
    }

    @Test func anOldHostNeedsExactlyTheVersionAndForwardSecrecyExceptions() {
        let old = Self.findings(versions: [.tls10], forwardSecret: false, plainRSA: true)
        let failure = old.result(.default)
        #expect(!failure.passed && failure.code == -1200 && failure.streamCode == -9836, "the server refused TLS 1.2")
        let noSuite = Self.findings(versions: [.tls12], forwardSecret: false, plainRSA: true).result(.default)
        #expect(noSuite.code == -1200 && noSuite.streamCode == -9824, "the server found no suite")
        #expect(
            ATSDiagnostics.smallestException(old, host: "h")
                == [.init(domain: "h", configuration: ATSConfiguration(minimumTLSVersion: .tls10, requiresForwardSecrecy: false))])
        let plainRSA = Self.findings(versions: [.tls12], forwardSecret: false, plainRSA: true)
        #expect(
            ATSDiagnostics.smallestException(plainRSA, host: "h") == [
                .init(domain: "h", configuration: ATSConfiguration(requiresForwardSecrecy: false))
            ])
    }

    @Test func plainHTTPNeedsInsecureLoadsAndACertificateProblemNoException() {
        let cleartext = ATSFindings(cleartext: true)
        #expect(cleartext.result(.default).code == -1022)
        #expect(
            ATSDiagnostics.smallestException(cleartext, host: "h") == [
                .init(domain: "h", configuration: ATSConfiguration(allowsInsecureHTTPLoads: true))
            ])
        let expired = Self.findings(versions: [.tls12, .tls13], forwardSecret: true, plainRSA: false, certificate: ["it expired on 2020-02-01"])
        #expect(ATSDiagnostics.smallestException(expired, host: "h") == nil, "the fix is on the server")
        #expect(expired.result(ATSConfiguration(allowsArbitraryLoads: true)).reason?.contains("expired") == true)
    }

    @Test func aRedirectToHTTPNeedsInsecureLoadsWhereItGoesAndNowhereElse() {
        var sameHost = Self.findings(versions: [.tls12, .tls13], forwardSecret: true, plainRSA: false)
        sameHost.cleartext = true
        #expect(sameHost.result(.default).code == -1022, "the handshake passes; the redirect is blocked")
        #expect(
            ATSDiagnostics.smallestException(sameHost, host: "api.example.com")
                == [.init(domain: "api.example.com", configuration: ATSConfiguration(allowsInsecureHTTPLoads: true))])
        var elsewhere = Self.findings(versions: [.tls10], forwardSecret: false, plainRSA: true)
        elsewhere.cleartext = true
        elsewhere.cleartextHost = "cdn.example.com"
        #expect(!elsewhere.result(ATSConfiguration(minimumTLSVersion: .tls10, requiresForwardSecrecy: false, allowsInsecureHTTPLoads: true)).passed)
        let both = ATSDiagnostics.smallestException(elsewhere, host: "api.example.com")
        #expect(
            both == [
                .init(domain: "api.example.com", configuration: ATSConfiguration(minimumTLSVersion: .tls10, requiresForwardSecrecy: false)),
                .init(domain: "cdn.example.com", configuration: ATSConfiguration(allowsInsecureHTTPLoads: true)),
            ])
        #expect(
            ATSDomainException.plistDescription(both ?? []) == """
                {
                    NSExceptionDomains =     {
                        "api.example.com" =         {
                            NSExceptionMinimumTLSVersion = "TLSv1.0";
                            NSExceptionRequiresForwardSecrecy = false;
                        };
                        "cdn.example.com" =         {
                            NSExceptionAllowsInsecureHTTPLoads = true;
                        };
                    };
                }
                """)
    }
}
