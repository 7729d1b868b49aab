import KizunaCore

/// Who is asking the data API, from the credentials a request presents: a session's access token, an API key of the
/// app, both, or neither. GraphQL over HTTP reads them from `Authorization: Bearer` and `X-Api-Key`; a
/// graphql-transport-ws connection from its `connection_init` payload; both come here, so both admit the same callers.
struct DataCallers: Sendable {
    let accounts: AccountService
    let groups: any UserGroupRepository
    let keys: any APIKeyRepository

    /// The caller the credentials make. A credential that is presented must be valid; none at all is the anonymous
    /// caller, whom the rules refuse on their own. Groups are read only when a rule of the schema asks for them: most
    /// requests need no second store read.
    /// - Parameters:
    ///   - token: The session access token (the part after `Bearer `), if one was presented.
    ///   - apiKey: The API key, if one was presented.
    ///   - app: The app the key must belong to.
    ///   - needsGroups: Whether the schema has `groups` rules.
    /// - Throws: `session_expired` or `account_disabled` for the session; the API key's refusal (`unauthorized`,
    ///   `api_key_revoked`, …); anything else is the store's.
    func caller(token: String?, apiKey: String?, app: String, needsGroups: Bool) async throws -> DataCaller {
        try await connectionCaller(token: token, apiKey: apiKey, app: app, needsGroups: needsGroups).caller
    }

    /// The caller the credentials make, as ``caller(token:apiKey:app:needsGroups:)``, and the session that let it in:
    /// a connection that outlives the access token re-checks that session (``standing(of:)``).
    func connectionCaller(
        token: String?, apiKey: String?, app: String, needsGroups: Bool
    ) async throws -> (caller: DataCaller, session: AuthenticatedSession?) {
        var caller = DataCaller()
        var session: AuthenticatedSession?
        if let token {
            let authenticated = try await accounts.authenticate(token)
            session = authenticated
            caller.userId = authenticated.account.id
            if needsGroups { caller.groups = Set(try await groups.groups(of: authenticated.account.id)) }
        }
        if let apiKey {
            _ = try await keys.authenticate(app: app, key: apiKey)
            caller.hasAPIKey = true
        }
        return (caller, session)
    }

    /// Whether a session still lets its holder in, and when to ask again (``AccountService/standing(of:)``).
    /// - Throws: `session_expired` or `account_disabled` once it does not.
    func standing(of session: AuthenticatedSession) async throws -> Int64 {
        try await accounts.standing(of: session.sessionId)
    }

    /// The groups `userId` is in now.
    func groups(of userId: String) async throws -> Set<String> {
        Set(try await groups.groups(of: userId))
    }
}
