import Crypto
import Foundation
import KizunaCore

/// Where the next page of a list starts: the `nextToken` a list query returns, opaque to clients and signed.
///
/// A keyset cursor holds the sort values of the last row returned (then its id), so the next page starts right after
/// it however many rows were inserted or deleted meanwhile: no row is repeated or skipped, as an offset would. The
/// token is `base64url(payload) "." base64url(HMAC-SHA256(payload))`: a client cannot forge a position, read another
/// query's rows through one, or page a query with a token another query returned, because ``scope`` (a digest of the
/// filter and key arguments) and the order are checked on the way back in.
package struct PageCursor: Sendable, Equatable {
    /// The model listed.
    package var model: String
    /// The index whose order the list follows, or `""` for the default order (`createdAt`, then `id`).
    package var order: String
    /// Whether the list runs from the highest sort values down.
    package var descending: Bool
    /// A digest of the arguments that choose the rows (``scope(of:)``).
    package var scope: String
    /// The last returned row's sort values in order, then its id. Integers (Int, and DateTime as epoch milliseconds)
    /// are decimal strings, since a JSON number would round them beyond 2^53; Float values are numbers, Booleans
    /// bools, text strings.
    package var after: [JSONValue]

    /// A token longer than this was not issued here; it is refused before any work.
    static let maximumLength = 4096

    package init(model: String, order: String, descending: Bool, scope: String, after: [JSONValue]) {
        self.model = model
        self.order = order
        self.descending = descending
        self.scope = scope
        self.after = after
    }

    /// A digest of the arguments that choose a query's rows, such as `["filter": …, "roomId": …, "createdAt": …]`:
    /// the same arguments, however their keys are ordered, give the same scope.
    package static func scope(of arguments: JSONValue) -> String {
        String(sha256Hex(StoredValue.jsonText(arguments)).prefix(32))
    }

    /// The token: the payload and its HMAC under `key`, each base64url.
    package func encoded(key: SymmetricKey) -> String {
        // Written with JSONValue's writer (keys sorted, as JSONEncoder wrote them): `JSONEncoder` was a tenth of a
        // list request. A non-finite Float sort value (PostgreSQL can hold NaN) is written as null; its token then
        // decodes as a bad cursor instead of stopping the server.
        typealias Key = Payload.CodingKeys
        let payload: JSONValue = .object([
            Key.version.rawValue: .number(Double(Payload.currentVersion)), Key.model.rawValue: .string(model),
            Key.order.rawValue: .string(order), Key.descending.rawValue: .bool(descending), Key.scope.rawValue: .string(scope),
            Key.after.rawValue: .array(after),
        ])
        let bytes = Data(payload.jsonBytes)
        let mac = HMAC<SHA256>.authenticationCode(for: bytes, using: key)
        return base64URL(bytes) + "." + base64URL(Data(mac))
    }

    /// Reads a token back, checking its HMAC under `key` and that it was issued for the query asking.
    /// - Parameters:
    ///   - token: The `nextToken` argument.
    ///   - key: The key tokens are signed with.
    ///   - expecting: The model, order (index name or `""`), direction and scope of the query asking.
    /// - Throws: `bad_cursor` for `nextToken` when the token is malformed, cut short, altered, signed with another
    ///   key, or issued for another query.
    package static func decode(
        _ token: String, key: SymmetricKey, expecting: (model: String, order: String, descending: Bool, scope: String)
    ) throws(KizunaError) -> PageCursor {
        let forged = KizunaError(
            .badCursor, "The nextToken was not issued by this server, or it was changed or cut short; list again without it.",
            field: "nextToken")
        guard token.utf8.count <= maximumLength else { throw forged }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = base64URLDecoded(parts[0]), let mac = base64URLDecoded(parts[1]) else { throw forged }
        let expected = Data(HMAC<SHA256>.authenticationCode(for: payload, using: key))
        // In constant time, so the time a refusal takes says nothing about how much of a guessed MAC was right.
        guard constantTimeEquals(expected, mac) else { throw forged }
        guard let decoded = try? JSONDecoder().decode(Payload.self, from: payload), decoded.version == Payload.currentVersion else { throw forged }
        let cursor = PageCursor(
            model: decoded.model, order: decoded.order, descending: decoded.descending, scope: decoded.scope, after: decoded.after)
        guard cursor.model == expecting.model, cursor.order == expecting.order, cursor.descending == expecting.descending,
            cursor.scope == expecting.scope
        else {
            throw KizunaError(
                .badCursor,
                "The nextToken belongs to another query (another model, index, sort direction, filter or key); "
                    + "pass the arguments of the first page, or list again without it.",
                field: "nextToken")
        }
        return cursor
    }

    /// The signed payload as it is read back, with short keys: the token travels in every page request.
    private struct Payload: Decodable {
        static let currentVersion = 1

        var version: Int
        var model: String
        var order: String
        var descending: Bool
        var scope: String
        var after: [JSONValue]

        enum CodingKeys: String, CodingKey {
            case version = "v", model = "m", order = "o", descending = "d", scope = "s", after = "a"
        }
    }
}
