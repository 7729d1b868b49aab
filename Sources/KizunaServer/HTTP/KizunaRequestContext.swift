import Foundation
import Hummingbird
import KizunaCore
import NIOCore

/// The request context of every Kizuna route.
public struct KizunaRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The admin token that authenticated this request, set by ``AdminAuthMiddleware``.
    public var adminToken: AdminToken?
    /// The account session that authenticated this request, set by ``SessionMiddleware``.
    var session: AuthenticatedSession?
    /// The peer's IP address (the proxy's, behind one; see ``SessionMiddleware`` for forwarded addresses).
    public let peerAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Bodies are already bounded by ``BodyLimitMiddleware`` with the configured limit.
    public var maxUploadSize: Int { .max }

    public var requestDecoder: JSONRequestDecoder { JSONRequestDecoder() }
}

/// Decodes JSON bodies and turns decoding failures into `bad_request` errors that name the failing path.
public struct JSONRequestDecoder: RequestDecoder {
    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        return try Self.decode(T.self, from: buffer)
    }

    /// Decodes JSON bytes, turning a failure into `bad_request` naming the path.
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            return try WireFormat.decoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw KizunaError(decoding: error)
        }
    }
}

extension Request {
    /// The JSON body as `T`, or `empty` when the request has no body at all (for bodies that are optional).
    func decodeIfPresent<T: Decodable>(as type: T.Type, context: KizunaRequestContext, default empty: T) async throws -> T {
        let buffer = try await body.collect(upTo: context.maxUploadSize)
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
            } else {
                self.init(.badRequest, "Invalid value at \(at): \(context.debugDescription)", field: at)
            }
        @unknown default:
            self.init(.badRequest, "The body could not be decoded.")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : (String(describing: type).hasPrefix("Dictionary") ? "an object" : "\(type)")
        }
    }
}
