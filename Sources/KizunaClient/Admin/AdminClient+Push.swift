import Foundation
import KizunaCore

extension AdminClient {
    /// Sets an app's APNs credentials; answers them without the key.
    @discardableResult
    public func setPushCredentials(app: String, _ upload: PushCredentialsUpload) async throws(KizunaError) -> PushCredentialsInfo {
        try await http.send("PUT", "/v1/admin/apps/\(try pathSegment(app))/push/credentials", body: upload)
    }

    /// An app's APNs credentials, without the key. - Throws: `not_found` when none are set.
    public func pushCredentials(app: String) async throws(KizunaError) -> PushCredentialsInfo {
        try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/push/credentials")
    }

    /// Removes an app's APNs credentials.
    public func deletePushCredentials(app: String) async throws(KizunaError) {
        try await http.send("DELETE", "/v1/admin/apps/\(try pathSegment(app))/push/credentials")
    }

    /// A page of an app's push registry in install id order.
    public func pushDevices(app: String, after: String? = nil, limit: Int = 100) async throws(KizunaError) -> PushDeviceList {
        try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/push/devices" + Self.page(after: after, limit: limit))
    }

    /// Creates a push job; it is sent when due.
    public func sendPush(app: String, _ request: PushSendRequest) async throws(KizunaError) -> PushJobStatus {
        try await http.send("POST", "/v1/admin/apps/\(try pathSegment(app))/push/jobs", body: request)
    }

    /// An app's latest push jobs, newest first (1–100).
    public func pushJobs(app: String, limit: Int = 20) async throws(KizunaError) -> [PushJobStatus] {
        let list: PushJobList = try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/push/jobs?limit=\(limit)")
        return list.jobs
    }

    /// A push job with its totals.
    public func pushJob(_ id: String) async throws(KizunaError) -> PushJobStatus {
        try await http.send("GET", "/v1/admin/push/jobs/\(try pathSegment(id))")
    }

    /// A page of a push job's per-device outcomes.
    public func pushDeliveries(job id: String, after: String? = nil, limit: Int = 100) async throws(KizunaError) -> PushDeliveryList {
        try await http.send("GET", "/v1/admin/push/jobs/\(try pathSegment(id))/deliveries" + Self.page(after: after, limit: limit))
    }

    /// Cancels a job that has not finished.
    @discardableResult
    public func cancelPushJob(_ id: String) async throws(KizunaError) -> PushJobStatus {
        try await http.send("DELETE", "/v1/admin/push/jobs/\(try pathSegment(id))")
    }

    private static func page(after: String?, limit: Int) -> String {
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "limit", value: String(limit))] + (after.map { [URLQueryItem(name: "after", value: $0)] } ?? [])
        return components.percentEncodedQuery.map { "?" + $0.replacingOccurrences(of: "+", with: "%2B") } ?? ""
    }
}
