import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The admin API of push: an app's APNs credentials (set and described, never returned), its registry, and push
/// jobs — created for a target and a time, followed by id, cancelled.
struct PushAdminController: Sendable {
    let credentials: PushCredentialStore
    let devices: PushDeviceRepository
    let jobs: PushJobStore
    let sender: PushSender
    let apps: any AppRepository

    func addRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.put("/apps/{app}/push/credentials", use: setCredentials)
        admin.get("/apps/{app}/push/credentials", use: showCredentials)
        admin.delete("/apps/{app}/push/credentials", use: deleteCredentials)
        admin.get("/apps/{app}/push/devices", use: listDevices)
        admin.post("/apps/{app}/push/jobs", use: createJob)
        admin.get("/apps/{app}/push/jobs", use: listJobs)
        admin.get("/push/jobs/{job}", use: showJob)
        admin.get("/push/jobs/{job}/deliveries", use: listDeliveries)
        admin.delete("/push/jobs/{job}", use: cancelJob)
    }

    /// Stores the app's signing key (sealed) and ids; answers them without the key.
    @Sendable func setCredentials(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let upload = try await request.decode(as: PushCredentialsUpload.self, context: context)
        return try .json(try await credentials.set(app: app.id, bundleId: app.bundleId, upload))
    }

    @Sendable func showCredentials(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        guard let info = try await credentials.info(app: app.id) else {
            throw KizunaError(.notFound, "App '\(app.id)' has no APNs credentials; set them with kizuna push credentials set.", field: "app")
        }
        return try .json(info)
    }

    @Sendable func deleteCredentials(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        guard try await credentials.delete(app: app.id) else {
            throw KizunaError(.notFound, "App '\(app.id)' has no APNs credentials.", field: "app")
        }
        return Response(status: .noContent)
    }

    @Sendable func listDevices(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let query = request.uri.queryParameters
        return try .json(
            try await devices.list(app: app.id, after: query["after"].map(String.init), limit: try query.int("limit", default: 100, in: 1...1000)))
    }

    /// Checks the target, message and time, and stores the job; the sender takes it when due.
    @Sendable func createJob(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let send = try await request.decode(as: PushSendRequest.self, context: context)
        try PushTargeting.check(send.target)
        try APNsPayload.check(send.message)
        let now = sender.settings.now()
        let schedule = try PushSchedule.plan(send, now: now)
        guard try await credentials.info(app: app.id) != nil else {
            throw KizunaError(
                .validationFailed, "App '\(app.id)' has no APNs credentials yet: set them first (kizuna push credentials set).", field: "credentials")
        }
        let job = try await jobs.create(app: app.id, send, plan: schedule, now: now)
        sender.poke()
        return try .json(job, status: .created)
    }

    /// The app's latest jobs, newest first.
    @Sendable func listJobs(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let limit = try request.uri.queryParameters.int("limit", default: 20, in: 1...100)
        return try .json(PushJobList(jobs: try await jobs.jobs(app: app.id, limit: limit)))
    }

    @Sendable func showJob(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(try await requireJob(context))
    }

    @Sendable func listDeliveries(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let job = try await requireJob(context)
        let query = request.uri.queryParameters
        let limit = try query.int("limit", default: 100, in: 1...1000)
        let page = try await jobs.deliveries(job: job.id, after: query["after"].map(String.init), limit: limit + 1)
        return try .json(PushDeliveryList(deliveries: Array(page.prefix(limit)), next: page.count > limit ? page[limit - 1].installId : nil))
    }

    /// Cancels a job that has not finished: devices not yet sent to are skipped.
    @Sendable func cancelJob(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let job = try await requireJob(context)
        guard try await jobs.cancel(id: job.id, now: sender.settings.now()) else {
            throw KizunaError(
                .conflict, "Push job '\(job.id)' is \(job.state.rawValue); only a scheduled or sending job can be cancelled.", field: "job")
        }
        return try .json(try await requireJob(context))
    }

    private func requireApp(_ context: KizunaRequestContext) async throws -> AppRecord {
        try await apps.require(try context.parameters.path("app"))
    }

    private func requireJob(_ context: KizunaRequestContext) async throws -> PushJobStatus {
        let id = try context.parameters.path("job")
        guard let job = try await jobs.status(id: id) else { throw KizunaError(.notFound, "No push job '\(id)'.", field: "job") }
        return job
    }
}
