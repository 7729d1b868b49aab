/// The change feed's fan-out decisions, without I/O: when start waiters are released, who hears a change, who is cut
/// off, and who is finished when the feed stops.
///
/// ``ChangeFeed`` keeps the machine behind its lock and performs each ``Action`` it returns; the machine only holds
/// the subscribers and waiters it is given (a stream continuation and a checked continuation there, plain values in
/// tests) and never calls them. Modelled on postgres-nio's `ListenStateMachine`.
///
/// The feed's life is starting → running → stopped. While starting, nobody may subscribe: the position of the end of
/// the log is not known yet, so a subscriber first waits (``waitForStart(_:)``) and subscribes once released.
package struct ChangeFeedStateMachine<Subscriber, Waiter> {
    /// What the I/O layer does after an event.
    package enum Action {
        /// Nothing to do.
        case none
        /// Resume these start waiters: the feed started (or stopped before it could), so they may subscribe.
        case resume([Waiter])
        /// The subscriber was added under `id`; it hears of every change after `position`.
        case subscribed(id: Int, position: Int64)
        /// The feed has stopped: finish the new subscriber at once; `position` is where the feed stopped.
        case alreadyStopped(Subscriber, position: Int64)
        /// Yield the change to each of these subscribers, and report a yield that was dropped with
        /// ``ChangeFeedStateMachine/yieldDropped(id:)``.
        case yield([Int: Subscriber])
        /// Finish this subscriber: its buffer was full, so it resumes from the log instead of slowing the others.
        case cut(id: Int, Subscriber)
        /// Finish these subscribers.
        case finish([Int: Subscriber])
    }

    private enum Phase: Sendable {
        case starting
        case running
        case stopped
    }

    private var phase = Phase.starting
    /// The seq of the last change delivered (0 for an empty log): a new subscriber hears of changes after it.
    package private(set) var position: Int64 = 0
    private var waiters: [Waiter] = []
    private var subscribers: [Int: Subscriber] = [:]
    private var nextID = 0

    /// A machine for a feed that has not found the end of the log yet.
    package init() {}

    /// A subscriber asks to wait until the feed has found the end of the log.
    ///
    /// - Returns: ``Action/none`` while the feed is starting (the waiter is kept for ``start(position:)``), otherwise
    ///   ``Action/resume(_:)`` with the waiter.
    package mutating func waitForStart(_ waiter: Waiter) -> Action {
        switch phase {
        case .starting:
            waiters.append(waiter)
            return .none
        case .running, .stopped:
            return .resume([waiter])
        }
    }

    /// The feed found the end of the log at `position`.
    ///
    /// - Returns: ``Action/resume(_:)`` with every waiter, or ``Action/none`` if the feed had already started or stopped.
    package mutating func start(position: Int64) -> Action {
        guard phase == .starting else { return .none }
        phase = .running
        self.position = position
        defer { waiters = [] }
        return .resume(waiters)
    }

    /// Adds `subscriber`, which hears of every change after the current position.
    ///
    /// Call it only once ``waitForStart(_:)`` released the caller: before the start there is no position to give.
    ///
    /// - Returns: ``Action/subscribed(id:position:)``, or ``Action/alreadyStopped(_:position:)`` after ``stop()``.
    package mutating func subscribe(_ subscriber: Subscriber) -> Action {
        switch phase {
        case .starting:
            preconditionFailure("A change subscriber must wait for the feed to start before it subscribes")
        case .running:
            let id = nextID
            nextID += 1
            subscribers[id] = subscriber
            return .subscribed(id: id, position: position)
        case .stopped:
            return .alreadyStopped(subscriber, position: position)
        }
    }

    /// The feed read the change `seq` from the log; observers have already seen it.
    ///
    /// - Returns: ``Action/yield(_:)`` with every subscriber (possibly none) while running, otherwise ``Action/none``.
    package mutating func deliver(seq: Int64) -> Action {
        guard phase == .running else { return .none }
        position = seq
        return .yield(subscribers)
    }

    /// A yield to subscriber `id` was dropped because its buffer was full.
    ///
    /// - Returns: ``Action/cut(id:_:)`` with the subscriber, which hears of nothing more, or ``Action/none`` if it
    ///   was already gone.
    package mutating func yieldDropped(id: Int) -> Action {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return .none }
        return .cut(id: id, subscriber)
    }

    /// Subscriber `id` ends: its scope ended or it stopped reading its stream.
    ///
    /// - Returns: ``Action/finish(_:)`` with the subscriber, or ``Action/none`` if it was already gone.
    package mutating func unsubscribe(id: Int) -> Action {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return .none }
        return .finish([id: subscriber])
    }

    /// The feed stops; later subscribers are finished at once.
    ///
    /// - Returns: ``Action/finish(_:)`` with every subscriber when it was running, ``Action/resume(_:)`` with every
    ///   waiter when it had not started (they then subscribe and are finished), or ``Action/none`` when it had
    ///   already stopped.
    package mutating func stop() -> Action {
        switch phase {
        case .starting:
            phase = .stopped
            defer { waiters = [] }
            return .resume(waiters)
        case .running:
            phase = .stopped
            defer { subscribers = [:] }
            return .finish(subscribers)
        case .stopped:
            return .none
        }
    }
}

extension ChangeFeedStateMachine: Sendable where Subscriber: Sendable, Waiter: Sendable {}
extension ChangeFeedStateMachine.Action: Sendable where Subscriber: Sendable, Waiter: Sendable {}
extension ChangeFeedStateMachine.Action: Equatable where Subscriber: Equatable, Waiter: Equatable {}
