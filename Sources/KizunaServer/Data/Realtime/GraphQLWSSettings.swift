/// How the data API's WebSocket (`graphql-transport-ws`) treats its connections.
package struct GraphQLWSSettings: Sendable {
    /// How long a connection may wait before sending `connection_init`; then it is closed with 4408 (graphql-ws
    /// waits 3 s too).
    package var initTimeout: Duration = .seconds(3)
    /// How often the server sends a `ping`; a connection that sent nothing since the previous one is closed with 4411.
    package var keepAliveInterval: Duration = .seconds(30)
    /// How many deliveries a connection may be sent while its client is not reading (its send buffer is over NIO's
    /// high watermark), and how many changes it may have queued behind a replay: a connection further behind is
    /// closed with 4410, to resume from its last seq, rather than slow the others or fill the server's memory.
    package var maxPendingChanges = 256
    /// How many operations one connection may run at once.
    package var maximumSubscriptions = 100
    /// How many messages a client may send per second, on average; twice as many may come in a burst. A connection
    /// over it is closed with 4430 (``GraphQLWSCloseCode/tooManyMessages``).
    package var maxMessagesPerSecond = 100
    /// The largest message a client may send, in bytes, however it is split into frames; a larger one closes the
    /// connection with 1009 (``GraphQLWSCloseCode/messageTooBig``). `nil`: the server's body limit.
    package var maxMessageBytes: Int?
    /// How long closing a connection may wait for its close frame to go out before the socket is dropped.
    package var closeTimeout: Duration = .seconds(5)
    /// How many changes the ``SubscriptionHub`` may have waiting before the change feed cuts it off; every connection
    /// is then closed with 4410 to resume by seq, and the hub hears the feed again. Not a flag of `kizuna serve`: a
    /// hub that far behind is a server past what it can deliver, which a larger queue would only hide.
    package var hubBuffer = 8192

    package init() {}
}

/// A token bucket over a connection's incoming messages: `rate` a second on average, `2 × rate` at once.
package struct MessageRateLimit: Sendable {
    package let rate: Int
    private var tokens: Double
    private var last: ContinuousClock.Instant?

    /// A bucket that starts full.
    package init(rate: Int) {
        self.rate = max(1, rate)
        tokens = Double(self.rate * 2)
    }

    /// Takes one message arriving at `now`.
    /// - Returns: `false` when the bucket is empty: the client sent more than the limit lets it.
    package mutating func admit(at now: ContinuousClock.Instant) -> Bool {
        let capacity = Double(rate * 2)
        if let last {
            let elapsed = now - last
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(capacity, tokens + max(0, seconds) * Double(rate))
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
