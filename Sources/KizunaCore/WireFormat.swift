import Foundation

/// How Kizuna's JSON looks on the wire, on both sides: dates in ISO 8601, slashes unescaped.
public enum WireFormat {
    /// An encoder for request and response bodies.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }

    /// An encoder whose output depends only on the value (sorted keys): for stored documents, ETags over bytes,
    /// and event data.
    public static func canonicalEncoder() -> JSONEncoder {
        let encoder = encoder()
        encoder.outputFormatting.insert(.sortedKeys)
        return encoder
    }

    /// A decoder for request and response bodies.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
