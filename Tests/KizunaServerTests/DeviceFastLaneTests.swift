import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import Logging
import NIOCore
import Synchronization
import Testing

@testable import KizunaServer

/// `config:fetch` and `gate:check` answered in the channel pipeline (``DeviceFastLane``) must be indistinguishable from
/// the routes' answers — status, headers, body, request log — and every request the lane does not take must still get
/// its route's answer, in order.
@Suite("Device fast lane")
struct DeviceFastLaneTests {
    static let template = DeviceAnswerMemoTests.first
    static let policy = DeviceAnswerMemoTests.firstPolicy
    static let device = DeviceAnswerMemoTests.devices[2]

    /// A POST of `body` to `path`, as a client on a keep-alive connection sends it.
    static func post(_ path: String, _ body: String, headers: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// The answer with what differs by design between two servers replaced: the request id and the date, and the
    /// order of an error body's keys (a dictionary's).
    static func normalized(_ answer: String) throws -> String {
        var text = answer
        if let id = answer.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("x-request-id: ") })?.dropFirst(14) {
            text = text.replacingOccurrences(of: String(id), with: "<id>")
        }
        guard let end = text.range(of: "\r\n\r\n") else { return text }
        var body = String(text[end.upperBound...])
        if body.hasPrefix(#"{"error""#) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            body = String(decoding: try encoder.encode(try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))), as: UTF8.self)
        }
        let head = text[..<end.lowerBound].split(separator: "\r\n").map { $0.lowercased().hasPrefix("date: ") ? "Date: <date>" : String($0) }
        return head.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    /// Publishes the template and the policy, then sends the same requests, one at a time on one keep-alive connection,
    /// and returns the answers normalized, which of them the lane gave, and the request log's lines for the device routes
    /// (message, route and status).
    static func answers(fastLane: Bool) async throws -> (answers: [String], viaLane: [Bool], viaBytes: [Bool], log: [String]) {
        let records = RecordingLogHandler.Records()
        let configure: @Sendable (inout KizunaConfiguration) -> Void = { configuration in
            configuration.deviceFastLane = fastLane
            configuration.logLevel = .info
            configuration.logHandler = { _ in RecordingLogHandler(records: records) }
            // Six requests per install, then 429.
            configuration.deviceRateLimit = DeviceRateLimit(perMinute: 1, burst: 6)
        }
        let result = Mutex<(answers: [String], viaLane: [Bool], viaBytes: [Bool])>(([], [], []))
        try await withTestServer(configure: configure) { server in
            #expect((server.deviceLane != nil) == fastLane)
            try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            _ = try await UpdateGateTests.publish(server, "config", template)
            _ = try await UpdateGateTests.publish(server, "gate", policy)
            let port = try #require(server.client.port)
            let connection = try await RawConnection.open(port: port)
            var answers: [String] = []
            var viaLane: [Bool] = []
            var viaBytes: [Bool] = []
            func exchange(_ request: String, on connection: RawConnection? = nil) async throws {
                let before = server.deviceLane?.answered.value ?? 0
                let beforeBytes = server.deviceLane?.answeredFromBytes.value ?? 0
                if let connection {
                    try await connection.send(request)
                    answers.append(try normalized(try await connection.readResponse()))
                } else {
                    answers.append(try normalized(try await RawConnection.exchange(port: port, request)))
                }
                viaLane.append((server.deviceLane?.answered.value ?? 0) > before)
                viaBytes.append((server.deviceLane?.answeredFromBytes.value ?? 0) > beforeBytes)
            }
            // Twice each (0-3): the first may read the documents into the cache, the second finds them there.
            for route in ["config:fetch", "gate:check"] {
                try await exchange(post("/v1/apps/shop/\(route)", device), on: connection)
                try await exchange(post("/v1/apps/shop/\(route)", device), on: connection)
            }
            let etag = try #require(answers[1].split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag: ") }?.dropFirst(6))
            let plainDevice = UpdateGateTests.device("3.10.0", installId: "install-plain")
            let escaped = plainDevice.replacingOccurrences(of: "en-US", with: #"en\u002DUS"#)
            for request in [
                post("/v1/apps/shop/config:fetch", device, headers: "If-None-Match: \(etag)\r\n"),  // 4: 304
                post("/v1/apps/shop/config:fetch", device, headers: "If-None-Match: \"1-0\", \(etag)\r\n"),  // 5: 304
                post("/v1/apps/shop/config:fetch", plainDevice),  // 6
                post("/v1/apps/shop/config:fetch?debug=1", plainDevice),  // 7: a query
                post("/v1/apps/sh%6Fp/config:fetch", plainDevice),  // 8: percent-encoded
                post("/v1/apps/shop/config:fetch", escaped),  // 9: not the plain shape, JSONDecoder's way
                post("/v1/apps/shop/config:fetch", #"{"appVersion":3}"#),  // 10: wrong, the route explains
                post("/v1/apps/none/config:fetch", plainDevice),  // 11: no such app
                post("/v1/apps/shop/gate:check", plainDevice, headers: "Origin: https://example.com\r\n"),  // 12
                post("/v1/apps/shop/gate:check", plainDevice),  // 13: the install's sixth, the last within the burst
                post("/v1/apps/shop/gate:check", plainDevice),  // 14: 429 with Retry-After
                post("/v1/apps/shop/gate:check/", plainDevice),  // 15: another route
            ] {
                try await exchange(request, on: connection)
            }
            await connection.close()
            // 16: a client that closes after its request gets the same answer, and `Connection: close`.
            try await exchange(post("/v1/apps/shop/config:fetch", DeviceAnswerMemoTests.devices[3], headers: "Connection: close\r\n"))
            result.withLock { [answers, viaLane, viaBytes] in $0 = (answers, viaLane, viaBytes) }
        }
        let (answers, viaLane, viaBytes) = result.withLock { $0 }
        // The line's message with the metadata that does not differ by design (the route names the metrics too).
        let log = records.events(at: .info).filter { $0.message.hasPrefix("POST /v1/apps/") }.map { event in
            "\(event.message) route=\(event.metadata["http.route"]?.description ?? "-") status=\(event.metadata["http.status"]?.description ?? "-")"
        }
        return (answers, viaLane, viaBytes, log)
    }

    @Test func answersAreTheRoutesAnswersByteForByte() async throws {
        let lane = try await Self.answers(fastLane: true)
        let routes = try await Self.answers(fastLane: false)
        try #require(lane.answers.count == 17 && routes.answers.count == 17)
        for (index, (fast, slow)) in zip(lane.answers, routes.answers).enumerated() {
            #expect(fast == slow, "request \(index)")
        }
        #expect(lane.log == routes.log && lane.log.count == 17)
        #expect(lane.answers[4].hasPrefix("HTTP/1.1 304") && lane.answers[5].hasPrefix("HTTP/1.1 304"))
        #expect(lane.answers[14].hasPrefix("HTTP/1.1 429") && lane.answers[14].contains("Retry-After: "))
        #expect(lane.answers[16].contains("Connection: close"))
        // The lane answered what it can and passed on everything else.
        #expect([1, 3, 4, 5, 6, 13].allSatisfy { lane.viaLane[$0] }, "\(lane.viaLane)")
        #expect([7, 8, 9, 10, 11, 12, 14, 15, 16].allSatisfy { !lane.viaLane[$0] }, "\(lane.viaLane)")
        #expect(!routes.viaLane.contains(true))
        // From the connection's second request on, in front of the parser (``DeviceByteLane``); its first request goes
        // to the parser, where the lane behind it answers.
        #expect(lane.viaBytes == lane.viaLane.enumerated().map { $0.offset != 0 && $0.element }, "\(lane.viaBytes)")
    }

    @Test func answersKeepTheOrderOfPipelinedRequests() async throws {
        try await withTestServer { server in
            try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            _ = try await UpdateGateTests.publish(server, "config", Self.template)
            let warm = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device, authorized: false)
            let connection = try await RawConnection.open(port: try #require(server.client.port))
            // The app's record goes its route (the store); the fetches behind it must not overtake it.
            let fetch = Self.post("/v1/apps/shop/config:fetch", Self.device)
            try await connection.send("GET /v1/apps/shop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + fetch + fetch)
            let bytes = try await connection.readBytes { Self.split(String(decoding: $0, as: UTF8.self)).count == 3 }
            let answers = Self.split(String(decoding: bytes, as: UTF8.self))
            try #require(answers.count == 3)
            #expect(answers[0].body.contains(#""bundleId":"com.example.shop""#))
            #expect(answers[1].body == warm.text && answers[2].body == warm.text)
            // The lane is on this connection: with nothing in front of it, the same fetch is its to answer.
            let lane = try #require(server.deviceLane)
            let before = lane.answered.value
            try await connection.send(fetch)
            #expect(try await connection.readResponse().hasSuffix(warm.text))
            #expect(lane.answered.value == before + 1)
            await connection.close()
        }
    }

    @Test func datesAreHTTPDates() {
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(1_795_729_250) == "Thu, 26 Nov 2026 21:40:50 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    /// The complete answers in `text` (heads with `Content-Length`), in order.
    static func split(_ text: String) -> [(head: String, body: String)] {
        var answers: [(head: String, body: String)] = []
        var rest = Substring(text)
        while let end = rest.range(of: "\r\n\r\n") {
            let head = rest[..<end.lowerBound]
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
            let body = rest[end.upperBound...].utf8.prefix(length)
            guard body.count == length else { break }
            answers.append((String(head), String(Substring(body))))
            rest = rest[body.endIndex...]
        }
        return answers
    }
}
