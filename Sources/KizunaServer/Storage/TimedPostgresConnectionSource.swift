@preconcurrency import AsyncKit
import KizunaCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit

/// The pool's PostgreSQL connections, each given ``timeout`` to open, startup handshake included.
///
/// PostgresNIO's connect timeout covers only the TCP connect. A handshake with a store that went away and came back
/// (seen through a restarting proxy) can wait for ever, and the pool counts such an attempt against its size until it
/// ends: a few of them and the pool never opens another connection. The change listener had the same hang and got
/// its own deadline (`ChangeFeed.connect`); this is the pool's. An attempt past the deadline fails, so the pool tries
/// again, and a connection that opens after all is closed.
struct TimedPostgresConnectionSource: ConnectionPoolSource {
    let base: PostgresConnectionSource
    var timeout: TimeAmount = .seconds(10)

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        let promise = eventLoop.makePromise(of: PostgresConnection.self)
        // Who has the outcome: nobody yet (nil), the deadline (false), or the attempt (true).
        let decided = NIOLockedValueBox<Bool?>(nil)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            guard Self.claim(decided, for: false) else { return }
            logger.warning("Opening a PostgreSQL connection took longer than the deadline; trying again", metadata: ["timeout": "\(timeout)"])
            promise.fail(
                KizunaError(.storeUnavailable, "Opening a PostgreSQL connection took longer than \(Duration.nanoseconds(timeout.nanoseconds))."))
        }
        base.makeConnection(logger: logger, on: eventLoop).whenComplete { result in
            deadline.cancel()
            let mine = Self.claim(decided, for: true)
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
