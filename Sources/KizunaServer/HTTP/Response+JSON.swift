import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A JSON response with ISO 8601 dates.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) throws -> Response {
        let data = try JSONEncoder.kizuna.encode(value)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .contentLength: String(data.count)]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An empty response.
    static func empty(_ status: HTTPResponse.Status = .noContent) -> Response {
        Response(status: status, headers: [.contentLength: "0"])
    }
}

extension JSONEncoder {
    /// The encoder for every Kizuna response.
    static var kizuna: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
