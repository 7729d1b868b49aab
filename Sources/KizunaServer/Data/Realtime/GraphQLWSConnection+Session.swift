import KizunaCore
import Logging
import Synchronization

extension GraphQLWSConnection {
    /// Keeps the connection honest about the session that let it in, for as long as it is open.
    ///
    /// An app's access token lives minutes, its connection hours. The connection is not cut when the token expires (a
    /// client cannot hand a new one to a graphql-transport-ws connection, and thousands of reconnects every quarter of
    /// an hour would cost more than they prove): instead the session is re-checked then, and again each time its
    /// current token expires. While it lives — the client keeps refreshing, and nobody signed it out — deliveries go
    /// on, with the user's groups read again so that `groups` rules follow membership. Once it is over (signed out,
    /// expired, its account disabled or deleted), the connection closes with 4403 and the error's code as the reason.
    /// Sessions that end early are also heard of at once, through the change feed (``SessionEvents``).
    func scheduleSessionCheck(at millis: Int64) {
        schedule(\.sessionTimer, after: .milliseconds(max(0, millis - EpochMillis.now))) {
            self.spawn {
                guard let next = await self.recheckSession() else { return }
                self.scheduleSessionCheck(at: next)
            }
        }
    }

    /// Re-checks the connection's session: closes with 4403 when it is over, otherwise reads the user's groups again.
    /// A store that cannot answer is asked again a minute later; the connection stays open meanwhile.
    /// - Returns: When to check again, or `nil` once the connection closed (or has no session).
    func recheckSession() async -> Int64? {
        guard let session = state.withLock({ $0.finished ? nil : $0.session?.session }) else { return nil }
        do {
            let next = try await services.callers.standing(of: session)
            if try await services.schemas.runtime(app).usesGroups {
                let groups = try await services.callers.groups(of: session.account.id)
                state.withLock { state in
                    state.caller.groups = groups
                    for id in state.live.keys { state.live[id]?.caller.groups = groups }
                }
            }
            return next
        } catch let error as KizunaError where error.code == .sessionExpired || error.code == .accountDisabled {
            logger.debug("A graphql-transport-ws connection's session ended", metadata: ["connection": "\(id)", "code": "\(error.code)"])
            close(.forbidden, reason: error.code.rawValue)
            return nil
        } catch {
            logger.warning(
                "Re-checking a connection's session failed; trying again in a minute", metadata: ["connection": "\(id)", "error": "\(error)"])
            return EpochMillis.now + 60_000
        }
    }
}
