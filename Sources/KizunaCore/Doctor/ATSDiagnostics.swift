import Foundation

/// What probing a host found, in the terms App Transport Security decides on: whether a handshake succeeds under
/// each client profile an ATS configuration makes, and what of the certificate iOS refuses whatever the exceptions.
public struct ATSFindings: Sendable, Hashable, Codable {
    /// One handshake: the client offered TLS `minimum` to 1.3 and, when `forwardSecrecy`, only forward-secret suites.
    public struct Handshake: Sendable, Hashable, Codable {
        public var minimum: ATSTLSVersion
        public var forwardSecrecy: Bool
        /// The version agreed; `nil` when the handshake failed.
        public var negotiated: ATSTLSVersion?
        public var cipherSuite: String?
        /// Why it failed, for a person: which version or suite the server wanted.
        public var failure: String?
        /// The TLS alert the server refused with (RFC 8446 §6's name: `protocol_version`, `handshake_failure`).
        public var alert: String?

        public init(
            minimum: ATSTLSVersion, forwardSecrecy: Bool, negotiated: ATSTLSVersion?, cipherSuite: String? = nil, failure: String? = nil,
            alert: String? = nil
        ) {
            self.minimum = minimum
            self.forwardSecrecy = forwardSecrecy
            self.negotiated = negotiated
            self.cipherSuite = cipherSuite
            self.failure = failure
            self.alert = alert
        }

        /// The `_kCFStreamErrorCodeKey` a failed handshake reports: -9836 when the server refused the version
        /// (errSSLPeerProtocolVersion), -9824 when it found no suite (errSSLPeerHandshakeFail), -9801 otherwise
        /// (errSSLNegotiation).
        public var streamCode: Int {
            switch alert {
            case "protocol_version": -9836
            case "handshake_failure", "insufficient_security": -9824
            default: -9801
            }
        }
    }

    /// A certificate property iOS refuses, and how the refusal reaches the app.
    public struct CertificateProblem: Sendable, Hashable, Codable, CustomStringConvertible {
        public enum Kind: String, Sendable, Hashable, Codable {
            /// Self-signed, or no chain to a trusted root.
            case untrusted
            case expired
            case notYetValid
            /// The host is not in the SAN.
            case name
            /// What iOS 13's rules refuse: a weak key, a SHA-1 signature, no serverAuth, too long a life.
            case requirement
        }

        public var kind: Kind
        public var message: String
        public var description: String { message }

        public init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }

        /// The `NSURLErrorDomain` code: -1201 for dates (NSURLErrorServerCertificateHasBadDate), -1202 otherwise
        /// (NSURLErrorServerCertificateUntrusted).
        public var code: Int { kind == .expired || kind == .notYetValid ? -1201 : -1202 }

        /// The `_kCFStreamErrorCodeKey`: errSSLNoRootCert (-9813), errSSLCertExpired (-9814), errSSLCertNotYetValid
        /// (-9815), errSSLHostNameMismatch (-9843); `nil` for the iOS 13 rules, which fail trust evaluation itself.
        public var streamCode: Int? {
            switch kind {
            case .untrusted: -9813
            case .expired: -9814
            case .notYetValid: -9815
            case .name: -9843
            case .requirement: nil
            }
        }
    }

    /// The load reaches an `http://` URL: it is one, or it redirects to one.
    public var cleartext: Bool
    /// The host of that `http://` URL when it is not the host probed (a redirect elsewhere).
    public var cleartextHost: String?
    public var handshakes: [Handshake]
    /// What iOS refuses in every configuration, `NSAllowsArbitraryLoads` included (iOS 13 and later): an untrusted
    /// or expired certificate, a name not in its SAN, an RSA key under 2048 bits, a SHA-1 signature.
    public var certificateProblems: [CertificateProblem]
    /// What may fail on a device but the probe cannot settle (Certificate Transparency delivered outside the
    /// certificate, Apple's root store against Debian's).
    public var certificateNotes: [String]

    public init(
        cleartext: Bool = false, cleartextHost: String? = nil, handshakes: [Handshake] = [], certificateProblems: [CertificateProblem] = [],
        certificateNotes: [String] = []
    ) {
        self.cleartext = cleartext
        self.cleartextHost = cleartextHost
        self.handshakes = handshakes
        self.certificateProblems = certificateProblems
        self.certificateNotes = certificateNotes
    }

    /// The client profiles the configurations need probed: every minimum version, with and without forward secrecy.
    public static let profiles: [(minimum: ATSTLSVersion, forwardSecrecy: Bool)] = ATSTLSVersion.allCases.flatMap { version in
        [(version, true), (version, false)]
    }

    /// How a load ends under `configuration` (its exception keys for the host probed), as `URLSession` would end
    /// it, with the error code when it fails. The TLS handshake comes first; a redirect to `http://` is met after.
    public func result(_ configuration: ATSConfiguration) -> ATSResult {
        if let problem = certificateProblems.first {
            return ATSResult(
                passed: false, code: problem.code, streamCode: problem.streamCode,
                reason: "the certificate: \(problem); no ATS exception changes that")
        }
        if !handshakes.isEmpty {
            let wanted = configuration.effectiveMinimumTLSVersion
            let forwardSecrecy = configuration.effectiveForwardSecrecy
            guard let handshake = handshakes.first(where: { $0.minimum == wanted && $0.forwardSecrecy == forwardSecrecy }) else {
                return ATSResult(passed: false, code: nil, streamCode: nil, reason: "not probed")
            }
            guard handshake.negotiated != nil else {
                let offered = "TLS \(wanted.rawValue.dropFirst(4)) to 1.3\(forwardSecrecy ? " with forward-secret suites only" : "")"
                return ATSResult(
                    passed: false, code: -1200, streamCode: handshake.streamCode,
                    reason: "no handshake offering \(offered): \(handshake.failure ?? "refused")")
            }
        }
        if cleartext {
            let allowed = cleartextHost == nil ? configuration.effectiveInsecureHTTP : configuration.allowsArbitraryLoads
            if !allowed {
                let which = cleartextHost.map { "a redirect to http://\($0)" } ?? "the load is plain http://"
                return ATSResult(
                    passed: false, code: -1022, streamCode: nil,
                    reason: "\(which), which ATS allows only with NSExceptionAllowsInsecureHTTPLoads for that domain")
            }
        }
        return .pass
    }
}

/// How a load ends under one configuration.
public struct ATSResult: Sendable, Hashable, Codable {
    public var passed: Bool
    /// The `NSURLErrorDomain` code an app sees: -1022 (a secure connection is required), -1200 (the secure
    /// connection failed), -1201 or -1202 (the certificate).
    public var code: Int?
    /// The `_kCFStreamErrorCodeKey` beside it: the handshake's (`Handshake.streamCode`) or the certificate's
    /// (`CertificateProblem.streamCode`).
    public var streamCode: Int?
    /// Why, for a person.
    public var reason: String?

    public static let pass = ATSResult(passed: true, code: nil, streamCode: nil, reason: nil)
}

/// `nscurl --ats-diagnostics`' sequence, and the smallest exception that passes.
public enum ATSDiagnostics {
    /// One configuration tried.
    public struct Test: Sendable, Hashable {
        public var name: String
        public var configuration: ATSConfiguration
    }

    /// A titled group of tests, as nscurl prints them.
    public struct Section: Sendable, Hashable {
        public var title: String
        public var tests: [Test]
    }

    /// nscurl's 16 configurations in its order, for `host`.
    public static func sections(host: String) -> [Section] {
        let versions = ATSTLSVersion.allCases.reversed()
        func tls(_ version: ATSTLSVersion, forwardSecrecy: Bool = true, insecure: Bool = false) -> ATSConfiguration {
            ATSConfiguration(minimumTLSVersion: version, requiresForwardSecrecy: forwardSecrecy, allowsInsecureHTTPLoads: insecure)
        }
        return [
            Section(title: "Default ATS Secure Connection", tests: [Test(name: "ATS Default Connection", configuration: .default)]),
            Section(
                title: "Allowing Arbitrary Loads", tests: [Test(name: "Allow All Loads", configuration: ATSConfiguration(allowsArbitraryLoads: true))]
            ),
            Section(
                title: "Configuring TLS exceptions for \(host)", tests: versions.map { Test(name: $0.rawValue, configuration: tls($0)) }),
            Section(
                title: "Configuring PFS exceptions for \(host)",
                tests: [Test(name: "Disabling Perfect Forward Secrecy", configuration: ATSConfiguration(requiresForwardSecrecy: false))]),
            Section(
                title: "Configuring PFS exceptions and allowing insecure HTTP for \(host)",
                tests: [
                    Test(
                        name: "Disabling Perfect Forward Secrecy and Allowing Insecure HTTP",
                        configuration: ATSConfiguration(requiresForwardSecrecy: false, allowsInsecureHTTPLoads: true))
                ]),
            Section(
                title: "Configuring TLS exceptions with PFS disabled for \(host)",
                tests: versions.map { Test(name: "\($0.rawValue) with PFS disabled", configuration: tls($0, forwardSecrecy: false)) }),
            Section(
                title: "Configuring TLS exceptions with PFS disabled and insecure HTTP allowed for \(host)",
                tests: versions.map {
                    Test(
                        name: "\($0.rawValue) with PFS disabled and insecure HTTP allowed",
                        configuration: tls($0, forwardSecrecy: false, insecure: true))
                }),
        ]
    }

    /// The exceptions tried for the smallest that passes, least first: forward secrecy alone needs no App Review
    /// justification; an older TLS version and insecure HTTP do; arbitrary loads last.
    static let candidates: [ATSConfiguration] = {
        let tls: [ATSTLSVersion?] = [nil, .tls11, .tls10]
        var list: [ATSConfiguration] = []
        for insecure in [false, true] {
            for version in tls {
                for forwardSecrecy in [true, false] {
                    list.append(
                        ATSConfiguration(minimumTLSVersion: version, requiresForwardSecrecy: forwardSecrecy, allowsInsecureHTTPLoads: insecure))
                }
            }
        }
        return list + [ATSConfiguration(allowsArbitraryLoads: true)]
    }()

    /// The least exception under which the load passes, per domain: the host probed with its default
    /// configuration when it needs none; `nil` when none passes (the certificate is the problem, and the fix is on
    /// the server).
    public static func smallestException(_ findings: ATSFindings, host: String) -> [ATSDomainException]? {
        var secure = findings
        secure.cleartext = false
        guard let tls = candidates.first(where: { secure.result($0).passed }) else { return nil }
        guard findings.cleartext, !tls.allowsArbitraryLoads else { return [ATSDomainException(domain: host, configuration: tls)] }
        guard let other = findings.cleartextHost, other != host else {
            var both = tls
            both.allowsInsecureHTTPLoads = true
            return [ATSDomainException(domain: host, configuration: both)]
        }
        let insecure = ATSDomainException(domain: other, configuration: ATSConfiguration(allowsInsecureHTTPLoads: true))
        return tls.isDefault ? [insecure] : [ATSDomainException(domain: host, configuration: tls), insecure]
    }
}
