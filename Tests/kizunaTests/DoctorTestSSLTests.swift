import ArgumentParser
import Foundation
import KizunaCore
import Subprocess
import Testing

@testable import kizuna

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// The doctor's handshakes against testssl.sh's scan of the same server: from the protocols and suites testssl finds
/// the server accepting, each ATS client profile's outcome is predicted (the newest version at or above its minimum
/// with a suite ATS offers) and must be what the doctor's real handshake got.
@Suite("kizuna doctor agrees with testssl.sh")
struct DoctorTestSSLTests {
    static let testssl = ["/usr/bin/testssl", "/usr/bin/testssl.sh", "/usr/local/bin/testssl.sh"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let shouldRun = (testssl != nil && TLSFixtures.shouldRun) || ProcessInfo.processInfo.environment["CI"] == "true"

    /// ATS's TLS 1.0–1.2 suites (Apple's list, the two BoringSSL lacks included), forward-secret first.
    static let forwardSecret: Set<UInt16> = [0xC02C, 0xC02B, 0xC024, 0xC00A, 0xC023, 0xC009, 0xC030, 0xC02F, 0xC028, 0xC027, 0xC013]
    static let plainRSA: Set<UInt16> = [0x009D, 0x009C, 0x003D, 0x003C, 0x0035, 0x002F]

    /// What testssl found: the versions offered and each one's suites.
    struct Scan {
        var suites: [ATSTLSVersion: Set<UInt16>] = [:]

        init(json: Data) throws {
            let findings = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
            let prefixes: [String: ATSTLSVersion] = ["tls1": .tls10, "tls1_1": .tls11, "tls1_2": .tls12, "tls1_3": .tls13]
            for finding in findings {
                guard let id = finding["id"] as? String else { continue }
                // cipher-tls1_2_xc02c
                if id.hasPrefix("cipher-"), let split = id.dropFirst("cipher-".count).split(separator: "_x").first,
                    let version = prefixes[String(split)], let code = UInt16(id.split(separator: "_x").last ?? "", radix: 16)
                {
                    suites[version, default: []].insert(code)
                }
            }
        }

        /// The version a client offering `minimum`…1.3 and ATS's suites gets, as testssl's findings predict it.
        func predicted(minimum: ATSTLSVersion, forwardSecrecy: Bool) -> ATSTLSVersion? {
            let allowed = DoctorTestSSLTests.forwardSecret.union(forwardSecrecy ? [] : DoctorTestSSLTests.plainRSA)
            return suites.filter { version, codes in
                version >= minimum && (version == .tls13 ? !codes.isEmpty : !codes.isDisjoint(with: allowed))
            }.keys.max()
        }
    }

    @Test(
        .enabled(if: shouldRun, "testssl.sh, openssl or nginx is not installed (apt-get install testssl.sh nginx); .ci/run installs them"),
        arguments: DoctorATSTests.cases.filter { $0.problem == nil && $0.tls != nil && $0.locations.isEmpty })
    func eachHandshakeIsWhatTestsslPredicts(_ sample: DoctorATSTests.Case) async throws {
        let testssl = try #require(Self.testssl, "testssl.sh is not installed (apt-get install testssl.sh)")
        let fixtures = try await TLSFixtures.make(sample.leaf)
        defer { fixtures.remove() }
        let tls = sample.tls.map { "ssl_certificate \(fixtures.certificateFile.path); ssl_certificate_key \(fixtures.keyFile.path); \($0)" }
        let host = TLSFixtures.host
        let (report, scan) = try await Nginx.serve(fixtures.directory, tls: tls) { base in
            let port = try #require(base.port)
            let command = try #require(
                try Kizuna.parseAsRoot([
                    "doctor", "https://\(host):\(port)/", "--resolve", "\(host):\(port):127.0.0.1", "--ca-file", fixtures.caFile.path,
                ])
                    as? ATSDoctor)
            let report = try await command.diagnose()
            let json = fixtures.directory.appendingPathComponent("testssl.json")
            let result = try await Subprocess.run(
                .path(FilePath(testssl)),
                arguments: [
                    "--quiet", "--color", "0", "--warnings", "off", "--ip", "127.0.0.1", "-p", "-E", "--jsonfile", json.path,
                    "https://\(host):\(port)",
                ], output: .discarded, error: .string(limit: 65_536))
            try #require(result.terminationStatus.isSuccess, "testssl: \(result.standardError)")
            return (report, try Scan(json: try Data(contentsOf: json)))
        }
        #expect(!scan.suites.isEmpty, "testssl found no protocol")
        for handshake in report.handshakes {
            let predicted = scan.predicted(minimum: handshake.minimum, forwardSecrecy: handshake.forwardSecrecy)
            #expect(
                handshake.negotiated == predicted,
                "offering \(handshake.minimum.rawValue)+, forward secrecy \(handshake.forwardSecrecy): testssl found \(scan.suites)")
            if let negotiated = handshake.negotiated, let suite = handshake.cipherSuite {
                let names = scan.suites[negotiated, default: []].map(ServerHelloReader.name)
                #expect(names.contains(suite), "\(suite) is not among the \(negotiated.rawValue) suites testssl found: \(names)")
            }
        }
    }
}
