import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import NIOCore
import Testing

@testable import KizunaServer

/// The release registry over HTTP, on SQLite and PostgreSQL: unique (version, build) pairs, lookups, and artifacts
/// streamed in and out past the request body limit with their checksums and byte ranges.
@Suite("Release registry")
struct ReleasesTests {
    static let base = "/v1/admin/apps/my-app/releases"

    static func create(_ server: TestServer, _ version: String, _ build: String, channel: String = "appstore") async throws -> TestResponse {
        try await server.send(
            .post, base, json: #"{"version":"\#(version)","build":"\#(build)","channel":"\#(channel)","notes":"Fixes","commit":"abc123"}"#)
    }

    @Test(arguments: TestBackend.available)
    func aVersionAndBuildPairIsRecordedOnce(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let first = try await Self.create(server, "3.10.0", "100")
            #expect(first.status == .created)
            let record = try first.decode(ReleaseRecord.self)
            #expect(record.tag == "v3.10.0-100" && record.channel == .appstore && record.commit == "abc123" && !record.blocked)

            // The store refuses a repeated pair, and `3.10` is `3.10.0`: so does the registry, first.
            let repeated = try await Self.create(server, "3.10", "100", channel: "testflight")
            #expect(repeated.status == .conflict && repeated.error?.field == "build")
            #expect(try await Self.create(server, "3.10.0", "101").status == .created)
            let bad = try await server.send(.post, Self.base, json: #"{"version":"v3","build":"x.1","channel":"appstore"}"#)
            #expect(Set(bad.error?.details.compactMap(\.field) ?? []) == ["$.version", "$.build"])

            let list = try await server.send(.get, Self.base).decode(ReleaseList.self).releases
            #expect(list.map(\.build) == ["101", "100"], "newest first")
            #expect(try await server.send(.get, "\(Self.base)/\(record.id)").decode(ReleaseRecord.self).build == "100")
            #expect(try await server.send(.get, "\(Self.base)/3.10.0").decode(ReleaseRecord.self).build == "101", "a version alone: its newest build")
            #expect(try await server.send(.get, "\(Self.base)/3.10(100)").decode(ReleaseRecord.self).id == record.id)
            #expect(try await server.send(.delete, "\(Self.base)/\(record.id)").status == .noContent)
            #expect(try await server.send(.get, "\(Self.base)/\(record.id)").status == .notFound)
            #expect(try await server.send(.get, "/v1/admin/apps/ghost/releases").status == .notFound)
        }
    }

    @Test(arguments: TestBackend.available)
    func artifactsStreamInAndOutWithChecksumsAndRanges(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let release = try await Self.create(server, "1.0", "1").decode(ReleaseRecord.self)
            // Three times the request body limit (1 MiB): artifacts stream past it.
            let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
            let path = "\(Self.base)/\(release.id)/artifacts/App.ipa"
            let put = try await Self.put(server, path, bytes)
            #expect(put.status == .created)
            let artifact = try put.decode(ReleaseArtifact.self)
            #expect(artifact.size == Int64(bytes.count) && artifact.sha256 == hex(SHA256.hash(data: bytes)))
            #expect(artifact.md5 == hex(Insecure.MD5.hash(data: bytes)) && artifact.contentType == "application/octet-stream")

            let whole = try await server.send(.get, path)
            #expect(whole.status == .ok && Array(whole.body.readableBytesView) == bytes)
            #expect(whole.headers[.eTag] == "\"\(artifact.sha256)\"" && whole.headers[.acceptRanges] == "bytes")
            let middle = try await server.send(.get, path, headers: [.range: "bytes=10-19"])
            #expect(middle.status == .partialContent && Array(middle.body.readableBytesView) == Array(bytes[10...19]))
            #expect(middle.headers[.contentRange] == "bytes 10-19/\(bytes.count)")
            let tail = try await server.send(.get, path, headers: [.range: "bytes=-5"])
            #expect(Array(tail.body.readableBytesView) == Array(bytes.suffix(5)))
            let beyond = try await server.send(.get, path, headers: [.range: "bytes=\(bytes.count)-"])
            #expect(beyond.status == .rangeNotSatisfiable && beyond.headers[.contentRange] == "bytes */\(bytes.count)")

            // Attached again under the same name: replaced. The release lists its artifacts.
            #expect(try await Self.put(server, path, Array("small".utf8)).status == .created)
            let shown = try await server.send(.get, "\(Self.base)/\(release.id)").decode(ReleaseRecord.self)
            #expect(shown.artifacts.map(\.name) == ["App.ipa"] && shown.artifacts.first?.size == 5)

            #expect(try await Self.put(server, "\(Self.base)/\(release.id)/artifacts/.hidden", [1]).status == .badRequest)
            #expect(try await Self.put(server, "\(Self.base)/nope/artifacts/App.ipa", [1]).status == .notFound)
            #expect(try await server.send(.get, "\(Self.base)/\(release.id)/artifacts/missing.zip").status == .notFound)
        }
    }

    static func put(_ server: TestServer, _ path: String, _ bytes: [UInt8]) async throws -> TestResponse {
        try await server.client.execute(
            uri: path, method: .put, headers: [.authorization: "Bearer \(server.adminToken)", .contentType: "application/octet-stream"],
            body: ByteBuffer(bytes: bytes)
        ) { $0 }
    }
}

/// The directory blob store on its own.
@Suite("File blob store")
struct FileBlobStoreTests {
    struct Failing: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        struct Iterator: AsyncIteratorProtocol {
            var sent = 0
            mutating func next() async throws -> ByteBuffer? {
                sent += 1
                guard sent < 3 else { throw KizunaError(.transport, "the client went away") }
                return ByteBuffer(repeating: 7, count: 1000)
            }
        }
        func makeAsyncIterator() -> Iterator { Iterator() }
    }

    @Test func aStreamThatFailsLeavesNothingVisible() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-blobs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileBlobStore(directory: directory)
        await #expect(throws: KizunaError.self) { try await store.put("half", from: Failing()) }
        await #expect(throws: KizunaError.self) { try await store.size("half") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "no temporary file left either")

        let info = try await store.put("whole", from: [ByteBuffer(string: "hello "), ByteBuffer(string: "world")].async)
        #expect(info.size == 11 && info.sha256 == hex(SHA256.hash(data: Array("hello world".utf8))))
        let permissions = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("whole").path)[.posixPermissions]
        #expect(permissions as? Int == 0o600)
        var read: [UInt8] = []
        for try await chunk in try await store.read("whole", range: 6..<11) { read += chunk.readableBytesView }
        #expect(String(decoding: read, as: UTF8.self) == "world")
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    fileprivate var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
