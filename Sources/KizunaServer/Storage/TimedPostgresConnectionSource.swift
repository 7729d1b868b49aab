@preconcurrency import AsyncKit
import KizunaCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit

/// The pool's PostgreSQL connections, each given ``timeout`` to open, startup handshake included
/// (``PostgresConnection/opened(within:on:what:logger:_:)``).
///
/// PostgresNIO's connect timeout covers only the TCP connect. A handshake with a store that went away and came back
/// (seen through a restarting proxy) can wait for ever, and the pool counts such an attempt against its size until it
/// ends: a few of them and the pool never opens another connection. The change listener had the same hang and opens
/// through the same deadline. An attempt past it fails, so the pool tries again; a connection that opens after all is
/// closed.
struct TimedPostgresConnectionSource: ConnectionPoolSource {
    let base: PostgresConnectionSource
    var timeout: TimeAmount = .seconds(10)

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        PostgresConnection.opened(within: timeout, on: eventLoop, what: "a PostgreSQL connection", logger: logger) {
            base.makeConnection(logger: logger, on: eventLoop)
        }
    }
}

extension PostgresConnection {
    /// The connection `open` makes, or `store_unavailable` once `timeout` has passed without it; one that opens later
    /// is closed. The pool's connections and the change listener's both open through here.
    static func opened(
        within timeout: TimeAmount, on eventLoop: any EventLoop, what: String, logger: Logger, _ open: () -> EventLoopFuture<PostgresConnection>
    ) -> EventLoopFuture<PostgresConnection> {
        let promise = eventLoop.makePromise(of: PostgresConnection.self)
        // Who has the outcome: nobody yet (nil), the deadline (false), or the attempt (true).
        let decided = NIOLockedValueBox<Bool?>(nil)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            guard claim(decided, for: false) else { return }
            logger.warning("Opening \(what) took longer than the deadline; trying again", metadata: ["timeout": "\(timeout)"])
            promise.fail(KizunaError(.storeUnavailable, "Opening \(what) took longer than \(Duration.nanoseconds(timeout.nanoseconds))."))
        }
        open().whenComplete { result in
            deadline.cancel()
            let mine = claim(decided, for: true)
            switch (result, mine) {
            case (.success(let connection), true): promise.succeed(connection)
            case (.success(let connection), false): connection.close().whenComplete { _ in }
            case (.failure(let error), true): promise.fail(error)
            case (.failure, false): break
            }
        }
        return promise.futureResult
    }

    /// Records who decided, if nobody has: whether `side` did.
    private static func claim(_ decided: NIOLockedValueBox<Bool?>, for side: Bool) -> Bool {
        decided.withLockedValue { state in
            guard state == nil else { return false }
            state = side
            return true
        }
    }
}
