import Crypto
import Foundation
import KizunaCore
import NIOCore
import NIOHTTP1
import Testing

@testable import KizunaServer

/// The S3 blob store against a real S3 API (moto's server, started per test).
@Suite("S3 blob store (moto)")
struct S3BlobStoreTests {
    static func store(_ endpoint: String) async throws -> S3BlobStore {
        let store = try S3BlobStore(
            settings: S3Settings(endpoint: endpoint, bucket: "kizuna-blobs", accessKey: "AKIDKIZUNATEST", secretKey: "kizuna-test-secret"))
        try await store.createBucket()
        try await store.createBucket()  // one this account owns already is no error
        return store
    }

    /// `count` bytes that differ from part to part (a misordered part would show): a pseudo-random MiB, each copy
    /// with its index in front.
    static func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for index in 0..<((count + pattern.count - 1) / pattern.count) {
            bytes.append(contentsOf: withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) })
            bytes.append(contentsOf: pattern[4...])
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    private static let pattern: [UInt8] = {
        var state: UInt32 = 2_463_534_242
        return (0..<(1 << 20)).map { _ in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
    }()

    static func chunks(_ bytes: [UInt8], size: Int = 300_001) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            for start in stride(from: 0, to: bytes.count, by: size) {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + size, bytes.count)]))
            }
            continuation.finish()
        }
    }

    static func collect(_ bytes: BlobBytes) async throws -> [UInt8] {
        var out: [UInt8] = []
        for try await chunk in bytes { out += chunk.readableBytesView }
        return out
    }

    @Test(.enabled(if: MotoServer.shouldRun, MotoServer.skipReason))
    func smallAndMultipartBlobsGoUpAndComeBack() async throws {
        try await MotoServer.run { endpoint in
            let store = try await Self.store(endpoint)

            let small = Array("hello world".utf8)
            let smallInfo = try await store.put("small", from: Self.chunks(small, size: 6))
            #expect(smallInfo == BlobInfo(size: 11, sha256: hex(SHA256.hash(data: small)), md5: hex(Insecure.MD5.hash(data: small))))
            #expect(try await Self.collect(store.read("small", range: 6..<11)) == Array("world".utf8))

            // 20 MiB: three parts of a multipart upload (8, 8 and 4 MiB).
            let large = Self.bytes(20 << 20)
            let info = try await store.put("large", from: Self.chunks(large))
            #expect(info == BlobInfo(size: Int64(large.count), sha256: hex(SHA256.hash(data: large)), md5: hex(Insecure.MD5.hash(data: large))))
            #expect(try await store.size("large") == Int64(large.count))
            let etag = try await store.send(.HEAD, "large").headers.first(name: "ETag") ?? ""
            #expect(etag.hasSuffix("-3\""), "S3 writes a multipart object's ETag as <md5 of part md5s>-<parts>: \(etag)")
            #expect(try await Self.collect(store.read("large", range: nil)) == large, "read whole, in three ranged GETs")
            let across = Int64(8 << 20) - 10..<Int64(17 << 20) + 3
            #expect(try await Self.collect(store.read("large", range: across)) == Array(large[Int(across.lowerBound)..<Int(across.upperBound)]))

            try await store.delete("large")
            await #expect(throws: KizunaError(.notFound, "No such blob.")) { try await store.size("large") }
            try await store.delete("large")  // a missing blob is no error
            await #expect(throws: KizunaError.self) { try await Self.collect(store.read("large", range: 0..<10)) }
        }
    }

    struct FailingMidway: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        struct Iterator: AsyncIteratorProtocol {
            var sent = 0
            mutating func next() async throws -> ByteBuffer? {
                sent += 1
                guard sent <= 10 else { throw KizunaError(.transport, "the client went away") }
                return ByteBuffer(repeating: UInt8(sent), count: 1 << 20)
            }
        }
        func makeAsyncIterator() -> Iterator { Iterator() }
    }

    @Test(.enabled(if: MotoServer.shouldRun, MotoServer.skipReason))
    func aStreamThatFailsLeavesNoObjectAndNoUpload() async throws {
        try await MotoServer.run { endpoint in
            let store = try await Self.store(endpoint)
            // 10 MiB in: one part uploaded, then the body fails.
            await #expect(throws: KizunaError(.transport, "the client went away")) { try await store.put("half", from: FailingMidway()) }
            await #expect(throws: KizunaError(.notFound, "No such blob.")) { try await store.size("half") }
            let uploads = try await store.send(.GET, nil, query: [("uploads", "")])
            #expect(uploads.status == .ok)
            #expect(!String(buffer: uploads.body).contains("<Upload>"), "the multipart upload was aborted: \(String(buffer: uploads.body))")

            // The same for a body that fails before a whole part: nothing was sent.
            let short = AsyncThrowingStream<ByteBuffer, any Error> {
                $0.yield(ByteBuffer(string: "partial"))
                $0.finish(throwing: KizunaError(.transport, "gone"))
            }
            await #expect(throws: KizunaError.self) { try await store.put("short", from: short) }
            await #expect(throws: KizunaError.self) { try await store.size("short") }
        }
    }

    @Test(.enabled(if: MotoServer.shouldRun, MotoServer.skipReason))
    func s3ErrorsCarryTheirCodeAndNoSecret() async throws {
        try await MotoServer.run { endpoint in
            let store = try S3BlobStore(
                settings: S3Settings(endpoint: endpoint, bucket: "no-such-bucket", accessKey: "AKIDKIZUNATEST", secretKey: "kizuna-test-secret"))
            let error = try await #require(throws: KizunaError.self) { try await store.put("x", from: Self.chunks([1, 2, 3])) }
            #expect(error.message.contains("NoSuchBucket") && !error.message.contains("kizuna-test-secret"), "\(error.message)")
        }
    }
}
