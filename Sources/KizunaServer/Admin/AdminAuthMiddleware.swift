import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// Requires a valid admin token (`Authorization: Bearer kza_…`) on every route it guards.
///
/// A context that already carries a token comes from the console's in-process calls (``AdminAPI``), made for an
/// operator whose console session was checked against that token: it passes as it is. A request from the network
/// always arrives with a fresh context, without one.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext
    let tokens: any AdminTokenRepository

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if context.adminToken != nil { return try await next(request, context) }
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
