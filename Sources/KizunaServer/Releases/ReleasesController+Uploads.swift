import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

extension HTTPField.Name {
    /// Where a resumable upload's bytes start (request), and how many the server holds (response).
    static let uploadOffset = Self("Upload-Offset")!
}

extension ReleasesController {
    /// Resumable uploads: start or find one, send bytes from an offset, ask where it stands, discard it.
    func addUploadRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.post("/apps/{app}/releases/{release}/uploads", use: startUpload)
        admin.get("/apps/{app}/releases/{release}/uploads/{upload}", use: showUpload)
        admin.patch("/apps/{app}/releases/{release}/uploads/{upload}", use: sendUpload)
        admin.delete("/apps/{app}/releases/{release}/uploads/{upload}", use: cancelUpload)
    }

    /// 201 with a new upload, or 200 with the unfinished one of the same name, size and SHA-256.
    @Sendable func startUpload(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        let new = try await request.decode(as: NewArtifactUpload.self, context: context)
        let (upload, created) = try await uploads.start(app: release.app, release: release.id, new)
        if created {
            context.logger.notice(
                "Release upload started", metadata: ["app": "\(release.app)", "release": "\(release.id)", "name": "\(upload.name)"])
        }
        return try answer(upload, status: created ? .created : .ok)
    }

    @Sendable func showUpload(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        return try answer(try await uploads.find(app: release.app, release: release.id, upload: try context.parameters.path("upload")))
    }

    /// Appends the body at `Upload-Offset`; the answer holds the new offset, and the artifact once the upload is whole.
    @Sendable func sendUpload(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        guard let offset = request.headers[.uploadOffset].flatMap(Int64.init), offset >= 0 else {
            throw KizunaError(.badRequest, "A PATCH of an upload needs an Upload-Offset header: the bytes the server holds.", field: "Upload-Offset")
        }
        let declared = request.headers[.contentLength].flatMap(Int64.init)
        if let declared, declared > maxArtifactSize { throw tooLarge }
        let upload = try await uploads.send(
            app: release.app, release: release.id, upload: try context.parameters.path("upload"), offset: offset, length: declared,
            body: request.body,
            logger: context.logger)
        if let artifact = upload.artifact {
            context.logger.notice(
                "Release artifact stored",
                metadata: ["app": "\(release.app)", "release": "\(release.id)", "name": "\(artifact.name)", "size": "\(artifact.size)"])
        }
        return try answer(upload)
    }

    @Sendable func cancelUpload(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let release = try await release(context)
        try await uploads.cancel(app: release.app, release: release.id, upload: try context.parameters.path("upload"))
        return Response(status: .noContent)
    }

    private func answer(_ upload: ArtifactUpload, status: HTTPResponse.Status = .ok) throws -> Response {
        var response = try Response.json(upload, status: status)
        response.headers[.uploadOffset] = String(upload.received)
        return response
    }
}
