import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaTestSupport
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import KizunaServer

/// ``DeviceByteLane`` answers device requests from the connection's bytes, in front of NIO's parser: it must read only
/// what it reads as the parser would, hand everything else to the parser whole and in order, and leave the idle timeout
/// and the server's shutdown as they were. (That its answers are the routes' byte for byte: ``DeviceFastLaneTests``.)
@Suite("Device byte lane")
struct DeviceByteLaneTests {
    static func scan(_ text: String, maxLength: Int = DeviceByteLane.maxHead) -> RawRequestHead.Scan {
        Array(text.utf8).withUnsafeBytes { RawRequestHead.scan($0, maxLength: maxLength) }
    }

    static func head(_ text: String) -> RawRequestHead? {
        if case .head(let head) = scan(text) { return head }
        return nil
    }

    static func isUnframed(_ text: String, maxLength: Int = DeviceByteLane.maxHead) -> Bool {
        if case .unframed = scan(text, maxLength: maxLength) { return true }
        return false
    }

    static func isIncomplete(_ text: String) -> Bool {
        if case .incomplete = scan(text) { return true }
        return false
    }

    @Test func headsAreReadAsTheParserReadsThem() throws {
        let fetch = "POST /v1/apps/shop/config:fetch HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\nIf-None-Match: \"1-a\"\r\n\r\n"
        let head = try #require(Self.head(fetch + "{\"x\":1}"))
        #expect(head.headLength == fetch.utf8.count && head.contentLength == 12 && head.ifNoneMatch == "\"1-a\"")
        #expect(head.device?.endpoint == .config && head.device?.app == "shop" && head.device?.path == "/v1/apps/shop/config:fetch")
        // Names without regard to case, values without their spaces, repeated If-None-Match lines joined.
        let fields = "content-LENGTH:3 \r\nIF-NONE-MATCH: \"1\"\r\nIf-None-Match:\t\"2\"\r\nConnection: Keep-Alive\r\n"
        let gate = try #require(Self.head("POST /v1/apps/a-b/gate:check HTTP/1.1\r\n\(fields)\r\n"))
        #expect(gate.contentLength == 3 && gate.device?.endpoint == .gate && gate.device?.app == "a-b" && gate.ifNoneMatch == "\"1\", \"2\"")
        // Other requests are framed, not answered.
        for other in [
            "GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n",
            "post /v1/apps/shop/config:fetch HTTP/1.1\r\n\r\n",
            "POST /v1/apps/shop/config:fetch?debug=1 HTTP/1.1\r\n\r\n",
            "POST /v1/apps/sh%6Fp/config:fetch HTTP/1.1\r\n\r\n",
            "POST /v1/apps/shop/config:fetch/ HTTP/1.1\r\n\r\n",
            "POST /v1/apps//config:fetch HTTP/1.1\r\n\r\n",
            "POST /v1/apps/shop/config:fetch HTTP/1.1\r\nOrigin: https://example.com\r\n\r\n",
        ] {
            let head = try #require(Self.head(other), "\(other)")
            #expect(head.device == nil && head.contentLength == 0, "\(other)")
        }
        // Not all there yet.
        for part in ["", "POST /v1/apps/shop/config:fetch HTTP/1.1", "POST / HTTP/1.1\r\nHost: a\r\n", "POST / HTTP/1.1\r\nHost: a\r\n\r"] {
            #expect(Self.isIncomplete(part), "\(part)")
        }
    }

    @Test func anythingUncertainIsLeftToTheParser() {
        for text in [
            "POST / HTTP/1.0\r\n\r\n", "POST / HTTP/2.0\r\n\r\n", "POST /\r\n\r\n", "POST  / HTTP/1.1\r\n\r\n", "\r\nPOST / HTTP/1.1\r\n\r\n",
            "POST / HTTP/1.1\nHost: a\r\n\r\n", "POST / HTTP/1.1\r\nHost: a\n\r\n", "POST / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",
            "POST / HTTP/1.1\r\nHost : a\r\n\r\n", "POST / HTTP/1.1\r\n: a\r\n\r\n", "POST / HTTP/1.1\r\nHost a\r\n\r\n",
            "POST / HTTP/1.1\r\nX-A: a\u{7F}\r\n\r\n", "POST / HTTP/1.1\r\nX-A: a\u{0}b\r\n\r\n", "PO(ST / HTTP/1.1\r\n\r\n",
            "POST /a\u{7F} HTTP/1.1\r\n\r\n", "CONNECT a:443 HTTP/1.1\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 1 1\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 9999999999999999\r\n\r\n",
            "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", "POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "POST / HTTP/1.1\r\nConnection: close\r\n\r\n", "POST / HTTP/1.1\r\nConnection: keep-alive, TE\r\n\r\n",
        ] {
            #expect(Self.isUnframed(text), "\(text.debugDescription)")
        }
        // A head longer than the lane reads, whole or not.
        let long = "GET / HTTP/1.1\r\nX-A: \(String(repeating: "a", count: 100))"
        #expect(Self.isUnframed(long + "\r\n\r\n", maxLength: 64) && Self.isUnframed(long, maxLength: 64))
        #expect(Self.head(long + "\r\n\r\n")?.headLength == long.utf8.count + 4)
        // More fields than the lane reads (each within Hummingbird's limits, which the lane must not outdo).
        let fields = (0...RawRequestHead.maxFields).map { "X-\($0): a\r\n" }
        #expect(Self.isUnframed("GET / HTTP/1.1\r\n" + fields.joined() + "\r\n"))
        #expect(Self.head("GET / HTTP/1.1\r\n" + fields.dropLast().joined() + "\r\n") != nil)
    }

    /// A connection whose first request (which the parser takes) has been answered, to a server with the fast lane
    /// tests' template published and cached.
    struct Warm {
        /// The fetch's answer body.
        let answer: String
        let lane: DeviceFastLane
        let connection: RawConnection
        /// The fetch, as a client on a keep-alive connection sends it.
        let fetch = DeviceFastLaneTests.post("/v1/apps/shop/config:fetch", DeviceFastLaneTests.device)

        init(_ server: TestServer) async throws {
            try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            _ = try await UpdateGateTests.publish(server, "config", DeviceFastLaneTests.template)
            answer = try await server.send(.post, "/v1/apps/shop/config:fetch", json: DeviceFastLaneTests.device, authorized: false).text
            lane = try #require(server.deviceLane)
            connection = try await RawConnection.open(port: try #require(server.client.port))
            try await connection.send(fetch)
            #expect(try await connection.readResponse().hasSuffix(answer))
        }
    }

    @Test func requestsInPiecesAndRequestsPassedOnKeepTheirOrder() async throws {
        try await withTestServer { server in
            // The first request has gone to the parser, as any connection's does.
            let start = try await Warm(server)
            let (warm, lane, connection, fetch) = (start.answer, start.lane, start.connection, start.fetch)
            // A fetch in pieces, cut inside the request line, a header and the body.
            let before = lane.answeredFromBytes.value
            let bytes = Array(fetch.utf8)
            for range in [0..<7, 7..<60, 60..<(bytes.count - 5), (bytes.count - 5)..<bytes.count] {
                try await connection.send(bytes: Array(bytes[range]))
            }
            #expect(try await connection.readResponse().hasSuffix(warm))
            #expect(lane.answeredFromBytes.value == before + 1)
            // At once: a fetch, a request with a body for another route (passed on whole), a fetch behind it (passed
            // on, since the answer in front is not written yet), a request in pieces of its own.
            let wrong = "POST /v1/admin/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 7\r\n\r\n{\"id\":1"
            try await connection.send(fetch + wrong + fetch + "GET /health/li")
            try await connection.send("ve HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let received = try await connection.readBytes { DeviceFastLaneTests.split(String(decoding: $0, as: UTF8.self)).count == 4 }
            let answers = DeviceFastLaneTests.split(String(decoding: received, as: UTF8.self))
            try #require(answers.count == 4)
            #expect(answers[0].body == warm && answers[2].body == warm)
            #expect(answers[1].head.hasPrefix("HTTP/1.1 401") && answers[3].head.hasPrefix("HTTP/1.1 200"))
            #expect(answers[3].body.contains("\"status\""))
            #expect(lane.answeredFromBytes.value == before + 2)
            // Once the answers are written, the lane answers again.
            try await connection.send(fetch)
            #expect(try await connection.readResponse().hasSuffix(warm))
            #expect(lane.answeredFromBytes.value == before + 3)
            await connection.close()
        }
    }

    /// The held-bytes path itself, with no TCP to decide how the bytes arrive: in an `EmbeddedChannel`, a fetch fed to
    /// the lane seven bytes at a time is held until it is whole and answered then, with nothing passed to the parser; a
    /// request for another route fed the same way is passed on whole once its head is; a fetch behind it is passed on
    /// too, until its answer has ended.
    @Test func aRequestInPiecesIsHeldUntilItIsWhole() async throws {
        try await withTestServer { server in
            let start = try await Warm(server)
            let lane = start.lane
            let bytes = DeviceByteLane(lane: lane)
            // Linked as the installer links it at a connection's first request (the lane answers only then).
            let state = ConnectionState(idleTimeout: nil, logger: Logger(label: "test"))
            DeviceByteLane.link(bytes, state)
            let channel = EmbeddedChannel(handler: bytes)
            func feed(_ text: String) throws {
                let request = Array(text.utf8)
                for piece in stride(from: 0, to: request.count, by: 7) {
                    #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "answered before the request was whole")
                    #expect(try channel.readInbound(as: ByteBuffer.self) == nil, "passed on before the request was whole")
                    try channel.writeInbound(ByteBuffer(bytes: request[piece..<min(piece + 7, request.count)]))
                }
            }
            let before = lane.answeredFromBytes.value
            try feed(start.fetch)
            let answer = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(String(buffer: answer).hasPrefix("HTTP/1.1 200 OK\r\n") && String(buffer: answer).hasSuffix(start.answer))
            #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
            #expect(lane.answeredFromBytes.value == before + 1)

            let other = "GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            try feed(other)
            #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == other)
            // Its answer has not ended: a fetch now goes the same way, behind it.
            try channel.writeInbound(ByteBuffer(string: start.fetch))
            #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == start.fetch)
            #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
            // Both answers ended: the lane answers again.
            bytes.answerEnded()
            bytes.answerEnded()
            try channel.writeInbound(ByteBuffer(string: start.fetch))
            #expect(try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0).hasSuffix(start.answer) } == true)
            #expect(lane.answeredFromBytes.value == before + 2)
            #expect(try channel.finish().isClean)
            await start.connection.close()
        }
    }

    /// The lane and the state handler hold each other strongly (a weak link slowed every retain of both); a
    /// connection's end, or the lane's retiring, must break the links, or every connection's pair would outlive it.
    @Test func theLaneAndTheStateLetGoOfEachOther() async throws {
        try await withTestServer { server in
            let start = try await Warm(server)
            weak var weakLane: DeviceByteLane?
            weak var weakState: ConnectionState?
            do {
                let bytes = DeviceByteLane(lane: start.lane)
                let state = ConnectionState(idleTimeout: nil, logger: Logger(label: "test"))
                let channel = EmbeddedChannel(handlers: [bytes, state])
                DeviceByteLane.link(bytes, state)
                (weakLane, weakState) = (bytes, state)
                #expect(try channel.finish().isClean)
            }
            #expect(weakLane == nil && weakState == nil, "a closed connection's handlers outlived it")

            let state = ConnectionState(idleTimeout: nil, logger: Logger(label: "test"))
            do {
                let bytes = DeviceByteLane(lane: start.lane)
                let channel = EmbeddedChannel(handler: bytes)
                DeviceByteLane.link(bytes, state)
                weakLane = bytes
                // A chunked request is one the lane does not frame: it hands the connection to the parser and leaves.
                try channel.writeInbound(ByteBuffer(string: "POST /v1/apps/shop/config:fetch HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"))
                #expect(try channel.readInbound(as: ByteBuffer.self) != nil)
                #expect(state.byteLane == nil)
                #expect(try channel.finish().isClean)
            }
            #expect(weakLane == nil, "a retired lane outlived its connection")
            await start.connection.close()
        }
    }

    @Test func aRequestTheLaneCannotFrameHandsTheConnectionToTheParser() async throws {
        try await withTestServer { server in
            let start = try await Warm(server)
            let (warm, lane, connection, fetch) = (start.answer, start.lane, start.connection, start.fetch)
            // A chunked fetch: the lane behind the parser answers it, and from then on what follows.
            let body = DeviceFastLaneTests.device
            let chunked =
                "POST /v1/apps/shop/config:fetch HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(body.utf8.count, radix: 16) + "\r\n\(body)\r\n0\r\n\r\n"
            let (bytes, all) = (lane.answeredFromBytes.value, lane.answered.value)
            try await connection.send(chunked)
            #expect(try await connection.readResponse().hasSuffix(warm))
            try await connection.send(fetch)
            #expect(try await connection.readResponse().hasSuffix(warm))
            #expect(lane.answeredFromBytes.value == bytes && lane.answered.value == all + 2)
            await connection.close()
        }
    }

    /// Hummingbird's idle timeout counts requests its parser sees; the byte lane's exchanges must count too, and the
    /// timeout must still close the connection once they stop.
    @Test func exchangesInFrontOfTheParserKeepTheConnectionFromIdlingOut() async throws {
        let configure: @Sendable (inout KizunaConfiguration) -> Void = {
            $0.idleTimeout = .seconds(1)
            // One install, as many requests as the loop makes.
            $0.deviceRateLimit = DeviceRateLimit(perMinute: 60_000_000, burst: 1_000_000)
        }
        try await withTestServer(configure: configure) { server in
            let start = try await Warm(server)
            let (warm, lane, connection, fetch) = (start.answer, start.lane, start.connection, start.fetch)
            // Exchanges, one after another, for three times the timeout: none of them through the parser.
            let before = lane.answeredFromBytes.value
            let started = ContinuousClock.now
            var exchanges = 0
            while ContinuousClock.now - started < .seconds(3) {
                try await connection.send(fetch)
                #expect(try await connection.readResponse().hasSuffix(warm))
                exchanges += 1
            }
            #expect(lane.answeredFromBytes.value == before + exchanges)
            // Then quiet: the server closes it, without another word.
            #expect(try await connection.readUntilClosed() == "")
        }
    }

    /// Shuts a server down (idle timeout an hour, shutdown grace `grace`) after `body` has used a connection the lanes
    /// have set up, and returns what the connection read until the server closed it; the test's deadline names the
    /// step should the shutdown hang.
    static func afterShutdown(grace: Duration, _ body: @escaping @Sendable (Warm) async throws -> Void) async throws -> String {
        let read = Mutex("")
        try await withDeadline(.seconds(120)) { step in
            let held = Mutex<RawConnection?>(nil)
            let configure: @Sendable (inout KizunaConfiguration) -> Void = {
                $0.idleTimeout = .seconds(3600)
                $0.shutdownGrace = grace
            }
            try await withTestServer(configure: configure) { server in
                let start = try await Warm(server)
                held.withLock { $0 = start.connection }
                try await body(start)
                step.reached("shutting down")
            }
            step.reached("shut down")
            let rest = try await #require(held.withLock { $0 }).readUntilClosed()
            read.withLock { $0 = rest }
        }
        return read.withLock { $0 }
    }

    /// At shutdown the lane hands what it holds of a request to the parser and the connection is closed as
    /// Hummingbird closes one between requests — at once, not after the idle timeout or the shutdown grace (an hour).
    @Test func theServersShutdownClosesAConnectionTheLaneServes() async throws {
        let rest = try await Self.afterShutdown(grace: .seconds(3600)) { start in
            let before = start.lane.answeredFromBytes.value
            try await start.connection.send(start.fetch)
            #expect(try await start.connection.readResponse().hasSuffix(start.answer))
            #expect(start.lane.answeredFromBytes.value == before + 1)
            try await start.connection.send(String(start.fetch.prefix(40)))  // half a request, held
        }
        #expect(rest == "")
    }

    /// A request that never ends (its body stops coming) on a connection the lanes have set up is cut at the end of
    /// the shutdown grace, so it cannot hold the shutdown: ``ConnectionState`` waits for the answer in flight, and the
    /// limiter's handler at the pipeline's head ends the wait.
    @Test func aRequestThatNeverEndsIsCutAtTheEndOfTheShutdownGrace() async throws {
        let rest = try await Self.afterShutdown(grace: .milliseconds(300)) { start in
            try await start.connection.send(
                "POST /v1/admin/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":")
        }
        #expect(rest == "")
    }
}
