import Foundation
import KizunaClient
import KizunaCore
import Subprocess
import Testing

/// A release artifact far larger than the memory the server may use for it streams through a real `kizuna serve`:
/// the server's peak resident memory (VmHWM, Linux) grows by a small fraction of the file, up and down.
@Suite("Release artifacts in bounded memory")
struct ArtifactMemoryTests {
    static let size = 384 << 20
    /// The most the server's peak RSS may grow while the file goes through it, up and down.
    static let allowedGrowth = 64 << 20

    /// The peak resident set of the server serving `data`, in bytes: `nil` where /proc is not Linux's.
    static func peakRSS(serving data: URL) throws -> Int? {
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") where entry.allSatisfy(\.isNumber) {
            guard let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8),
                command.contains("serve"), command.contains(data.path),
                let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
            else { continue }
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "needs Linux's /proc to read peak memory"))
    func aLargeArtifactStreamsThroughInBoundedMemory() async throws {
        let work = try ScratchDirectory.make("kizuna-rss")
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("Big.xcarchive.zip")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 9) })
        for _ in 0..<(Self.size >> 20) { try handle.write(contentsOf: block) }
        try handle.close()
        let data = work.appendingPathComponent("data")

        _ = try await ServeProcess.run(["serve", "--port", "0", "--data-dir", data.path]) { server in
            let port = try #require(await server.port())
            let token = try #require(await server.find { $0.split(separator: " ").first { $0.hasPrefix("kza_") }.map(String.init) })
            #expect(await server.find { $0.contains("Ready") ? true : nil } == true)
            let admin = AdminClient(server: try #require(URL(string: "http://127.0.0.1:\(port)")), token: token)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            let release = try await admin.createRelease(app: "shop", NewRelease(version: "1.0", build: "1", channel: .internal))
            let before = try #require(try Self.peakRSS(serving: data))

            let stored = try await admin.uploadArtifactResumably(app: "shop", release: release.id, name: file.lastPathComponent, file: file)
            #expect(stored.size == Int64(Self.size))
            let copy = work.appendingPathComponent("copy.zip")
            try await admin.downloadArtifact(app: "shop", release: release.id, name: file.lastPathComponent, to: copy)
            #expect(try FileManager.default.attributesOfItem(atPath: copy.path)[.size] as? Int == Self.size)

            let after = try #require(try Self.peakRSS(serving: data))
            #expect(
                after - before < Self.allowedGrowth,
                "peak RSS grew by \((after - before) >> 20) MB for a \(Self.size >> 20) MB artifact (from \(before >> 20) MB)")
            await server.stop(.terminate)
        }
    }
}
