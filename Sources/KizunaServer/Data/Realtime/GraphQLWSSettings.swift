/// How the data API's WebSocket (`graphql-transport-ws`) treats its connections.
package struct GraphQLWSSettings: Sendable {
    /// How long a connection may wait before sending `connection_init`; then it is closed with 4408 (graphql-ws
    /// waits 3 s too).
    package var initTimeout: Duration = .seconds(3)
    /// How often the server sends a `ping`; a connection that sent nothing since the previous one is closed with 4411.
    package var keepAliveInterval: Duration = .seconds(30)
    /// How many changes a connection's subscriptions may have waiting to be sent (its send buffer): a connection
    /// further behind is closed with 4410, to resume from its last seq, rather than slow the others.
    package var maxPendingChanges = 256
    /// How many operations one connection may run at once.
    package var maximumSubscriptions = 100
    /// How long closing a connection may wait for its close frame to go out before the socket is dropped.
    package var closeTimeout: Duration = .seconds(5)

    package init() {}
}
