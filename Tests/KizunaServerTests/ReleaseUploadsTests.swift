import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import NIOCore
import SQLKit
import Testing

@testable import KizunaServer

/// Resumable artifact uploads over HTTP, on SQLite and PostgreSQL: found again by asking again, sent from the offset
/// the server holds (and refused from any other), finished on another instance than the one that started them (so
/// checked by reading the blob back), checked against the declared SHA-256, discarded with their bytes.
@Suite("Resumable release uploads")
struct ReleaseUploadsTests {
    static let base = ReleasesTests.base

    static func start(_ server: TestServer, _ release: String, name: String, _ bytes: [UInt8], sha256: String? = nil) async throws -> TestResponse {
        let digest = sha256 ?? hex(SHA256.hash(data: bytes))
        return try await server.send(
            .post, "\(base)/\(release)/uploads", json: #"{"name":"\#(name)","size":\#(bytes.count),"sha256":"\#(digest)"}"#)
    }

    static func patch(
        _ server: TestServer, _ release: String, _ upload: String, offset: Int64?, _ bytes: ArraySlice<UInt8>
    ) async throws
        -> TestResponse
    {
        var headers: HTTPFields = [.authorization: "Bearer \(server.adminToken)", .contentType: "application/octet-stream"]
        if let offset { headers[.uploadOffset] = String(offset) }
        return try await server.client.execute(
            uri: "\(base)/\(release)/uploads/\(upload)", method: .patch, headers: headers, body: ByteBuffer(bytes: bytes)
        ) { $0 }
    }

    /// On PostgreSQL, two instances sharing the store and the blob directory; on SQLite (one instance), one.
    static func withServers(_ backend: TestBackend, _ body: @escaping @Sendable (TestServer, TestServer) async throws -> Void) async throws {
        if backend == .postgres {
            try await withTestServers(backend, body)
        } else {
            try await withTestServer(backend) { try await body($0, $0) }
        }
    }

    @Test(arguments: TestBackend.available)
    func anUploadResumesFromTheServersOffsetOnAnyInstance(_ backend: TestBackend) async throws {
        try await Self.withServers(backend) { a, b in
            _ = try await a.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let release = try await ReleasesTests.create(a, "2.0", "7").decode(ReleaseRecord.self).id
            // Three times the request body limit (1 MiB).
            let bytes = PartialBlobChecks.bytes(3 << 20)
            let started = try await Self.start(a, release, name: "App.xcarchive.zip", bytes)
            #expect(started.status == .created)
            let upload = try started.decode(ArtifactUpload.self)
            #expect(upload.received == 0 && upload.chunkSize == 16 << 20 && upload.contentType == "application/octet-stream")
            #expect(started.headers[.uploadOffset] == "0")

            let first = try await Self.patch(a, release, upload.id, offset: 0, bytes[..<1_200_000])
            #expect(first.status == .ok && first.headers[.uploadOffset] == "1200000")
            #expect(try first.decode(ArtifactUpload.self).artifact == nil)

            // Asked again (a client run anew), the same upload, where it stands; from another offset, refused.
            let again = try await Self.start(b, release, name: "App.xcarchive.zip", bytes)
            let found = try again.decode(ArtifactUpload.self)
            #expect(again.status == .ok && found.id == upload.id && found.received == 1_200_000)
            let wrong = try await Self.patch(b, release, upload.id, offset: 0, bytes[..<10])
            #expect(wrong.status == .conflict && wrong.error?.field == "Upload-Offset" && wrong.error?.message.contains("1200000") == true)
            let missing = try await Self.patch(b, release, upload.id, offset: nil, bytes[..<10])
            #expect(missing.status == .badRequest && missing.error?.field == "Upload-Offset")
            let tooMuch = try await Self.patch(b, release, upload.id, offset: 1_200_000, bytes[1_200_000...] + [0])
            #expect(tooMuch.status == .contentTooLarge)

            // While one request is sending (its body not all there yet), another for the same upload — on either
            // instance — is told to wait, even from the same offset; once the first is cut off, what it got is kept.
            let sending = try await RawConnection.open(port: try #require(a.client.port))
            try await sending.send(
                "PATCH \(Self.base)/\(release)/uploads/\(upload.id) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(a.adminToken)\r\n"
                    + "Upload-Offset: 1200000\r\nContent-Length: \(bytes.count - 1_200_000)\r\n\r\n")
            try await sending.send(bytes: Array(bytes[1_200_000..<1_300_000]))
            // Taken once the request holds the upload's lease.
            var writer: String?
            for _ in 0..<10_000 where writer == nil {
                writer = try await a.database.raw("SELECT writer FROM release_uploads WHERE id = \(bind: upload.id)").first()?
                    .decode(column: "writer", as: String?.self)
            }
            let busy = try await Self.patch(b, release, upload.id, offset: 1_200_000, bytes[1_200_000..<1_200_010])
            #expect(busy.status == .conflict && busy.headers[.retryAfter] != nil, "\(busy.status) \(busy.text)")
            await sending.close()
            var held = try await b.send(.get, "\(Self.base)/\(release)/uploads/\(upload.id)").decode(ArtifactUpload.self)
            for _ in 0..<10_000 where held.received == 1_200_000 {
                held = try await b.send(.get, "\(Self.base)/\(release)/uploads/\(upload.id)").decode(ArtifactUpload.self)
            }
            #expect(held.received == 1_300_000, "what the cut request sent is kept")

            // The rest, on the other instance: it did not see the first bytes go by, so it reads the blob back to check it.
            let shown = try await b.send(.get, "\(Self.base)/\(release)/uploads/\(upload.id)").decode(ArtifactUpload.self)
            let last = try await Self.patch(b, release, upload.id, offset: shown.received, bytes[Int(shown.received)...])
            #expect(last.status == .ok && last.headers[.uploadOffset] == String(bytes.count))
            let artifact = try #require(try last.decode(ArtifactUpload.self).artifact)
            #expect(artifact.sha256 == hex(SHA256.hash(data: bytes)) && artifact.md5 == hex(Insecure.MD5.hash(data: bytes)))
            let download = try await a.send(.get, "\(Self.base)/\(release)/artifacts/App.xcarchive.zip")
            #expect(download.body.withUnsafeReadableBytes { hex(SHA256.hash(data: $0)) } == artifact.sha256)
            #expect(try await a.send(.get, "\(Self.base)/\(release)/uploads/\(upload.id)").status == .notFound, "a finished upload is gone")
        }
    }

    @Test(arguments: TestBackend.available)
    func aDamagedOrAbandonedUploadLeavesNothing(_ backend: TestBackend) async throws {
        let blobs = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-blobs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: blobs) }
        try await withTestServer(backend, configure: { $0.blobStorage = .directory(blobs.path) }) { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let release = try await ReleasesTests.create(server, "2.0", "8").decode(ReleaseRecord.self).id
            let bytes = PartialBlobChecks.bytes(100_000)

            // Declared as other bytes: the whole arrives, fails its check, and is discarded.
            let damaged = try await Self.start(server, release, name: "App.ipa", bytes, sha256: String(repeating: "ab", count: 32))
                .decode(ArtifactUpload.self)
            let refused = try await Self.patch(server, release, damaged.id, offset: 0, bytes[...])
            #expect(refused.status == .badRequest && refused.error?.field == "sha256", "\(refused.status) \(refused.text)")
            #expect(refused.error?.message.contains(hex(SHA256.hash(data: bytes))) == true)
            #expect(try await server.send(.get, "\(Self.base)/\(release)/uploads/\(damaged.id)").status == .notFound)
            #expect(try await server.send(.get, "\(Self.base)/\(release)").decode(ReleaseRecord.self).artifacts.isEmpty)

            // Started with another size under the same name: the old one is discarded for the new one.
            let old = try await Self.start(server, release, name: "App.ipa", bytes).decode(ArtifactUpload.self)
            _ = try await Self.patch(server, release, old.id, offset: 0, bytes[..<5000])
            let new = try await Self.start(server, release, name: "App.ipa", Array(bytes.prefix(10))).decode(ArtifactUpload.self)
            #expect(new.id != old.id && new.received == 0)
            #expect(try await server.send(.get, "\(Self.base)/\(release)/uploads/\(old.id)").status == .notFound)

            // Its bytes on disk cut back below what was recorded (another writer): refused, and started over from 0.
            let cutBack = try await Self.start(server, release, name: "Shop.ipa", bytes).decode(ArtifactUpload.self)
            _ = try await Self.patch(server, release, cutBack.id, offset: 0, bytes[..<5000])
            let partialFile = try #require(
                try FileManager.default.contentsOfDirectory(atPath: blobs.path).first { name in
                    let size = try? FileManager.default.attributesOfItem(atPath: blobs.appendingPathComponent(name).path)[.size] as? Int
                    return name.hasPrefix(".partial-") && size == 5000  // this upload's, not the other one started above
                })
            try FileHandle(forWritingTo: blobs.appendingPathComponent(partialFile)).truncate(atOffset: 100)
            let damagedCopy = try await Self.patch(server, release, cutBack.id, offset: 5000, bytes[5000...])
            #expect(damagedCopy.status == .conflict && damagedCopy.error?.message.contains("from byte 0") == true, "\(damagedCopy.text)")
            let over = try await Self.patch(server, release, cutBack.id, offset: 0, bytes[...])
            #expect(try over.decode(ArtifactUpload.self).artifact?.sha256 == hex(SHA256.hash(data: bytes)))

            // A fault of the server's own (here a stored partial blob that names no file of the store) answers 500
            // with the request id and none of the detail, which goes to the log.
            let before = Set(try FileManager.default.contentsOfDirectory(atPath: blobs.path))
            let broken = try await Self.start(server, release, name: "broken.zip", bytes).decode(ArtifactUpload.self)
            // Its real file: the row no longer names it, so nothing the server does below removes it.
            let orphan = Set(try FileManager.default.contentsOfDirectory(atPath: blobs.path)).subtracting(before)
            try await server.database.raw(
                #"UPDATE release_uploads SET partial = '{"token":"../../etc/passwd","received":0,"parts":[]}' WHERE id = \#(bind: broken.id)"#
            ).run()
            let fault = try await Self.patch(server, release, broken.id, offset: 0, bytes[..<10])
            #expect(fault.status == .internalServerError && !fault.text.contains("partial") && !fault.text.contains("passwd"), "\(fault.text)")
            #expect(try await server.send(.delete, "\(Self.base)/\(release)/uploads/\(broken.id)").status == .noContent)

            // A range of a version the client does not hold (If-Range) is the whole current file instead.
            let path = "\(Self.base)/\(release)/artifacts/Shop.ipa"
            let stale = try await server.send(.get, path, headers: [.range: "bytes=0-9", .ifRange: "\"\(String(repeating: "0", count: 64))\""])
            #expect(stale.status == .ok && stale.body.readableBytes == bytes.count)
            let current = try await server.send(.get, path, headers: [.range: "bytes=0-9", .ifRange: "\"\(hex(SHA256.hash(data: bytes)))\""])
            #expect(current.status == .partialContent && current.body.readableBytes == 10)

            // Cancelled, and one left unfinished when its release is deleted: their bytes go with them.
            #expect(try await server.send(.delete, "\(Self.base)/\(release)/uploads/\(new.id)").status == .noContent)
            let left = try await Self.start(server, release, name: "dSYMs.zip", bytes).decode(ArtifactUpload.self)
            _ = try await Self.patch(server, release, left.id, offset: 0, bytes[..<5000])
            #expect(try await server.send(.delete, "\(Self.base)/\(release)").status == .noContent)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: blobs.path)) == orphan)

            // Removing the app removes its releases' bytes too (the rows go by cascade, the blobs cannot).
            let kept = try await ReleasesTests.create(server, "5.0", "1").decode(ReleaseRecord.self).id
            #expect(try await ReleasesTests.put(server, "\(Self.base)/\(kept)/artifacts/App.ipa", Array(bytes.prefix(100))).status == .created)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: blobs.path)).count == orphan.count + 1)
            #expect(try await server.send(.delete, "/v1/admin/apps/my-app").status == .noContent)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: blobs.path)) == orphan)
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)

            let bad = try await server.send(
                .post, "\(Self.base)/nope/uploads", json: #"{"name":"App.ipa","size":1,"sha256":"\#(String(repeating: "0", count: 64))"}"#)
            #expect(bad.status == .notFound)
            let other = try await ReleasesTests.create(server, "2.0", "9").decode(ReleaseRecord.self).id
            let invalid = try await server.send(.post, "\(Self.base)/\(other)/uploads", json: #"{"name":".x","size":-1,"sha256":"zz"}"#)
            #expect(invalid.status == .badRequest, "\(invalid.text)")
            #expect(Set(invalid.error?.details.compactMap(\.field) ?? []) == ["$.name", "$.size", "$.sha256"], "\(invalid.text)")
        }
    }

    @Test(.enabled(if: MotoServer.shouldRun, MotoServer.skipReason))
    func anUploadResumesIntoTheObjectStore() async throws {
        try await MotoServer.run { endpoint in
            let settings = S3Settings(endpoint: endpoint, bucket: "kizuna-blobs", accessKey: "AKIDKIZUNATEST", secretKey: "kizuna-test-secret")
            _ = try await S3BlobStoreTests.store(endpoint)
            try await withTestServer(.sqlite, configure: { $0.blobStorage = .s3(settings) }) { server in
                _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
                let release = try await ReleasesTests.create(server, "3.0", "1").decode(ReleaseRecord.self).id
                // 20 MiB, sent as 12 then 8: the first request keeps one 8 MiB part, the second goes on from there.
                let bytes = PartialBlobChecks.bytes(20 << 20)
                let upload = try await Self.start(server, release, name: "App.ipa", bytes).decode(ArtifactUpload.self)
                #expect(upload.chunkSize == 16 << 20)
                let first = try await Self.patch(server, release, upload.id, offset: 0, bytes[..<(12 << 20)])
                #expect(first.headers[.uploadOffset] == String(8 << 20), "whole parts only")
                let last = try await Self.patch(server, release, upload.id, offset: 8 << 20, bytes[(8 << 20)...])
                let artifact = try #require(try last.decode(ArtifactUpload.self).artifact)
                #expect(artifact.sha256 == hex(SHA256.hash(data: bytes)) && artifact.size == Int64(bytes.count))
                let range = try await server.send(.get, "\(Self.base)/\(release)/artifacts/App.ipa", headers: [.range: "bytes=8388600-8388615"])
                #expect(Array(range.body.readableBytesView) == Array(bytes[8_388_600...8_388_615]))
            }
        }
    }

    /// curl (and other clients) send `Expect: 100-continue` before a large body and wait for the interim answer: it
    /// comes at once, so the body follows without the client's pause.
    @Test func anExpectationOfContinueIsAnsweredAtOnce() async throws {
        try await withTestServer { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let release = try await ReleasesTests.create(server, "4.0", "1").decode(ReleaseRecord.self).id
            let connection = try await RawConnection.open(port: try #require(server.client.port))
            try await connection.send(
                "PUT \(Self.base)/\(release)/artifacts/notes.txt HTTP/1.1\r\nHost: localhost\r\n"
                    + "Authorization: Bearer \(server.adminToken)\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let interim = try await connection.readResponse()
            #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim)")
            try await connection.send("hello")
            let answer = try await connection.readResponse()
            #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")
            await connection.close()
        }
    }
}
