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

    /// A decoder for request and response bodies. Dates are ISO 8601 with or without fractional seconds: the data
    /// API's `DateTime` carries milliseconds (`2026-11-23T09:00:00.250Z`), the rest of the API whole seconds.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an ISO 8601 date and time.")
            }
            return date
        }
        return decoder
    }

    /// An ISO 8601 date and time, with or without fractional seconds.
    package static func parseDate(_ text: String) -> Date? {
        (try? wholeSeconds.parse(text)) ?? (try? dateTimeStyle.parse(text))
    }

    /// A date as the data API writes a `DateTime`: ISO 8601 in UTC with milliseconds (`2026-11-23T09:00:00.250Z`),
    /// on the server for every DateTime of every record, in the SDK for every one it sends.
    package static func dateTimeText(_ date: Date) -> String {
        date.formatted(dateTimeStyle)
    }

    // Format styles are values made once: these run for every date of every body.
    private static let dateTimeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let wholeSeconds = Date.ISO8601FormatStyle()
}
