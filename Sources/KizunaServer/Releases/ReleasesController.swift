import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging
import NIOCore

/// Admin routes of the release registry: releases per app, and their artifacts streamed in and out.
struct ReleasesController: Sendable {
    let releases: ReleaseStore
    /// Resumable uploads (``addUploadRoutes(to:)``).
    let uploads: ReleaseUploads
    let apps: any AppRepository
    /// For whether the live gate policy blocks a release's version.
    let live: LiveDocuments
    /// The most an artifact may be, in bytes.
    let maxArtifactSize: Int64

    func addRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.post("/apps/{app}/releases", use: create)
        admin.get("/apps/{app}/releases", use: list)
        admin.get("/apps/{app}/releases/{release}", use: show)
        admin.delete("/apps/{app}/releases/{release}", use: delete)
        admin.put("/apps/{app}/releases/{release}/artifacts/{name}", use: upload)
        admin.get("/apps/{app}/releases/{release}/artifacts/{name}", use: download)
        addUploadRoutes(to: admin)
    }

    /// Whether a request is an artifact upload (a `PUT` of an artifact or a `PATCH` of a resumable upload), which
    /// streams past the request body limit (to ``maxArtifactSize``).
    static func isArtifactUpload(_ request: Request) -> Bool {
        guard request.method == .put || request.method == .patch else { return false }
        let parts = request.uri.path.split(separator: "/")
        return parts.count == 8 && parts[0] == "v1" && parts[1] == "admin" && parts[2] == "apps" && parts[4] == "releases"
            && parts[6] == (request.method == .put ? "artifacts" : "uploads")
    }

    @Sendable func create(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await apps.require(try context.parameters.path("app")).id
        let body = try await request.decode(as: NewRelease.self, context: context)
        let created = try await releases.create(app: app, body, by: context.adminToken?.name ?? "unknown")
        context.logger.notice("Release recorded", metadata: ["app": "\(app)", "version": "\(created.version)", "build": "\(created.build)"])
        return try .json(try await marked(created), status: .created)
    }

    @Sendable func list(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await apps.require(try context.parameters.path("app")).id
        let limit = try request.uri.queryParameters.int("limit", default: 50, in: 1...500)
        var found: [ReleaseRecord] = []
        for release in try await releases.list(app: app, limit: limit) { found.append(try await marked(release)) }
        return try .json(ReleaseList(releases: found))
    }

    @Sendable func show(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(try await marked(try await release(context)))
    }

    @Sendable func delete(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        _ = try await releases.delete(app: release.app, id: release.id)
        context.logger.notice("Release deleted", metadata: ["app": "\(release.app)", "release": "\(release.id)"])
        return Response(status: .noContent)
    }

    @Sendable func upload(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        if let declared = request.headers[.contentLength].flatMap(Int64.init), declared > maxArtifactSize { throw tooLarge }
        let limit = maxArtifactSize
        let artifact = try await releases.attach(
            app: release.app, release: release.id, name: try context.parameters.path("name"),
            contentType: request.headers[.contentType] ?? "application/octet-stream", body: LimitedBody(base: request.body, limit: limit))
        context.logger.notice(
            "Release artifact stored",
            metadata: ["app": "\(release.app)", "release": "\(release.id)", "name": "\(artifact.name)", "size": "\(artifact.size)"])
        return try .json(artifact, status: .created)
    }

    /// The artifact's bytes, streamed; one `Range` (`bytes=a-b`, `a-`, `-n`) answers 206.
    @Sendable func download(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        let (artifact, blob) = try await releases.artifact(app: release.app, release: release.id, name: try context.parameters.path("name"))
        var headers: HTTPFields = [
            .contentType: artifact.contentType, .eTag: "\"\(artifact.sha256)\"", .acceptRanges: "bytes",
            .contentDisposition: "attachment; filename=\"\(artifact.name)\"",
        ]
        var status = HTTPResponse.Status.ok
        var range: Range<Int64> = 0..<artifact.size
        // If-Range names the version the client holds part of: another one gets the whole file.
        let sameVersion = request.headers[.ifRange].map { $0 == "\"\(artifact.sha256)\"" } ?? true
        if let header = request.headers[.range], sameVersion {
            guard let wanted = Self.range(header, size: artifact.size) else {
                headers[.contentRange] = "bytes */\(artifact.size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            range = wanted
            status = .partialContent
            headers[.contentRange] = "bytes \(wanted.lowerBound)-\(wanted.upperBound - 1)/\(artifact.size)"
        }
        headers[.contentLength] = String(range.upperBound - range.lowerBound)
        let bytes = try await releases.blobs.read(blob, range: range)
        return Response(status: status, headers: headers, body: ResponseBody(asyncSequence: bytes))
    }

    /// One byte range of a blob of `size`, or `nil` when it cannot be satisfied (or is not one `bytes=` range).
    static func range(_ header: String, size: Int64) -> Range<Int64>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        switch (Int64(spec[0]), Int64(spec[1])) {
        case (let start?, let end?) where start <= end && start < size: return start..<min(end + 1, size)
        case (let start?, nil) where spec[1].isEmpty && start < size: return start..<size
        case (nil, let suffix?) where spec[0].isEmpty && suffix > 0 && size > 0: return max(0, size - suffix)..<size
        default: return nil
        }
    }

    var tooLarge: KizunaError {
        KizunaError(.payloadTooLarge, "An artifact may be at most \(maxArtifactSize) bytes.")
    }

    func release(_ context: KizunaRequestContext) async throws -> ReleaseRecord {
        let app = try await apps.require(try context.parameters.path("app")).id
        let id = try context.parameters.path("release")
        guard let found = try await releases.find(app: app, id: id) else { throw KizunaError(.notFound, "\(app) has no release '\(id)'.") }
        return found
    }

    /// The release with whether the live gate policy blocks its version.
    private func marked(_ release: ReleaseRecord) async throws -> ReleaseRecord {
        var release = release
        if let version = try? SemanticVersion(parsing: release.version) {
            release.blocked = try await live.gate(release.app).value.blockedVersions.contains { $0.matches(version) }
        }
        return release
    }
}

/// A request body that fails once it passes `limit` bytes.
struct LimitedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let limit: Int64

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), limit: limit) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limit: Int64
        var seen: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            seen += Int64(buffer.readableBytes)
            guard seen <= limit else { throw KizunaError(.payloadTooLarge, "An artifact may be at most \(limit) bytes.") }
            return buffer
        }
    }
}
