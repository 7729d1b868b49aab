import Foundation
import Hummingbird

// http-peer PORT DIRECTORY: serves each file under DIRECTORY at its relative path, to GET and POST alike (a POST's
// body is read and dropped, as a route that decodes it would read it), with the content type and bytes fixed at start.
// Anything else is 404.
let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: http-peer PORT DIRECTORY\n".utf8))
    exit(64)
}
let root = URL(fileURLWithPath: arguments[2], isDirectory: true).standardizedFileURL
var files: [String: ByteBuffer] = [:]
if let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) {
    for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
        let path = String(url.standardizedFileURL.path.dropFirst(root.path.count))
        files[path] = ByteBuffer(bytes: try Data(contentsOf: url))
    }
}
let served = files

struct Answer: ResponseGenerator {
    let bytes: ByteBuffer
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .contentLength: "\(bytes.readableBytes)"],
            body: .init(byteBuffer: bytes))
    }
}

let router = Router()
for (path, bytes) in served {
    router.get(RouterPath(path)) { _, _ in Answer(bytes: bytes) }
    router.post(RouterPath(path)) { request, _ in
        _ = try await request.body.collect(upTo: 1 << 20)
        return Answer(bytes: bytes)
    }
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
