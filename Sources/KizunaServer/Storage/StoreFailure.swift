@preconcurrency import AsyncKit
import KizunaCore
import NIOCore
import NIOPosix
import PostgresNIO
import SQLiteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells a store that cannot be reached — PostgreSQL stopped, restarting or out of connections, the network to it
/// gone, SQLite locked by another process past the busy timeout — from a bug.
///
/// Such a failure is not the server's fault and says nothing about the request: it is answered `503
/// store_unavailable` with `Retry-After` and `/health/ready` answers 503 while it lasts, so a load balancer moves
/// traffic to instances that can reach their store. The pool reconnects by itself once the store is back.
enum StoreFailure {
    /// Seconds a client should wait before retrying.
    static let retryAfter = 5

    /// Whether `error` means the store could not be reached (as opposed to a query that failed).
    static func isUnreachable(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .uncleanShutdown, .poolClosed, .clientClosedConnection:
                return true
            case .server:
                // 08: connection exceptions; 53300: too many connections; 57P01–57P03: shutting down or starting up.
                let state = error.serverInfo?[.sqlState] ?? ""
                return state.hasPrefix("08") || state == "53300" || state.hasPrefix("57P0")
            default:
                return false
            }
        case is NIOConnectionError, is ConnectionPoolTimeoutError, is ConnectionPoolError:
            return true
        case let error as ChannelError:
            switch error {
            case .connectTimeout, .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return true
            default: return false
            }
        case let error as IOError:
            return [ECONNREFUSED, ECONNRESET, ECONNABORTED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT, EPIPE].contains(error.errnoCode)
        case let error as SQLiteError:
            return [.busy, .locked, .busyTimeout, .busyInRecovery, .busyInSnapshot, .cantOpen].contains(error.reason)
        default:
            return false
        }
    }
}

extension StoreFailure {
    /// Whether `error` is PostgreSQL giving up on a lock: `lock_timeout` ran out (55P03) or a deadlock was broken
    /// (40P01). The statement did nothing, and trying again later is the answer.
    static func isLockConflict(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        let state = error.serverInfo?[.sqlState]
        return state == "55P03" || state == "40P01"
    }

    /// What went wrong, in a line an operator can act on: the engine's own message, never a connection string.
    static func summary(_ error: any Error) -> String {
        switch error {
        case let error as KizunaError:
            return error.message
        case let error as PSQLError:
            guard let message = error.serverInfo?[.message] else { return "PostgreSQL: \(error.code)" }
            return "PostgreSQL \(error.serverInfo?[.sqlState] ?? ""): \(message)"
        case let error as SQLiteError:
            return "SQLite: \(error.message)"
        default:
            return String(describing: error)
        }
    }
}
