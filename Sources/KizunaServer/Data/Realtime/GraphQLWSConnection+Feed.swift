import KizunaCore
import Logging
import Synchronization

extension GraphQLWSConnection {
    /// Takes a data change of this app from the hub.
    ///
    /// While the connection has work in order (``State/draining``), the change is queued behind it; past
    /// ``GraphQLWSSettings/maxPendingChanges`` queued changes the connection closes with 4410 and the client resumes
    /// from its last seq. Otherwise the subscriptions that have not seen it are returned, marked as having seen it, for
    /// the hub to match and deliver (``deliver(_:to:logger:)``).
    func collect(_ change: ChangeRecord) -> [LiveSubscription] {
        let limit = services.settings.maxPendingChanges
        let (live, overflow) = state.withLock { state -> ([LiveSubscription], Bool) in
            guard !state.finished else { return ([], false) }
            state.position = change.seq
            if state.draining {
                state.pending.append(.change(change))
                return ([], state.pending.count > limit)
            }
            return (Self.unseen(change, in: &state), false)
        }
        if overflow { close(.fellBehind) }
        return live
    }

    /// The live subscriptions that have not seen `change`, in the order they began, marked as having seen it.
    private static func unseen(_ change: ChangeRecord, in state: inout State) -> [LiveSubscription] {
        var live: [LiveSubscription] = []
        for (id, subscriber) in state.live where subscriber.lastSeq < change.seq {
            live.append(subscriber)
            state.live[id]?.lastSeq = change.seq
        }
        return live.sorted { $0.subscription.serial < $1.subscription.serial }
    }

    /// Sessions of `account` ended: when it is the connection's user, its own session is re-checked, in order with
    /// the changes, before anything more is delivered. While its `connection_init` is being checked, the connection
    /// cannot tell whose session it will be, so any end is noted and the session re-checked once it is known
    /// (``authenticate(_:)``): one signed out during the check is not taken for a live one.
    func sessionsEnded(account: String) {
        let ours = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            if state.machine.state == .authenticating { state.sessionEndedDuringCheck = true }
            return state.session?.session.account.id == account
        }
        if ours { recheckSessionInOrder() }
    }

    /// Re-checks the connection's session before anything more is delivered.
    func recheckSessionInOrder() {
        enqueue { _ in .sessionsEnded }
    }

    /// Queues a subscription that was checked: the drainer replays it from its `since` up to the connection's position
    /// now, and then it hears changes live.
    func enqueueStart(_ subscriber: LiveSubscription) {
        enqueue { position in .start(subscriber, after: position) }
    }

    /// Queues an event for the drainer (made from the connection's position, under its lock), starting it if idle.
    private func enqueue(_ event: @Sendable (Int64) -> FeedEvent) {
        let startDrainer = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.pending.append(event(state.position))
            defer { state.draining = true }
            return !state.draining
        }
        if startDrainer { spawn { await self.drain() } }
    }

    /// Works through the queued events in order, then hands the connection back to the hub.
    private func drain() async {
        while true {
            let events = state.withLock { state -> [FeedEvent] in
                defer { state.pending = [] }
                if state.pending.isEmpty || state.finished { state.draining = false }
                return state.finished ? [] : state.pending
            }
            if events.isEmpty { return }
            for event in events {
                switch event {
                case .start(let subscriber, let after): await begin(subscriber, after: after)
                case .change(let change): await dispatch(change)
                case .sessionsEnded: _ = await recheckSession()
                }
            }
        }
    }

    /// Starts delivering to a subscription: first what it missed after its `since` (when it gave one that is older than
    /// `position`), then, from `position` on, the live changes.
    ///
    /// A `since` older than the log keeps (`oldestKept`) cannot be replayed without a gap: the subscription ends with
    /// an `error` coded `sync_expired`, and the client syncs (`syncX`) before subscribing again without `since`.
    private func begin(_ subscriber: LiveSubscription, after position: Int64) async {
        var subscriber = subscriber
        subscriber.lastSeq = position
        if let since = subscriber.request.since {
            if since < position {
                do {
                    // An empty log (`nil`) has nothing to replay and nothing missing.
                    let oldest = try await services.feed.oldestKept()
                    guard since >= (oldest ?? 1) - 1 else {
                        perform(state.withLock { $0.machine.subscriptionFailed(subscriber.subscription, errors: [Self.resumeExpired(since)]) })
                        return
                    }
                    let missed = try await services.feed.replay(after: since, through: position, kinds: [DataRuntime.changeKind], entityId: app)
                    for change in missed {
                        guard await Self.deliver(change, to: [(self, subscriber)], logger: logger) else { return }
                    }
                } catch {
                    couldNotDeliver(error)
                    return
                }
            } else {
                // The client has seen further than this instance's feed (another instance served it): skip up to it.
                subscriber.lastSeq = since
            }
        }
        // Live only if the client did not complete it meanwhile (its deliveries were dropped then too).
        state.withLock { state in
            guard !state.finished, state.machine.subscriptions.contains(subscriber.subscription) else { return }
            state.live[subscriber.subscription.id] = subscriber
        }
    }

    /// Delivers a queued change to every subscription that has not seen it yet.
    private func dispatch(_ change: ChangeRecord) async {
        let live = state.withLock { Self.unseen(change, in: &$0) }
        await Self.deliver(change, to: live.map { (self, $0) }, logger: logger)
    }

    /// Sends `change` to those of `subscribers` it is for, as ``SubscriptionMatcher`` decides (their model and kind of
    /// change, their filter, the read rules), each matched on the schema version it was checked on; the frames go out
    /// with one closure per event loop. A change that cannot be matched (the `via` records could not be read) closes
    /// each subscriber's connection with 4410, so the client resumes from its last seq rather than silently miss it.
    /// - Returns: `false` when it could not be matched.
    @discardableResult
    static func deliver(_ change: ChangeRecord, to subscribers: [(GraphQLWSConnection, LiveSubscription)], logger: Logger) async -> Bool {
        let byVersion = Dictionary(grouping: subscribers) { $0.1.runtime.version }
        var batch = GraphQLWSFrameBatch()
        defer { batch.send() }
        for version in byVersion.keys.sorted() {
            guard let group = byVersion[version], let runtime = group.first?.1.runtime else { continue }
            let targets = group.map { connection, live in
                SubscriptionMatcher.Subscriber(
                    key: Target(connection: connection, subscription: live.subscription), caller: live.caller, request: live.request)
            }
            do {
                for delivery in try await SubscriptionMatcher(runtime: runtime, logger: logger).deliveries(of: change, to: targets) {
                    delivery.key.connection.next(delivery.key.subscription, payload: delivery.text, into: &batch)
                }
            } catch {
                var closed = Set<ObjectIdentifier>()
                for (connection, _) in subscribers where closed.insert(ObjectIdentifier(connection)).inserted {
                    connection.couldNotDeliver(error)
                }
                return false
            }
        }
        return true
    }

    /// Adds a subscription's `next`, whose payload is the JSON text `payload`, to `batch` if the machine still delivers
    /// to it. A connection whose channel is over its high watermark (the client stopped reading) is allowed
    /// ``GraphQLWSSettings/maxPendingChanges`` such deliveries, and then closed with 4410.
    private func next(_ subscription: Subscription, payload: [UInt8], into batch: inout GraphQLWSFrameBatch) {
        let limit = services.settings.maxPendingChanges
        let writable = writer.isWritable
        let verdict = state.withLock { state -> Bool? in
            guard !state.finished, state.machine.isDelivering(subscription) else { return nil }
            state.unwritableDeliveries = writable ? 0 : state.unwritableDeliveries + 1
            return state.unwritableDeliveries <= limit
        }
        switch verdict {
        case nil: return
        case false?: close(.fellBehind)
        case true?: batch.add(GraphQLWSFrameWriter.next(id: subscription.id, payload: payload), to: writer)
        }
    }

    /// A change could not be delivered (reading the log, or the records a `via` rule follows, failed): the client is
    /// told to resume from its last seq (4410), which replays the change, rather than silently miss it.
    func couldNotDeliver(_ error: any Error) {
        logger.warning("A change could not be delivered; closing so the client resumes", metadata: ["connection": "\(id)", "error": "\(error)"])
        close(.fellBehind, reason: "A change could not be delivered: resume from your last seq")
    }

    /// The error a subscription resuming from before the log's oldest change ends with.
    static func resumeExpired(_ since: Int64) -> [String: JSONValue] {
        [
            "message": .string(
                "since \(since) is older than the changes the server keeps; sync again (syncX) and subscribe without since."),
            "extensions": ["code": .string(KizunaError.Code.syncExpired.rawValue), "field": "since"],
        ]
    }
}
