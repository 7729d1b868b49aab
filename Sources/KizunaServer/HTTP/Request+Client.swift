import Foundation
import HTTPTypes
import Hummingbird

extension Request {
    /// The reader's languages from `Accept-Language`, most preferred first (`q=0` dropped), for localized messages.
    var languages: [String] {
        guard let header = headers[.acceptLanguage] else { return [] }
        let ranked = header.split(separator: ",").enumerated().compactMap { index, item -> (tag: String, q: Double, index: Int)? in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty, tag != "*" else { return nil }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0 ? (tag, q, index) : nil
        }
        return ranked.sorted { $0.q != $1.q ? $0.q > $1.q : $0.index < $1.index }.map(\.tag)
    }

    /// The client's IP address: the peer's, or behind a trusted proxy the last `X-Forwarded-For` entry.
    func clientAddress(_ context: KizunaRequestContext, trustForwardedFor: Bool) -> String? {
        if trustForwardedFor, let forwarded = headers[values: .xForwardedFor].last?.split(separator: ",").last {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        return context.peerAddress
    }

    /// The bearer token of `Authorization: Bearer …`, if any.
    var bearerToken: String? {
        headers[.authorization].flatMap(Self.bearerToken(in:))
    }

    /// The token of an `Authorization` value `Bearer …`, wherever the value came from (a header, or a
    /// graphql-transport-ws `connection_init` payload); `nil` for any other scheme.
    static func bearerToken(in authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }
}
