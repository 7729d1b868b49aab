import Crypto
import Foundation
import KizunaClient
import KizunaCore
import KizunaTestSupport
import Subprocess
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc  // SIGKILL
#endif

/// An artifact upload through a real `kizuna serve` that is cut off by the client, then by `kill -9` of the server
/// mid-request: nothing half-written is ever visible, the restarted server knows what it holds, and
/// `kizuna release upload` resumes from there and finishes with the file's checksum.
@Suite("Release uploads survive kill -9")
struct ArtifactKillTests {
    static let size = 24 << 20
    static let firstCut = 8 << 20

    static func patchHead(port: Int, token: String, release: String, upload: String, offset: Int, length: Int) -> String {
        "PATCH /v1/admin/apps/shop/releases/\(release)/uploads/\(upload) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            + "Authorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\nUpload-Offset: \(offset)\r\n"
            + "Content-Length: \(length)\r\n\r\n"
    }

    /// The files in the blob directory that are not dot-files: what a reader could take for a stored blob.
    static func visibleBlobs(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// The size of the upload's partial file in the blob directory.
    static func partialSize(_ directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        guard let name = names.first(where: { $0.hasPrefix(".partial-") }) else { return 0 }
        return (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size] as? Int) ?? 0
    }

    /// Runs `kizuna serve` on `data` while `body` runs, then kills it; the admin token is the one the first start
    /// printed (`token` for a later start, which prints none).
    static func startServer(
        _ data: URL, token known: String? = nil,
        _ body: @escaping (_ server: ServeProcess, _ port: Int, _ token: String, _ admin: AdminClient) async throws -> Void
    )
        async throws -> TerminationStatus
    {
        try await ServeProcess.run(["serve", "--port", "0", "--data-dir", data.path]) { server in
            let port = try #require(await server.port())
            let printed = known == nil ? await server.find { $0.split(separator: " ").first { $0.hasPrefix("kza_") }.map(String.init) } : nil
            let token = try #require(known ?? printed)
            #expect(await server.find { $0.contains("Ready") ? true : nil } == true)
            try await body(server, port, token, AdminClient(server: try #require(URL(string: "http://127.0.0.1:\(port)")), token: token))
            await server.stop(.kill)
        }.status
    }

    @Test(.timeLimit(.minutes(5)))
    func anUploadCutOffAndKilledMidwayResumesAndNothingHalfIsVisible() async throws {
        let work = try ScratchDirectory.make("kizuna-upload-kill")
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("Shop.xcarchive.zip")
        // Each MiB a pattern with its index in front, so bytes out of place would show.
        let pattern = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) })
        var bytes = Data(capacity: Self.size)
        for index in 0..<(Self.size >> 20) {
            bytes.append(contentsOf: withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) })
            bytes.append(pattern.dropFirst(4))
        }
        try bytes.write(to: file)
        let sha256 = hex(SHA256.hash(data: bytes))
        let data = work.appendingPathComponent("data")
        let blobs = data.appendingPathComponent("blobs")

        // First life: the client stops sending after 20 MiB and goes away; then a second request is under way when
        // the server is killed.
        let (release, upload, token) = try await Self.firstLife(data: data, blobs: blobs, bytes: bytes, sha256: sha256)
        #expect(Self.visibleBlobs(blobs).isEmpty, "no half object is visible: \(Self.visibleBlobs(blobs))")
        // A plain PUT's temporary file left by a crash long ago is swept once the restarted server is ready.
        let stale = blobs.appendingPathComponent(".tmp-crashed")
        _ = FileManager.default.createFile(atPath: stale.path, contents: Data([1, 2, 3]))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: stale.path)

        // Second life: the server knows what it recorded; `kizuna release upload` resumes from there.
        let second = try await Self.startServer(data, token: token) { server, port, token, admin in
            // The hourly sweep's first turn, once the store is ready.
            #expect(await server.find { $0.contains("Removed temporary files crashed uploads left") ? true : nil } == true)
            #expect(!FileManager.default.fileExists(atPath: stale.path))
            #expect(try await admin.release(app: "shop", release).artifacts.isEmpty)
            #expect(try await admin.upload(app: "shop", release: release, id: upload).received == Int64(Self.firstCut))
            let (output, status) = try await ServeProcess.run(
                ["release", "upload", release, file.path, "--app", "shop", "--server", "http://127.0.0.1:\(port)", "--token", token]
            ) { cli in
                _ = await cli.find { _ in nil as Bool? }  // to the end of its output: it has exited
                return cli.seen
            }
            #expect(status == .exited(0), "\(output)")
            #expect(output.contains { $0.contains("resuming: \(Self.firstCut) bytes already there") }, "\(output)")
            let artifact = try #require(try await admin.release(app: "shop", release).artifacts.first)
            #expect(artifact.sha256 == sha256 && artifact.size == Int64(Self.size))
            #expect(Self.visibleBlobs(blobs).count == 1 && Self.partialSize(blobs) == 0, "the partial file became the blob")

            // A download cut short resumes from its .part file, and takes the name only once checked.
            let copy = work.appendingPathComponent("copy.zip")
            let part = work.appendingPathComponent(".copy.zip.\(sha256.prefix(12)).part")
            try bytes.prefix(5 << 20).write(to: part)
            try await admin.downloadArtifact(app: "shop", release: release, name: file.lastPathComponent, to: copy)
            #expect(try Data(contentsOf: copy) == bytes && !FileManager.default.fileExists(atPath: part.path))
        }
        #expect(second == .signaled(SIGKILL))
    }

    static func firstLife(data: URL, blobs: URL, bytes: Data, sha256: String) async throws -> (release: String, upload: String, token: String) {
        let ids = Mutex<(String, String, String)?>(nil)
        // The second request, held open until the server is dead.
        let doomed = Mutex<RawConnection?>(nil)
        let status = try await startServer(data) { server, port, token, admin in
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            let release = try await admin.createRelease(app: "shop", NewRelease(version: "2.1", build: "40", channel: .appstore)).id
            let upload = try await admin.startUpload(
                app: "shop", release: release, NewArtifactUpload(name: "Shop.xcarchive.zip", size: Int64(size), sha256: sha256))
            ids.withLock { $0 = (release, upload.id, token) }

            let cut = try await RawConnection.open(port: port)
            try await cut.send(patchHead(port: port, token: token, release: release, upload: upload.id, offset: 0, length: size))
            try await cut.send(bytes: Array(bytes.prefix(firstCut)))
            await cut.close()
            // The server keeps what it got once it sees the request end short, and says so.
            let kept = await server.find { $0.contains("Release upload cut short") ? $0 : nil }
            #expect(kept?.contains("received=\(firstCut)") == true, "everything sent before the cut is kept: \(kept ?? "nothing")")

            let second = try await RawConnection.open(port: port)
            doomed.withLock { $0 = second }
            try await second.send(patchHead(port: port, token: token, release: release, upload: upload.id, offset: firstCut, length: size - firstCut))
            try await second.send(bytes: Array(bytes[firstCut..<(firstCut + (8 << 20))]))
            // Killed while the second request's bytes are being written.
            var grown = false
            for _ in 0..<10_000_000 where !grown {
                grown = partialSize(blobs) > firstCut
                if !grown { await Task.yield() }
            }
            #expect(grown, "the server wrote none of the second request")
        }
        #expect(status == .signaled(SIGKILL))
        await doomed.withLock { $0 }?.close()
        return try #require(ids.withLock { $0 })
    }
}
