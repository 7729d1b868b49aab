import ArgumentParser
import KizunaServer

/// `kizuna serve`'s settings for the data API's WebSocket (graphql-transport-ws) connections and the change log they
/// resume from: flags, then `KIZUNA_*` variables, then the defaults.
struct RealtimeOptions: ParsableArguments {
    @Option(
        name: .customLong("ws-keep-alive"),
        help: """
            Seconds between the server's pings on a WebSocket; a connection that answers nothing before the next is \
            closed (4411). Env: KIZUNA_WS_KEEP_ALIVE. Default: 30.
            """
    )
    var keepAlive: Int?

    @Option(
        name: .customLong("ws-max-subscriptions"),
        help: "Operations one WebSocket may run at once; one more is refused alone. Env: KIZUNA_WS_MAX_SUBSCRIPTIONS. Default: 100."
    )
    var maxSubscriptions: Int?

    @Option(
        name: .customLong("ws-max-messages-per-second"),
        help: """
            Messages a WebSocket client may send per second on average (twice as many in a burst); more closes the \
            connection (4430). Env: KIZUNA_WS_MAX_MESSAGES_PER_SECOND. Default: 100.
            """
    )
    var maxMessagesPerSecond: Int?

    @Option(
        name: .customLong("ws-max-message-size"),
        help: """
            Largest message a WebSocket client may send, in bytes; a larger one closes the connection (1009). \
            Env: KIZUNA_WS_MAX_MESSAGE_SIZE. Default: --max-body-size.
            """
    )
    var maxMessageSize: Int?

    @Option(
        name: .customLong("ws-max-pending-changes"),
        help: """
            Deliveries a WebSocket may be sent while its client is not reading (its send buffer full), or changes it \
            may have queued behind a replay; a connection further behind is closed (4410) to resume from its last \
            seq. Env: KIZUNA_WS_MAX_PENDING_CHANGES. Default: 256.
            """
    )
    var maxPendingChanges: Int?

    @Option(
        name: .customLong("tombstone-retention-days"),
        help: """
            Days deleted data records are kept for offline clients' syncs; an older sync is told sync_expired. \
            Env: KIZUNA_TOMBSTONE_RETENTION_DAYS. Default: 30.
            """
    )
    var tombstoneRetentionDays: Int?

    @Option(
        name: .customLong("change-retention-days"),
        help: """
            Days the change log keeps a change: how far back a subscription may resume with since. \
            Env: KIZUNA_CHANGE_RETENTION_DAYS. Default: --tombstone-retention-days.
            """
    )
    var changeRetentionDays: Int?

    /// Applies these flags and `environment` to `configuration`.
    /// - Throws: `ValidationError` naming the variable of a value that is not a number or out of range.
    func apply(to configuration: inout KizunaConfiguration, _ environment: Environment) throws {
        var settings = configuration.graphQLWS
        let keepAliveDefault = Int(settings.keepAliveInterval.components.seconds)
        settings.keepAliveInterval = .seconds(try environment.integer(keepAlive, "KIZUNA_WS_KEEP_ALIVE", keepAliveDefault, range: 1...86_400))
        settings.maximumSubscriptions = try environment.integer(
            maxSubscriptions, "KIZUNA_WS_MAX_SUBSCRIPTIONS", settings.maximumSubscriptions, range: 1...10_000)
        settings.maxMessagesPerSecond = try environment.integer(
            maxMessagesPerSecond, "KIZUNA_WS_MAX_MESSAGES_PER_SECOND", settings.maxMessagesPerSecond, range: 1...1_000_000)
        settings.maxMessageBytes = try environment.integer(
            maxMessageSize, "KIZUNA_WS_MAX_MESSAGE_SIZE", configuration.maxBodySize, range: 1024...(64 << 20))
        settings.maxPendingChanges = try environment.integer(
            maxPendingChanges, "KIZUNA_WS_MAX_PENDING_CHANGES", settings.maxPendingChanges, range: 1...1_000_000)
        configuration.graphQLWS = settings
        configuration.tombstoneRetentionDays = try environment.integer(
            tombstoneRetentionDays, "KIZUNA_TOMBSTONE_RETENTION_DAYS", configuration.tombstoneRetentionDays, range: 1...3650)
        configuration.changeRetentionDays = try environment.integer(
            changeRetentionDays, "KIZUNA_CHANGE_RETENTION_DAYS", configuration.tombstoneRetentionDays, range: 1...3650)
    }
}
