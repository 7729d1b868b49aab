import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The push registry's device routes: an install registers its APNs token (as the signed-in user, when it sends a
/// session), and unregisters it. No admin token: like `config:fetch`, they are called by the app itself, throttled per
/// install.
struct PushDevicesController: Sendable {
    let devices: PushDeviceRepository
    let apps: any AppRepository
    let accounts: AccountService
    let limiter: InstallRateLimiter

    func addRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        v1.post("/apps/{app}/push/devices", use: register)
        v1.delete("/apps/{app}/push/devices/{install}", use: unregister)
    }

    /// Registers the install's token; answers the registration as stored (the token normalized).
    @Sendable func register(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let registration = try await request.decode(as: PushRegistration.self, context: context)
        try limiter.take(app: app, install: registration.installId)
        try Self.validate(registration)
        let token = try APNsDeviceToken(parsing: registration.token)
        _ = try await apps.require(app)
        // A session, when sent, must be valid: a token linked to the wrong account would push another's messages.
        var userId: String?
        if let bearer = request.bearerToken { userId = try await accounts.authenticate(bearer).account.id }
        return try .json(try await devices.register(app: app, registration, token: token, userId: userId))
    }

    /// Removes the install from the registry: no more pushes to it.
    @Sendable func unregister(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let install = try context.parameters.path("install")
        try limiter.take(app: app, install: install)
        _ = try await apps.require(app)
        guard try await devices.unregister(app: app, installId: install) else {
            throw KizunaError(.notFound, "No install '\(install)' is registered for push in app '\(app)'.", field: "install")
        }
        return Response(status: .noContent)
    }

    /// The fields besides the token, each within what a device sends.
    static func validate(_ registration: PushRegistration) throws(KizunaError) {
        func check(_ value: String?, _ field: String, max: Int) throws(KizunaError) {
            if let value, value.isEmpty || value.count > max {
                throw KizunaError(.validationFailed, "\(field) must be 1 to \(max) characters.", field: field)
            }
        }
        try check(registration.installId, "installId", max: 128)
        try check(registration.appVersion, "appVersion", max: 64)
        try check(registration.buildNumber, "buildNumber", max: 64)
        try check(registration.osVersion, "osVersion", max: 64)
        try check(registration.locale, "locale", max: 35)
        try check(registration.country, "country", max: 2)
        try check(registration.timeZone, "timeZone", max: 64)
        if let attributes = registration.attributes, attributes.count > 64 || attributes.keys.contains(where: { $0.isEmpty || $0.count > 64 }) {
            throw KizunaError(.validationFailed, "attributes may hold up to 64 names of 1 to 64 characters.", field: "attributes")
        }
        // The versions conditions compare must parse, as a config fetch's must.
        let context = DeviceContext(
            appVersion: registration.appVersion ?? "0", buildNumber: registration.buildNumber, osVersion: registration.osVersion)
        _ = try EvaluationContext(device: context)
        if let zone = registration.timeZone, TimeZone(identifier: zone) == nil {
            throw KizunaError(.validationFailed, "timeZone '\(zone)' is not an IANA time zone, such as Asia/Tokyo.", field: "timeZone")
        }
    }
}
