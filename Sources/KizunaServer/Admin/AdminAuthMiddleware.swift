import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// Requires a valid admin token (`Authorization: Bearer kza_…`) on every route it guards.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext
    let tokens: any AdminTokenRepository

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.headers[.authorization] != nil else {
            throw KizunaError(.unauthorized, "This route needs an admin token: send 'Authorization: Bearer <token>'.")
        }
        guard let bearer = request.bearerToken, let credential = AdminCredential(bearer), let token = try await tokens.authenticate(credential)
        else {
            throw KizunaError(.unauthorized, "The admin token is not valid or has been revoked.")
        }
        var context = context
        context.adminToken = token
        context.logger[metadataKey: "admin.token"] = "\(token.id)"
        return try await next(request, context)
    }
}
