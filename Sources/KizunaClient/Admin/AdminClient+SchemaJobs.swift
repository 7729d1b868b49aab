import Foundation
import KizunaCore

extension AdminClient {
    /// The jobs data schema publishes left for the server to run (index builds, backfills of a new field's
    /// default), newest first, with their state and progress.
    /// - Parameters:
    ///   - app: The app.
    ///   - limit: At most this many (1…300).
    ///   - before: Only jobs with a smaller id, for the next page.
    /// - Throws: `not_found` for an unknown app.
    public func schemaJobs(app: String, limit: Int = 50, before: Int64? = nil) async throws(KizunaError) -> [DataJobInfo] {
        var path = "/v1/admin/apps/\(try pathSegment(app))/schema/jobs?limit=\(limit)"
        if let before { path += "&before=\(before)" }
        return try await http.send("GET", path, as: DataJobList.self).jobs
    }
}
