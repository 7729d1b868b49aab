import Foundation
import Hummingbird
import KizunaCore
import NIOCore

/// The request context of every Kizuna route.
package struct KizunaRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The admin token that authenticated this request, set by ``AdminAuthMiddleware``.
    package var adminToken: AdminToken?
    /// The account session that authenticated this request, set by ``SessionMiddleware``.
    var session: AuthenticatedSession?
    /// The peer's IP address (the proxy's, behind one; see ``SessionMiddleware`` for forwarded addresses), formatted
    /// when asked for: most routes never ask.
    package var peerAddress: String? { channel.remoteAddress?.ipAddress }
    private let channel: any Channel
    /// The body ``EdgeMiddleware`` collected under the body limit, read by ``Hummingbird/Request/body(_:)`` without a
    /// second pass through the request's body sequence (a dozen task switches).
    var collectedBody: ByteBuffer?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Bodies are already bounded by ``BodyLimit`` with the configured limit.
    package var maxUploadSize: Int { .max }

    package var requestDecoder: JSONRequestDecoder { JSONRequestDecoder() }
}

/// Decodes JSON bodies and turns decoding failures into `bad_request` errors that name the failing path.
package struct JSONRequestDecoder: RequestDecoder {
    package func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer =
            if let context = context as? KizunaRequestContext { try await request.body(context) } else {
                try await request.body.collect(upTo: context.maxUploadSize)
            }
        return try Self.decode(T.self, from: buffer)
    }

    /// Decodes JSON bytes, turning a failure into `bad_request` naming the path.
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        let data = Data(buffer.readableBytesView)
        do {
            return try WireFormat.decoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            // Foundation reports a number that does not fit its field (1.5 or a 23-digit integer for a whole number)
            // as invalid JSON with no path; when the JSON is valid, find the numbers that can be the culprit.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                let value = try? JSONValue(parsing: data)
            {
                let suspects = Self.unrepresentableNumbers(in: value)
                if let first = suspects.first {
                    let at = suspects.count == 1 ? first.path : suspects.map(\.path).joined(separator: " or ")
                    throw KizunaError(
                        .badRequest,
                        "Wrong number at \(at): expected a whole number from -9223372036854775808 to 9223372036854775807, found \(first.text).",
                        field: first.path)
                }
            }
            throw KizunaError(decoding: error)
        }
    }

    /// The numbers in `value` that no whole-number field accepts: fractions, and integers past 64 bits.
    private static func unrepresentableNumbers(in value: JSONValue, path: String = "$") -> [(path: String, text: String)] {
        switch value {
        case .number(let number):
            guard number.rounded() != number || abs(number) >= 9.223372036854775807e18 else { return [] }
            return [(path, number.rounded() == number ? "an integer past 64 bits" : "\(number)")]
        case .array(let items):
            return items.enumerated().flatMap { unrepresentableNumbers(in: $1, path: "\(path)[\($0)]") }
        case .object(let members):
            return members.keys.sorted().flatMap { unrepresentableNumbers(in: members[$0]!, path: "\(path).\($0)") }
        default:
            return []
        }
    }
}

extension Request {
    /// The whole body: as ``EdgeMiddleware`` collected it, or read now up to the context's limit.
    nonisolated(nonsending) func body(_ context: KizunaRequestContext) async throws -> ByteBuffer {
        if let collected = context.collectedBody { return collected }
        return try await body.collect(upTo: context.maxUploadSize)
    }

    /// The body as an HTML form (`application/x-www-form-urlencoded`) decoded as `T`: what the account pages and the
    /// console post. - Throws: `bad_request` when it is not one or lacks a field `T` needs.
    func form<T: Decodable>(_ type: T.Type, context: KizunaRequestContext) async throws -> T {
        let buffer = try await body(context)
        do {
            return try URLEncodedFormDecoder().decode(T.self, from: String(buffer: buffer))
        } catch {
            throw KizunaError(.badRequest, "The form is missing a field or is not URL-encoded.")
        }
    }

    /// The JSON body as `T`, or `empty` when the request has no body at all (for bodies that are optional).
    func decodeIfPresent<T: Decodable>(as type: T.Type, context: KizunaRequestContext, default empty: T) async throws -> T {
        let buffer = try await body(context)
        return buffer.readableBytes == 0 ? empty : try JSONRequestDecoder.decode(T.self, from: buffer)
    }
}

extension KizunaError {
    /// A `bad_request` error naming where in the JSON decoding failed and why.
    init(decoding error: DecodingError) {
        func path(_ codingPath: [any CodingKey], appending key: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (key.map { [$0] } ?? [])
            guard !keys.isEmpty else { return "$" }
            return keys.reduce("$") { partial, key in
                key.intValue.map { "\(partial)[\($0)]" } ?? "\(partial).\(key.stringValue)"
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context.codingPath, appending: key)
            self.init(.badRequest, "Missing required field \(at).", field: at)
        case .typeMismatch(let type, let context):
            let at = path(context.codingPath)
            self.init(.badRequest, "Wrong type at \(at): expected \(Self.jsonTypeName(type)).", field: at)
        case .valueNotFound(let type, let context):
            let at = path(context.codingPath)
            self.init(.badRequest, "Missing value at \(at): expected \(Self.jsonTypeName(type)), found null.", field: at)
        case .dataCorrupted(let context):
            let at = path(context.codingPath)
            if context.codingPath.isEmpty {
                self.init(.badRequest, "The body is not valid JSON.", field: at)
            } else if context.debugDescription.hasPrefix("Cannot initialize "), let value = context.debugDescription.range(of: " value ") {
                // Foundation's words for an unknown enum case name the Swift type; say it the API's way.
                let given = context.debugDescription[value.upperBound...]
                self.init(.badRequest, "Invalid value at \(at): '\(given)' is not one of the allowed values.", field: at)
            } else {
                self.init(.badRequest, "Invalid value at \(at): \(context.debugDescription)", field: at)
            }
        @unknown default:
            self.init(.badRequest, "The body could not be decoded.")
        }
    }

    /// The JSON name of what was expected; never a Swift type name.
    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type: "a whole number"
        case is Double.Type, is Float.Type: "a number"
        default:
            switch String(describing: type) {
            case let name where name.hasPrefix("Array"): "an array"
            case let name where name.hasPrefix("Dictionary"): "an object"
            default: "a value of the type the API description gives"
            }
        }
    }
}
