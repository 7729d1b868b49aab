import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AdminClient {
    /// Records a release. - Throws: `conflict` when the app already has this (version, build).
    public func createRelease(app: String, _ release: NewRelease) async throws(KizunaError) -> ReleaseRecord {
        try await http.send("POST", "/v1/admin/apps/\(try pathSegment(app))/releases", body: release)
    }

    /// An app's releases, newest first.
    public func releases(app: String, limit: Int = 50) async throws(KizunaError) -> [ReleaseRecord] {
        let list: ReleaseList = try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/releases?limit=\(limit)")
        return list.releases
    }

    /// One release: by id, by version (the newest build), or as `3.10.1(4321)`.
    public func release(app: String, _ release: String) async throws(KizunaError) -> ReleaseRecord {
        try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/releases/\(try pathSegment(release))")
    }

    /// Deletes a release and its artifacts.
    public func deleteRelease(app: String, _ release: String) async throws(KizunaError) {
        try await http.send("DELETE", "/v1/admin/apps/\(try pathSegment(app))/releases/\(try pathSegment(release))")
    }

    /// Streams the file at `file` to the release as the artifact `name` (the file is never read into memory).
    public func uploadArtifact(
        app: String, release: String, name: String, file: URL, contentType: String = "application/octet-stream"
    ) async throws(KizunaError) -> ReleaseArtifact {
        var request = try http.makeRequest("PUT", try artifactPath(app, release, name))
        request.timeoutInterval = 24 * 3600
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await http.session.upload(for: request, fromFile: file)
        } catch {
            throw KizunaError(.transport, "Uploading \(file.lastPathComponent) failed: \(error.localizedDescription)")
        }
        return try Self.answer(data, response, what: "PUT \(name)", as: ReleaseArtifact.self)
    }

    func artifactPath(_ app: String, _ release: String, _ name: String) throws(KizunaError) -> String {
        "/v1/admin/apps/\(try pathSegment(app))/releases/\(try pathSegment(release))/artifacts/\(try pathSegment(name))"
    }

    private static func answer<Value: Decodable>(
        _ data: Data, _ response: URLResponse, what: String, as type: Value.Type
    ) throws(KizunaError)
        -> Value
    {
        guard let http = response as? HTTPURLResponse else { throw KizunaError(.transport, "\(what): the answer was not HTTP.") }
        guard (200..<300).contains(http.statusCode) else {
            throw KizunaHTTPClient.error(status: http.statusCode, headers: http, body: data, what: what)
        }
        return try KizunaHTTPClient.Reply(status: http.statusCode, headers: [:], body: data).decode(Value.self, what: what)
    }
}
