import Foundation
import Subprocess
import Testing

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Certificates made with openssl the way servers get them wrong, for `kizuna doctor`'s tests: a private CA, and a
/// leaf for ``host`` issued by it (or by itself) with the key, signature, names and dates a case asks for.
struct TLSFixtures {
    static let host = "api.kizuna.test"
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// Whether tests that need openssl and nginx run: when both are installed, and always under CI, so a missing one
    /// fails there instead of skipping.
    static let shouldRun = (openssl != nil && Nginx.path != nil) || ProcessInfo.processInfo.environment["CI"] == "true"

    /// How the leaf is made.
    struct Leaf: Sendable {
        enum Key: Sendable { case ec, rsa(Int) }
        var key: Key = .ec
        var sha1 = false
        var names = [TLSFixtures.host]
        var selfSigned = false
        /// Valid in 2020 only, instead of from now for 300 days.
        var expired = false
    }

    let directory: URL
    var caFile: URL { directory.appendingPathComponent("ca.pem") }
    var certificateFile: URL { directory.appendingPathComponent("leaf.pem") }
    var keyFile: URL { directory.appendingPathComponent("leaf.key") }

    /// Makes the CA and the leaf in a new directory under the temporary one.
    static func make(_ leaf: Leaf) async throws -> TLSFixtures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fixtures = TLSFixtures(directory: directory)
        try await fixtures.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days",
            "3650", "-subj", "/CN=Kizuna Doctor Test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ])
        let key: [String] =
            switch leaf.key {
            case .ec: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
            case .rsa(let bits): ["-newkey", "rsa:\(bits)"]
            }
        let digest = leaf.sha1 ? "-sha1" : "-sha256"
        let extensions = [
            "subjectAltName=\(leaf.names.map { "DNS:\($0)" }.joined(separator: ","))", "extendedKeyUsage=serverAuth", "basicConstraints=CA:FALSE",
        ]
        try extensions.joined(separator: "\n").write(to: directory.appendingPathComponent("leaf.ext"), atomically: true, encoding: .utf8)
        if leaf.selfSigned {
            try await fixtures.run(
                ["req", "-x509"] + key + ["-nodes", "-keyout", "leaf.key", "-out", "leaf.pem", "-days", "300", digest, "-subj", "/CN=\(host)"]
                    + extensions.flatMap { ["-addext", $0] })
            return fixtures
        }
        try await fixtures.run(["req"] + key + ["-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=\(host)"])
        if leaf.expired {
            // `openssl x509` (3.0) cannot set dates in the past; `openssl ca` can.
            try "".write(to: directory.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
            try "01\n".write(to: directory.appendingPathComponent("serial"), atomically: true, encoding: .utf8)
            try """
            [ca]
            default_ca = test
            [test]
            database = index.txt
            new_certs_dir = .
            serial = serial
            default_md = sha256
            policy = any
            [any]
            commonName = supplied
            """.write(to: directory.appendingPathComponent("ca.cnf"), atomically: true, encoding: .utf8)
            try await fixtures.run([
                "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "leaf.csr", "-out", "leaf.pem", "-notext",
                "-startdate", "20200101000000Z", "-enddate", "20201201000000Z", "-extfile", "leaf.ext",
            ])
        } else {
            try await fixtures.run([
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "300", digest,
                "-extfile", "leaf.ext",
            ])
        }
        return fixtures
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    private func run(_ arguments: [String]) async throws {
        let openssl = try #require(Self.openssl, "openssl is not installed (apt-get install openssl)")
        let result = try await Subprocess.run(
            .path(FilePath(openssl)), arguments: Arguments(arguments), workingDirectory: FilePath(directory.path), output: .discarded,
            error: .string(limit: 65_536))
        try #require(result.terminationStatus.isSuccess, "openssl \(arguments.joined(separator: " ")): \(result.standardError)")
    }
}
