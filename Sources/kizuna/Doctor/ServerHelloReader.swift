import NIOCore

/// Reads the plaintext start of a TLS server's flight (RFC 8446 §5.1, §4.1.3; RFC 5246 §7.4.1.3): the cipher suite its
/// ServerHello chose, or the alert it refused with. Everything after the first encrypted record is left alone.
struct ServerHelloReader {
    var cipherSuite: UInt16?
    /// The alert's name, as RFC 8446 §6 spells it (`handshake_failure`, `protocol_version`).
    var alert: String?

    init(_ wire: ByteBuffer) {
        var wire = wire
        var handshake = ByteBuffer()
        while let type = wire.readInteger(as: UInt8.self), wire.readInteger(as: UInt16.self) != nil,
            let length = wire.readInteger(as: UInt16.self), var fragment = wire.readSlice(length: Int(length))
        {
            switch type {
            case 21:
                if fragment.readInteger(as: UInt8.self) != nil, let description = fragment.readInteger(as: UInt8.self) {
                    alert = Self.alerts[description] ?? "\(description)"
                }
            case 22:
                handshake.writeBuffer(&fragment)
                if let suite = Self.serverHelloSuite(handshake) { cipherSuite = suite }
            default:
                return
            }
            if cipherSuite != nil || alert != nil { return }
        }
    }

    /// Whether `wire` holds a record past the handshake's plaintext (application data, or a ChangeCipherSpec).
    static func reachedEncryption(_ wire: ByteBuffer) -> Bool {
        var wire = wire
        while let type = wire.readInteger(as: UInt8.self), wire.readInteger(as: UInt16.self) != nil,
            let length = wire.readInteger(as: UInt16.self), wire.readSlice(length: Int(length)) != nil
        {
            if type == 20 || type == 23 { return true }
        }
        return false
    }

    private static func serverHelloSuite(_ handshake: ByteBuffer) -> UInt16? {
        var message = handshake
        guard message.readInteger(as: UInt8.self) == 2, let high = message.readInteger(as: UInt8.self),
            let low = message.readInteger(as: UInt16.self), var body = message.readSlice(length: Int(high) << 16 | Int(low)),
            body.readSlice(length: 2 + 32) != nil, let sessionLength = body.readInteger(as: UInt8.self),
            body.readSlice(length: Int(sessionLength)) != nil
        else { return nil }
        return body.readInteger(as: UInt16.self)
    }

    /// The alerts a refused handshake ends with.
    static let alerts: [UInt8: String] = [
        10: "unexpected_message", 40: "handshake_failure", 42: "bad_certificate", 47: "illegal_parameter", 50: "decode_error",
        70: "protocol_version", 71: "insufficient_security", 80: "internal_error", 86: "inappropriate_fallback",
        112: "unrecognized_name", 120: "no_application_protocol",
    ]

    /// IANA's names for the suites a probe can meet: ATS's, TLS 1.3's, and the rest of what BoringSSL offers.
    static let suiteNames: [UInt16: String] = [
        0xC02C: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 0xC02B: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        0xC024: "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", 0xC00A: "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        0xC023: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 0xC009: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        0xC030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xC02F: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        0xC028: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", 0xC027: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        0xC014: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 0xC013: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        0x009D: "TLS_RSA_WITH_AES_256_GCM_SHA384", 0x009C: "TLS_RSA_WITH_AES_128_GCM_SHA256", 0x003D: "TLS_RSA_WITH_AES_256_CBC_SHA256",
        0x003C: "TLS_RSA_WITH_AES_128_CBC_SHA256", 0x0035: "TLS_RSA_WITH_AES_256_CBC_SHA", 0x002F: "TLS_RSA_WITH_AES_128_CBC_SHA",
        0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384", 0x1303: "TLS_CHACHA20_POLY1305_SHA256",
        0xCCA8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xCCA9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ]

    static func name(_ suite: UInt16) -> String {
        suiteNames[suite] ?? "0x" + String(suite, radix: 16, uppercase: true).leftPadded(to: 4)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
