import Logging
import NIOCore
import Synchronization

/// Caps the connections open at once: a connection past the cap is closed as soon as it is accepted, with a warning
/// in the log (at most one every ten seconds), so clients that hold sockets open cannot use up the process's file
/// descriptors. Stalled and idle connections are closed by the HTTP server's idle timeout
/// (``KizunaConfiguration/idleTimeout``); together they keep slow clients from starving the rest.
final class ConnectionLimiter: Sendable {
    let limit: Int
    private let logger: Logger
    private let open = Atomic<Int>(0)
    private let lastWarning = Mutex<ContinuousClock.Instant?>(nil)

    init(limit: Int, logger: Logger) {
        self.limit = limit
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

    /// Counts its connection while it is open, and closes it at once when it is one too many.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        private let limiter: ConnectionLimiter
        private var counted = false

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
        }
    }
}

@available(*, unavailable)
extension ConnectionLimiter.Handler: Sendable {}
