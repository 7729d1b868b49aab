import AsyncKit
import KizunaCore
import KizunaTestSupport
import NIOCore
import NIOPosix
import PostgresKit
import Testing

@testable import KizunaServer

/// The pool's PostgreSQL connections have a deadline on their whole opening: a store that accepts the TCP connection
/// and never answers the startup handshake (a proxy holding it) fails the attempt, so the pool tries again instead
/// of counting a hung attempt against its size for ever.
@Suite("PostgreSQL pool connections: a deadline on the handshake")
struct TimedPostgresConnectionTests {
    @Test func aHandshakeThatNeverAnswersFailsAtTheDeadline() async throws {
        let proxy = try await TCPProxy.start(to: "127.0.0.1", port: 9, mode: .hold)
        defer { Task { await proxy.cut() } }
        var configuration = try SQLPostgresConfiguration(url: "postgres://kizuna:kizuna@127.0.0.1:\(proxy.port)/kizuna_test?sslmode=disable")
        configuration.coreConfiguration.options.connectTimeout = .seconds(30)
        let source = TimedPostgresConnectionSource(base: PostgresConnectionSource(sqlConfiguration: configuration), timeout: .milliseconds(300))
        let attempt = source.makeConnection(logger: Logger(label: "test"), on: MultiThreadedEventLoopGroup.singleton.any())
        await #expect(throws: KizunaError(.storeUnavailable, "Opening a PostgreSQL connection took longer than 0.3 seconds.")) {
            try await attempt.get()
        }
        #expect(proxy.acceptedCount == 1, "the TCP connection was made; the handshake is what hung")
    }
}
