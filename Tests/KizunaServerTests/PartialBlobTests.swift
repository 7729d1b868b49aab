import Crypto
import Foundation
import KizunaCore
import NIOCore
import NIOHTTP1
import Testing

@testable import KizunaServer

/// Partial blobs (the bytes of resumable uploads) on both stores: a stream cut short keeps what the store keeps,
/// bytes a crash left past the recorded count are written over, nothing is visible before the blob is finished, and
/// the running checksum sees exactly the bytes kept.
enum PartialBlobChecks {
    /// `count` bytes that differ from part to part.
    static func bytes(_ count: Int) -> [UInt8] { S3BlobStoreTests.bytes(count) }

    /// `bytes` as chunks of an awkward size, failing with a transport error after them when `cut`.
    static func body(_ bytes: ArraySlice<UInt8>, cut: Bool = false) -> AsyncThrowingStream<ByteBuffer, any Error> {
        AsyncThrowingStream { continuation in
            for start in stride(from: bytes.startIndex, to: bytes.endIndex, by: 300_001) {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + 300_001, bytes.endIndex)]))
            }
            continuation.finish(throwing: cut ? KizunaError(.transport, "the client went away") : nil)
        }
    }

    static func exercise(_ store: any BlobStore, size: Int, cutAfter: Int) async throws {
        let bytes = Self.bytes(size)
        let total = Int64(size)
        let started = try await store.beginPartial("resumed")

        // Cut short: what was kept is reported (an object store keeps whole parts only), and hashed exactly.
        var hasher: BlobHasher? = BlobHasher()
        let (kept, failure) = try await store.append(
            "resumed", to: started, total: total, from: body(bytes[..<cutAfter], cut: true), hashing: &hasher)
        #expect((failure as? KizunaError)?.code == .transport)
        #expect(kept.received > 0 && kept.received <= Int64(cutAfter) && hasher?.count == kept.received, "\(kept.received)")
        await #expect(throws: KizunaError.self, "nothing is visible before the blob is finished") { try await store.size("resumed") }

        // Bytes sent after that but never recorded (the server died first) are written over by the next append.
        var ignored: BlobHasher?
        let garbage = [UInt8](repeating: 0xEE, count: Int(store.chunkSize / 2))
        _ = try await store.append("resumed", to: kept, total: total, from: body(garbage[...]), hashing: &ignored)

        // The rest, from the recorded count, with no running checksum (as a restarted server has none).
        var none: BlobHasher?
        let rest = bytes[Int(kept.received)...]
        let (whole, end) = try await store.append("resumed", to: kept, total: total, from: body(rest), hashing: &none)
        #expect(end == nil && whole.received == total)
        try await store.finishPartial("resumed", whole)
        var read = BlobHasher()
        for try await chunk in try await store.read("resumed", range: nil) { read.update(chunk) }
        #expect(read.finalize().size == total && read.finalize().sha256 == hex(SHA256.hash(data: bytes)))

        // Discarded: gone, and nothing under its key.
        let discarded = try await store.beginPartial("discarded")
        var counting: BlobHasher? = BlobHasher()
        _ = try await store.append("discarded", to: discarded, total: total, from: body(bytes[...], cut: true), hashing: &counting)
        try await store.abortPartial("discarded", discarded)
        try await store.abortPartial("discarded", discarded)  // twice is no error
        await #expect(throws: KizunaError.self) { try await store.size("discarded") }

        // An empty blob finishes too (S3 completes no upload without parts).
        let empty = try await store.beginPartial("empty")
        var emptyHash: BlobHasher? = BlobHasher()
        let (nothing, _) = try await store.append("empty", to: empty, total: 0, from: body([][...]), hashing: &emptyHash)
        try await store.finishPartial("empty", nothing)
        #expect(try await store.size("empty") == 0 && emptyHash?.finalize().sha256 == hex(SHA256.hash(data: [UInt8]())))
    }
}

@Suite("Partial blobs")
struct PartialBlobTests {
    @Test func theFileStoreKeepsEveryByteOfACutStream() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-blobs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileBlobStore(directory: directory)
        try await PartialBlobChecks.exercise(store, size: 3 << 20, cutAfter: 1_500_007)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(names) == ["resumed", "empty"], "no partial file is left: \(names)")
        let permissions = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("resumed").path)[.posixPermissions]
        #expect(permissions as? Int == 0o600)
    }

    @Test(.enabled(if: MotoServer.shouldRun, MotoServer.skipReason))
    func theObjectStoreKeepsWholePartsOfACutStream() async throws {
        try await MotoServer.run { endpoint in
            let store = try await S3BlobStoreTests.store(endpoint)
            // 20 MiB cut after 10: one 8 MiB part kept.
            try await PartialBlobChecks.exercise(store, size: 20 << 20, cutAfter: 10 << 20)
            let uploads = try await store.send(.GET, nil, query: [("uploads", "")])
            #expect(!String(buffer: uploads.body).contains("<Upload>"), "no multipart upload is left: \(String(buffer: uploads.body))")
        }
    }

    @Test func leftoversOfCrashedWritesAreSweptOnceStale() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-blobs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = FileBlobStore(directory: directory)
        for name in [".tmp-stale", ".tmp-fresh", ".partial-\(UUID().uuidString)", "blob"] {
            _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data([1]))
        }
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: directory.appendingPathComponent(".tmp-stale").path)
        #expect(store.sweepTemporaryFiles() == 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!left.contains(".tmp-stale") && left.count == 3, "a write in progress, a partial blob and a blob stay: \(left)")
    }
}
