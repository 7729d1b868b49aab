import Crypto
import Foundation
import KizunaCore

/// AWS Signature Version 4 for S3-compatible object storage: the canonical request, the string to sign, the signing
/// key and the `Authorization` header. No I/O; tested against AWS's published vectors.
///
/// Paths are encoded as S3 wants them (each segment once, `/` kept, no dot-segment normalisation), which is also
/// what the generic test suite's vectors expect for paths without `.` or `..` segments.
package struct SigV4Signer: Sendable {
    package var accessKey: String
    package var secretKey: String
    package var region: String
    package var service: String

    /// The payload hash that leaves the body out of the signature.
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of no bytes, the payload hash of a request without a body.
    package static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    package init(accessKey: String, secretKey: String, region: String, service: String = "s3") {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.region = region
        self.service = service
    }

    /// What is signed of a request.
    package struct Request: Sendable {
        package var method: String
        /// The path, not yet percent-encoded.
        package var path: String
        /// The query's names and values, not yet percent-encoded, in any order.
        package var query: [(String, String)]
        /// The headers to sign (`host` and `x-amz-date` among them), in any order and case; a repeated name's values
        /// are joined in order.
        package var headers: [(String, String)]
        /// The body's SHA-256 in lowercase hex, or ``SigV4Signer/unsignedPayload``.
        package var payloadHash: String

        package init(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The canonical request (task 1 of the signing process).
    package func canonicalRequest(_ request: Request) -> String {
        let headers = Self.canonicalHeaders(request.headers)
        return [
            request.method,
            Self.encode(request.path, keepSlash: true),
            Self.canonicalQuery(request.query),
            headers.map { "\($0.name):\($0.value)\n" }.joined(),
            headers.map(\.name).joined(separator: ";"),
            request.payloadHash,
        ].joined(separator: "\n")
    }

    /// The string to sign for `canonicalRequest` at `amzDate` (`yyyyMMdd'T'HHmmss'Z'`).
    package func stringToSign(canonicalRequest: String, amzDate: String) -> String {
        ["AWS4-HMAC-SHA256", amzDate, scope(amzDate), hex(SHA256.hash(data: Array(canonicalRequest.utf8)))].joined(separator: "\n")
    }

    /// The signature of `request` at `amzDate`, in lowercase hex.
    package func signature(_ request: Request, amzDate: String) -> String {
        var key = SymmetricKey(data: Array("AWS4\(secretKey)".utf8))
        for part in [String(amzDate.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        let text = stringToSign(canonicalRequest: canonicalRequest(request), amzDate: amzDate)
        return hex(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: key))
    }

    /// The `Authorization` header's value for `request` at `amzDate`.
    package func authorization(_ request: Request, amzDate: String) -> String {
        let signed = Self.canonicalHeaders(request.headers).map(\.name).joined(separator: ";")
        return
            "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope(amzDate)), SignedHeaders=\(signed), Signature=\(signature(request, amzDate: amzDate))"
    }

    /// `date` as SigV4 writes it: `20150830T123600Z`.
    package static func amzDate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return String(format: "%04d", parts.year ?? 0) + two(parts.month) + two(parts.day) + "T" + two(parts.hour) + two(parts.minute)
            + two(parts.second) + "Z"
    }

    private func scope(_ amzDate: String) -> String { "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request" }

    /// Names lowercased and sorted; values trimmed with inner runs of spaces made one; repeated names joined by `,`.
    private static func canonicalHeaders(_ headers: [(String, String)]) -> [(name: String, value: String)] {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            merged[name.lowercased(), default: []].append(trimmed)
        }
        return merged.keys.sorted().map { ($0, merged[$0]!.joined(separator: ",")) }
    }

    /// Names and values encoded, sorted by name then value (the encoded bytes' order).
    private static func canonicalQuery(_ query: [(String, String)]) -> String {
        let pairs: [(name: String, value: String)] = query.map { (encode($0.0, keepSlash: false), encode($0.1, keepSlash: false)) }
        let sorted = pairs.sorted { (a, b) -> Bool in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// RFC 3986 encoding as SigV4 wants it: unreserved characters kept, every other UTF-8 byte as `%XX`.
    package static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
