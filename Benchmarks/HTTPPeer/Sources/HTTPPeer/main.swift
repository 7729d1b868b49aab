import Foundation
import Hummingbird

// http-peer PORT DIRECTORY: serves each file under DIRECTORY at its relative path, to GET and POST alike (a POST's
// body is read and dropped, as a route that decodes it would read it), with the content type and bytes fixed at start.
// Anything else is 404. With --raw, the same answers from SwiftNIO alone (RawPeer.swift).

/// Every regular file under `root`, by its path relative to it (`/v1/apps/bench-app/config:fetch`).
func files(under root: URL) throws -> [String: ByteBuffer] {
    var files: [String: ByteBuffer] = [:]
    let base = root.standardizedFileURL.path
    guard let walker = FileManager.default.enumerator(atPath: base) else { return files }
    while let relative = walker.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let path = base + "/" + relative
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
        files["/" + relative] = ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
    }
    return files
}

struct Answer: ResponseGenerator {
    let bytes: ByteBuffer
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .contentLength: "\(bytes.readableBytes)"],
            body: .init(byteBuffer: bytes))
    }
}

func serve(port: Int, files: [String: ByteBuffer]) async throws {
    let router = Router()
    for (path, bytes) in files {
        router.get(RouterPath(path)) { _, _ in Answer(bytes: bytes) }
        router.post(RouterPath(path)) { request, _ in
            _ = try await request.body.collect(upTo: 1 << 20)
            return Answer(bytes: bytes)
        }
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
    try await app.runService()
}

let arguments = CommandLine.arguments
guard (3...4).contains(arguments.count), let port = Int(arguments[1]), arguments.count == 3 || arguments[3] == "--raw" else {
    FileHandle.standardError.write(Data("usage: http-peer PORT DIRECTORY [--raw]\n".utf8))
    exit(64)
}
let served = try files(under: URL(fileURLWithPath: arguments[2], isDirectory: true))
if arguments.count == 4 {
    try await serveRaw(port: port, files: served)
} else {
    try await serve(port: port, files: served)
}
