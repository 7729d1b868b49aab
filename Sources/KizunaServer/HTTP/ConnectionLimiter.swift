import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Caps the connections open at once: a connection past the cap is closed as soon as it is accepted, with a warning
/// in the log (at most one every ten seconds), so clients that hold sockets open cannot use up the process's file
/// descriptors. Stalled and idle connections are closed by the HTTP server's idle timeout
/// (``KizunaConfiguration/idleTimeout``); together they keep slow clients from starving the rest.
final class ConnectionLimiter: Sendable {
    let limit: Int
    /// How long a connection may stay open once the server starts shutting down: a request in flight finishes, a
    /// WebSocket's close handshake completes, and then the socket is closed whatever its peer does, so a peer that
    /// never answers the close frame (or a stream that never ends) cannot hold the shutdown forever
    /// (``KizunaConfiguration/shutdownGrace``).
    let shutdownGrace: TimeAmount
    private let logger: Logger
    private let open = Atomic<Int>(0)
    private let lastWarning = Mutex<ContinuousClock.Instant?>(nil)

    init(limit: Int, shutdownGrace: Duration = .seconds(10), logger: Logger) {
        self.limit = limit
        self.shutdownGrace = TimeAmount(shutdownGrace)
        self.logger = logger
    }

    /// Connections open now.
    var current: Int { open.load(ordering: .relaxed) }

    /// A handler for one new connection's pipeline.
    func handler() -> Handler { Handler(limiter: self) }

    fileprivate func opened() -> Bool {
        let count = open.add(1, ordering: .relaxed).newValue
        guard count > limit else { return true }
        let now = ContinuousClock.now
        let warn = lastWarning.withLock { last in
            guard last.map({ now - $0 >= .seconds(10) }) ?? true else { return false }
            last = now
            return true
        }
        if warn {
            logger.warning(
                "Connection limit reached; closing new connections until some finish", metadata: ["limit": "\(limit)", "open": "\(count - 1)"])
        }
        return false
    }

    fileprivate func closed() {
        open.subtract(1, ordering: .relaxed)
    }

    /// Counts its connection while it is open, closes it at once when it is one too many, and closes it
    /// ``shutdownGrace`` after the server starts shutting down (NIO's quiesce event, which the server sends every
    /// connection, reaches this handler first: it is the pipeline's head).
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        private let limiter: ConnectionLimiter
        private var counted = false
        private var deadline: Scheduled<Void>?

        fileprivate init(limiter: ConnectionLimiter) {
            self.limiter = limiter
        }

        func handlerAdded(context: ChannelHandlerContext) {
            counted = true
            if !limiter.opened() { context.close(promise: nil) }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if counted { limiter.closed() }
            counted = false
            deadline?.cancel()
            deadline = nil
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is ChannelShouldQuiesceEvent, deadline == nil {
                let channel = context.channel
                deadline = context.eventLoop.scheduleTask(in: limiter.shutdownGrace) { channel.close(promise: nil) }
            }
            context.fireUserInboundEventTriggered(event)
        }
    }
}

@available(*, unavailable)
extension ConnectionLimiter.Handler: Sendable {}

/// The process's limit on open files, which bounds how many connections it can hold.
package enum OpenFileLimit {
    /// Raises the soft limit on open files to the hard limit (allowed without privileges) and returns the limit now
    /// in force, or `nil` where it cannot be read. Debian's default soft limit, 1024, would run out long before the
    /// default connection cap of 10,000.
    package static func raise() -> Int? {
        #if os(Linux)
            var limit = rlimit()
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
            guard getrlimit(resource, &limit) == 0 else { return nil }
            if limit.rlim_cur < limit.rlim_max {
                var raised = limit
                raised.rlim_cur = limit.rlim_max
                if setrlimit(resource, &raised) == 0 { limit = raised }
            }
            return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
        #else
            return nil
        #endif
    }

    /// The connection cap that leaves `reserve` descriptors for the store, files and logs under `limit`.
    package static func connectionCap(_ requested: Int, limit: Int, reserve: Int = 256) -> Int {
        min(requested, max(16, limit - reserve))
    }
}
