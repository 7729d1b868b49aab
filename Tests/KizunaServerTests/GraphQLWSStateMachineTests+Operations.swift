import KizunaCore
import Testing

@testable import KizunaServer

/// Operations on a `graphql-transport-ws` connection: subscribe, results, the server's complete and error, the
/// client's complete, id reuse and the per-connection limit.
extension GraphQLWSStateMachineTests {
    static let data: [String: JSONValue] = ["data": ["noteChanged": ["id": "n1"]]]
    static let forbidden: [[String: JSONValue]] = [["message": "Not allowed.", "extensions": ["code": "forbidden"]]]

    static func limitError(maximum: Int) -> [[String: JSONValue]] {
        [
            [
                "message": .string(
                    "This connection already runs \(maximum) operations, the most it may; complete one before starting another."),
                "extensions": [
                    "code": "limit_exceeded", "limit": "subscriptions", "maximum": .number(Double(maximum)),
                    "actual": .number(Double(maximum + 1)),
                ],
            ]
        ]
    }

    static let operationScenarios: [Scenario] = [
        Scenario(
            "subscribe starts the operation; its results go out as next and its end as complete",
            from: handshake,
            [
                (.text(subscribe("1")), start("1", 0), .ready),
                (.next(run("1", 0), data), .send(.next(id: "1", payload: data)), .ready),
                (.next(run("1", 0), data), .send(.next(id: "1", payload: data)), .ready),
                (.finished(run("1", 0)), .send(.complete(id: "1")), .ready),
                (.next(run("1", 0), data), .none, .ready),
                (.finished(run("1", 0)), .none, .ready),
            ]),
        Scenario(
            "subscribe carries the whole payload to start",
            from: handshake,
            [
                (
                    .text(
                        #"{"type":"subscribe","id":"q","payload":{"query":"query Q { a }","operationName":"Q","variables":{"n":1},"extensions":{"since":7}}}"#
                    ),
                    .start(
                        run("q", 0),
                        GraphQLWSSubscribePayload(query: "query Q { a }", variables: ["n": 1], operationName: "Q", extensions: ["since": 7])),
                    .ready
                )
            ]),
        Scenario(
            "an id is free again once its operation completed, and the new run is told apart from the old",
            from: handshake,
            [
                (.text(subscribe("1")), start("1", 0), .ready),
                (.finished(run("1", 0)), .send(.complete(id: "1")), .ready),
                (.text(subscribe("1")), start("1", 1), .ready),
                (.next(run("1", 0), data), .none, .ready),
                (.next(run("1", 1), data), .send(.next(id: "1", payload: data)), .ready),
            ]),
        Scenario(
            "a subscribe with the id of an active operation closes 4409 naming it and stops every operation",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (.text(subscribe("b")), start("b", 1), .ready),
                (
                    .text(subscribe("a")),
                    closing(.subscriberAlreadyExists, "Subscriber for a already exists", stopping: [run("a", 0), run("b", 1)]), .closed
                ),
            ],
            then: afterClose),
        Scenario(
            "a 4409 whose id is too long for a close frame gets the default reason",
            from: handshake,
            [
                (.text(subscribe(String(repeating: "x", count: 100))), start(String(repeating: "x", count: 100), 0), .ready),
                (
                    .text(subscribe(String(repeating: "x", count: 100))),
                    closing(.subscriberAlreadyExists, "Subscriber already exists", stopping: [run(String(repeating: "x", count: 100), 0)]), .closed
                ),
            ]),
        Scenario(
            "the client's complete stops the operation; nothing more is sent for it, and its end is not reported",
            from: handshake,
            [
                (.text(subscribe("1")), start("1", 0), .ready),
                (.text(complete("1")), .stop([run("1", 0)]), .ready),
                (.next(run("1", 0), data), .none, .ready),
                (.finished(run("1", 0)), .none, .ready),
                (.failed(run("1", 0), forbidden), .none, .ready),
                (.text(complete("1")), .none, .ready),
            ]),
        Scenario(
            "an id reused at once after the client's complete starts a new run the old run's end cannot complete",
            from: handshake,
            [
                (.text(subscribe("1")), start("1", 0), .ready),
                (.text(complete("1")), .stop([run("1", 0)]), .ready),
                (.text(subscribe("1")), start("1", 1), .ready),
                (.finished(run("1", 0)), .none, .ready),
                (.next(run("1", 1), data), .send(.next(id: "1", payload: data)), .ready),
                (.text(complete("1")), .stop([run("1", 1)]), .ready),
            ]),
        Scenario(
            "complete for an id never subscribed, or one the server completed, is ignored",
            from: handshake,
            [
                (.text(complete("nope")), .none, .ready),
                (.text(subscribe("1")), start("1", 0), .ready),
                (.finished(run("1", 0)), .send(.complete(id: "1")), .ready),
                (.text(complete("1")), .none, .ready),
            ]),
        Scenario(
            "a failed operation sends error and no complete; its id is free again",
            from: handshake,
            [
                (.text(subscribe("1")), start("1", 0), .ready),
                (.failed(run("1", 0), forbidden), .send(.error(id: "1", payload: forbidden)), .ready),
                (.finished(run("1", 0)), .none, .ready),
                (.text(complete("1")), .none, .ready),
                (.text(subscribe("1")), start("1", 1), .ready),
            ]),
        Scenario(
            "a failure with no errors is sent as one internal error, since error needs at least one",
            from: handshake,
            [
                (.text(subscribe("1")), start("1", 0), .ready),
                (
                    .failed(run("1", 0), []),
                    .send(.error(id: "1", payload: [["message": "The operation failed.", "extensions": ["code": "internal_error"]]])), .ready
                ),
            ]),
        Scenario(
            "over the limit a subscribe is answered with error alone; the others keep running, and a freed slot admits one",
            maximumSubscriptions: 2,
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (.text(subscribe("b")), start("b", 1), .ready),
                (.text(subscribe("c")), .send(.error(id: "c", payload: limitError(maximum: 2))), .ready),
                (.text(complete("c")), .none, .ready),
                (.next(run("a", 0), data), .send(.next(id: "a", payload: data)), .ready),
                (.text(complete("a")), .stop([run("a", 0)]), .ready),
                (.text(subscribe("c")), start("c", 2), .ready),
                (.text(subscribe("d")), .send(.error(id: "d", payload: limitError(maximum: 2))), .ready),
            ]),
        Scenario(
            "at the limit, an active id is still a 4409",
            maximumSubscriptions: 1,
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (.text(subscribe("a")), closing(.subscriberAlreadyExists, "Subscriber for a already exists", stopping: [run("a", 0)]), .closed),
            ]),
        Scenario(
            "results, ends and failures reported before the acknowledgement or for unknown runs are ignored",
            [
                (.next(run("1", 0), data), .none, .awaitingInit),
                (.finished(run("1", 0)), .none, .awaitingInit),
                (.failed(run("1", 0), forbidden), .none, .awaitingInit),
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.authorized(nil), .send(.connectionAck(payload: nil)), .ready),
                (.next(run("1", 0), data), .none, .ready),
            ]),
    ]

    @Test(arguments: operationScenarios)
    func answersEveryOperationEvent(_ scenario: Scenario) {
        Self.play(scenario)
    }

    @Test func listsTheRunningOperationsBySerial() {
        var machine = Machine()
        _ = machine.receive(Self.initWithToken)
        _ = machine.authorized()
        for id in ["z", "a", "m"] { _ = machine.receive(Self.subscribe(id)) }
        _ = machine.receive(Self.complete("a"))
        #expect(machine.subscriptions == [Self.run("z", 0), Self.run("m", 2)])
        #expect(machine.maximumSubscriptions == 100)
        _ = machine.socketClosed()
        #expect(machine.subscriptions.isEmpty)
    }
}
