import KizunaCore
import Logging
import Synchronization

extension GraphQLWSConnection {
    /// The connection's change dispatcher: one feed subscription, opened when the connection opens, whose changes of
    /// this app are worked through in order with the subscription starts, so that each start knows exactly which
    /// changes it has already been handed.
    ///
    /// `position` is the seq of the last change dispatched (at first, the feed subscription's position). A subscription
    /// that starts then is replayed `(since, position]` from the log, as ``EventStreamController`` replays an event
    /// stream after its `Last-Event-ID`, and hears every change after `position` live: nothing missed, nothing twice.
    ///
    /// The feed hands changes straight to the connection's own bounded queue (``ChangeFeed/withSink(accept:ended:_:)``),
    /// with no task in between: an idle connection costs the reader, the timers and this dispatcher, nothing more.
    func deliverChanges() async {
        defer { feedOpenedSignal.finish() }
        do {
            try await services.feed.withSink(accept: { change in self.accept(change) }, ended: { self.feedEnded() }) { position in
                feedOpenedSignal.finish()
                var position = position
                for await event in self.events {
                    switch event {
                    case .start(let subscriber):
                        let after = position
                        await Self.shortLived { await self.begin(subscriber, after: after) }
                    case .change(let change):
                        await Self.shortLived { await self.dispatch(change) }
                        position = change.seq
                    case .sessionsEnded:
                        await Self.shortLived { _ = await self.recheckSession() }
                    }
                }
            }
        } catch {
            logger.debug("The change dispatcher stopped", metadata: ["connection": "\(id)", "error": "\(error)"])
        }
    }

    /// Takes a change from the feed (under its lock: quick, never waiting): this app's data changes, and sessions of
    /// the connection's user ending, go to the dispatcher's queue. When it holds ``GraphQLWSSettings/maxPendingChanges``
    /// (its client reads too slowly), the connection closes with 4410 and the client resumes from its last seq.
    private func accept(_ change: ChangeRecord) -> Bool {
        let event: FeedEvent
        if change.kind == DataRuntime.changeKind && change.entityId == app {
            event = .change(change)
        } else if change.kind == SessionEvents.kind, change.entityId == state.withLock({ $0.session?.account.id }) {
            event = .sessionsEnded
        } else {
            return true
        }
        if case .dropped = eventQueue.yield(event) { close(.fellBehind) }
        return true  // the connection, not the feed, decides what falling behind costs
    }

    /// The feed stopped (the server is shutting down, or it could no longer read the log): the client resumes from its
    /// last seq, here or elsewhere.
    private func feedEnded() {
        close(.fellBehind)
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
                    let oldest = try await services.feed.oldestKept()
                    guard let oldest, since >= oldest - 1 else {
                        await perform(state.withLock { $0.machine.subscriptionFailed(subscriber.subscription, errors: [Self.resumeExpired(since)]) })
                        return
                    }
                    let missed = try await services.feed.replay(after: since, through: position, kinds: [DataRuntime.changeKind], entityId: app)
                    for change in missed { try await deliver(change, to: [subscriber]) }
                } catch {
                    await couldNotDeliver(error)
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

    /// Delivers one live change to every subscription that has not seen it yet.
    private func dispatch(_ change: ChangeRecord) async {
        let subscribers = state.withLock { state in
            state.live.values.filter { $0.lastSeq < change.seq }.sorted { $0.subscription.serial < $1.subscription.serial }
        }
        guard !subscribers.isEmpty else { return }
        do {
            try await deliver(change, to: subscribers)
        } catch {
            await couldNotDeliver(error)
            return
        }
        state.withLock { state in
            for subscriber in subscribers where state.live[subscriber.subscription.id]?.subscription == subscriber.subscription {
                state.live[subscriber.subscription.id]?.lastSeq = change.seq
            }
        }
    }

    /// Sends `change` to those of `subscribers` it is for, as ``SubscriptionMatcher`` decides: their model and kind of
    /// change, their filter, and the read rules. Subscriptions checked on different schema versions are each matched on
    /// their own.
    private func deliver(_ change: ChangeRecord, to subscribers: [LiveSubscription]) async throws {
        let byVersion = Dictionary(grouping: subscribers) { $0.runtime.version }
        for version in byVersion.keys.sorted() {
            let group = byVersion[version] ?? []
            guard let runtime = group.first?.runtime else { continue }
            let matcher = SubscriptionMatcher(runtime: runtime, logger: logger)
            let targets = group.map { SubscriptionMatcher.Subscriber(key: $0.subscription, caller: $0.caller, request: $0.request) }
            for delivery in try await matcher.deliveries(of: change, to: targets) {
                await perform(state.withLock { $0.machine.next(delivery.key, payload: delivery.payload.objectValue ?? [:]) })
            }
        }
    }

    /// A change could not be delivered (reading the log, or the records a `via` rule follows, failed): the client is
    /// told to resume from its last seq (4410), which replays the change, rather than silently miss it.
    private func couldNotDeliver(_ error: any Error) async {
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
