import Logging

extension GraphQLWSConnection {
    /// What connections need from the server: one instance, which every connection refers to.
    final class Services: Sendable {
        let schemas: LiveDataSchemas
        let callers: DataCallers
        let executor: GraphQLExecutor
        let feed: ChangeFeed
        let hub: SubscriptionHub
        let settings: GraphQLWSSettings
        /// The largest message a client may send, in bytes (the server's body limit).
        let maxMessageBytes: Int
        /// The server's logger.
        let logger: Logger

        init(
            schemas: LiveDataSchemas, callers: DataCallers, executor: GraphQLExecutor, feed: ChangeFeed, hub: SubscriptionHub,
            settings: GraphQLWSSettings, maxMessageBytes: Int, logger: Logger
        ) {
            self.schemas = schemas
            self.callers = callers
            self.executor = executor
            self.feed = feed
            self.hub = hub
            self.settings = settings
            self.maxMessageBytes = maxMessageBytes
            self.logger = logger
        }
    }

    /// The session a connection presented, by reference: most connections have none, and a nil reference takes a word
    /// of every connection's state where the session itself would take nine.
    final class Session: Sendable {
        let session: AuthenticatedSession
        init(_ session: AuthenticatedSession) { self.session = session }
    }
}
