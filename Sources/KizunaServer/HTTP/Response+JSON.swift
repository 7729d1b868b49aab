import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore

extension Response {
    /// A JSON response in Kizuna's wire format.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        bytes(Array(try encoder.encode(value)), contentType: "application/json; charset=utf-8", status: status, headers: headers)
    }

    /// A JSON response written directly from a ``JSONValue`` (keys sorted): the GraphQL answers, whose pages of
    /// records `JSONEncoder`'s `Codable` walk would spend most of a small request's time on.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        bytes(value.jsonBytes, contentType: "application/json; charset=utf-8", status: status, headers: headers)
    }

    /// A response carrying `bytes` as they are.
    static func bytes(_ bytes: [UInt8], contentType: String, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .contentLength: String(bytes.count)]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// An empty response.
    static func empty(_ status: HTTPResponse.Status = .noContent) -> Response {
        Response(status: status, headers: [.contentLength: "0"])
    }

    private static let encoder = WireFormat.encoder()
}
