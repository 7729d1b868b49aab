import KizunaCore
import Testing

@testable import KizunaServer

/// The server side of `graphql-transport-ws`, event by event: each step is an event, the action the machine must
/// answer and the state it must be in after. No sockets, no timers, no GraphQL: the events are what the WebSocket
/// handler would report. This file covers the connection (init, authentication, ping, timers, closing, invalid
/// frames); `+Operations` covers subscribe, results and complete.
@Suite("graphql-transport-ws server state machine")
struct GraphQLWSStateMachineTests {
    typealias Machine = GraphQLWSServerStateMachine
    typealias Action = Machine.Action
    typealias State = Machine.State
    typealias Subscription = Machine.Subscription

    /// What happens to the machine, as the WebSocket handler reports it.
    enum Event: Sendable, CustomStringConvertible {
        case text(String)
        case authorized([String: JSONValue]?)
        case rejected(String?)
        case initTimeout
        case pingTimer
        case next(Subscription, [String: JSONValue])
        case finished(Subscription)
        case failed(Subscription, [[String: JSONValue]])
        case close(GraphQLWSCloseCode, String?)
        case socketClosed

        var description: String {
            switch self {
            case .text(let text): "text(\(text))"
            case .authorized(let payload): "authorized(\(String(describing: payload)))"
            case .rejected(let reason): "rejected(\(reason ?? "nil"))"
            case .initTimeout: "initTimeout"
            case .pingTimer: "pingTimer"
            case .next(let subscription, _): "next(\(subscription.id)#\(subscription.serial))"
            case .finished(let subscription): "finished(\(subscription.id)#\(subscription.serial))"
            case .failed(let subscription, _): "failed(\(subscription.id)#\(subscription.serial))"
            case .close(let code, _): "close(\(code.rawValue))"
            case .socketClosed: "socketClosed"
            }
        }
    }

    typealias Step = (event: Event, action: Action, state: State)

    /// A sequence of events, each with the action the machine must answer and the state it must be in after.
    struct Scenario: CustomTestStringConvertible, Sendable {
        let name: String
        let maximumSubscriptions: Int
        let steps: [Step]
        var testDescription: String { name }

        /// `start`, then `steps`, then `end`: a scenario usually begins with ``handshake`` and may end with ``afterClose``.
        init(_ name: String, maximumSubscriptions: Int = 100, from start: [Step] = [], _ steps: [Step], then end: [Step] = []) {
            self.name = name
            self.maximumSubscriptions = maximumSubscriptions
            self.steps = start + steps + end
        }
    }

    // MARK: Frames and actions, spelled once

    static let initWithToken = #"{"type":"connection_init","payload":{"token":"kzs_1"}}"#
    static let token: [String: JSONValue] = ["token": "kzs_1"]
    static let query = "subscription { noteChanged { id } }"
    static let operation = GraphQLWSSubscribePayload(query: query)

    static func subscribe(_ id: String) -> String {
        #"{"type":"subscribe","id":"\#(id)","payload":{"query":"\#(query)"}}"#
    }

    static func complete(_ id: String) -> String { #"{"type":"complete","id":"\#(id)"}"# }

    static func run(_ id: String, _ serial: Int) -> Subscription { Subscription(id: id, serial: serial) }

    static func start(_ id: String, _ serial: Int) -> Action { .start(run(id, serial), operation) }

    static func closing(_ code: GraphQLWSCloseCode, _ reason: String, stopping: [Subscription] = []) -> Action {
        .close(code, reason: reason, stopping: stopping)
    }

    /// `connection_init` with a token, accepted: the machine is ready.
    static let handshake: [Step] = [
        (.text(initWithToken), .authenticate(payload: token), .authenticating),
        (.authorized(nil), .send(.connectionAck(payload: nil)), .ready),
    ]

    /// Every event, once the connection closed: each is ignored.
    static let afterClose: [Step] = [
        (.text(initWithToken), .none, .closed),
        (.text(#"{"type":"ping"}"#), .none, .closed),
        (.text(subscribe("late")), .none, .closed),
        (.text("not json"), .none, .closed),
        (.authorized(nil), .none, .closed),
        (.rejected(nil), .none, .closed),
        (.initTimeout, .none, .closed),
        (.pingTimer, .none, .closed),
        (.next(run("a", 0), ["data": nil]), .none, .closed),
        (.finished(run("a", 0)), .none, .closed),
        (.close(.goingAway, nil), .none, .closed),
        (.socketClosed, .none, .closed),
    ]

    static let connectionScenarios: [Scenario] = [
        Scenario(
            "connection_init asks for its payload to be checked; accepted, it is acknowledged with the given payload",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.authorized(["server": "kizuna"]), .send(.connectionAck(payload: ["server": "kizuna"])), .ready),
            ]),
        Scenario(
            "connection_init without a payload is checked too",
            [
                (.text(#"{"type":"connection_init"}"#), .authenticate(payload: nil), .authenticating),
                (.authorized(nil), .send(.connectionAck(payload: nil)), .ready),
            ]),
        Scenario(
            "a refused payload closes 4403 Forbidden, or with the reason given; nothing happens after",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.rejected(nil), closing(.forbidden, "Forbidden"), .closed),
            ], then: afterClose),
        Scenario(
            "a refusal's own reason is sent when it fits a close frame",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.rejected("Session expired"), closing(.forbidden, "Session expired"), .closed),
            ]),
        Scenario(
            "a refusal's reason too long for a close frame becomes Forbidden",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.rejected(String(repeating: "x", count: 124)), closing(.forbidden, "Forbidden"), .closed),
            ]),
        Scenario(
            "a second connection_init while the first is checked closes 4429; the late verdict is ignored",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.text(initWithToken), closing(.tooManyInitialisationRequests, "Too many initialisation requests"), .closed),
                (.authorized(nil), .none, .closed),
                (.rejected(nil), .none, .closed),
            ]),
        Scenario(
            "a second connection_init after the acknowledgement closes 4429 and stops every operation",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (
                    .text(#"{"type":"connection_init"}"#),
                    closing(.tooManyInitialisationRequests, "Too many initialisation requests", stopping: [run("a", 0)]), .closed
                ),
            ], then: afterClose),
        Scenario(
            "subscribe before connection_init closes 4401; nothing happens after",
            [(.text(subscribe("1")), closing(.unauthorized, "Unauthorized"), .closed)], then: afterClose),
        Scenario(
            "subscribe while the payload is checked closes 4401",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.text(subscribe("1")), closing(.unauthorized, "Unauthorized"), .closed),
                (.authorized(nil), .none, .closed),
            ]),
        Scenario(
            "complete before the acknowledgement is ignored: no operation has that id",
            [
                (.text(complete("1")), .none, .awaitingInit),
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.text(complete("1")), .none, .authenticating),
                (.authorized(nil), .send(.connectionAck(payload: nil)), .ready),
            ]),
        Scenario(
            "ping is answered with a pong echoing its payload in every state; pong is ignored",
            [
                (.text(#"{"type":"ping"}"#), .send(.pong(payload: nil)), .awaitingInit),
                (.text(#"{"type":"ping","payload":{"n":1}}"#), .send(.pong(payload: ["n": 1])), .awaitingInit),
                (.text(#"{"type":"ping","payload":null}"#), .send(.pong(payload: nil)), .awaitingInit),
                (.text(#"{"type":"pong","payload":{"n":1}}"#), .none, .awaitingInit),
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.text(#"{"type":"ping","payload":{"n":2}}"#), .send(.pong(payload: ["n": 2])), .authenticating),
                (.text(#"{"type":"pong"}"#), .none, .authenticating),
                (.authorized(nil), .send(.connectionAck(payload: nil)), .ready),
                (.text(#"{"type":"ping","payload":{"n":3}}"#), .send(.pong(payload: ["n": 3])), .ready),
                (.text(#"{"type":"pong"}"#), .none, .ready),
            ]),
        Scenario(
            "no connection_init within the wait closes 4408",
            [(.initTimeout, closing(.connectionInitialisationTimeout, "Connection initialisation timeout"), .closed)], then: afterClose),
        Scenario(
            "the init wait ending while the payload is checked, or after the acknowledgement, is ignored",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.initTimeout, .none, .authenticating),
                (.authorized(nil), .send(.connectionAck(payload: nil)), .ready),
                (.initTimeout, .none, .ready),
            ]),
        Scenario(
            "a keep-alive ping answered by a pong keeps the connection; one left unanswered closes 4411",
            from: handshake,
            [
                (.pingTimer, .send(.ping(payload: nil)), .ready),
                (.text(#"{"type":"pong"}"#), .none, .ready),
                (.pingTimer, .send(.ping(payload: nil)), .ready),
                (.text(subscribe("a")), start("a", 0), .ready),
                (.pingTimer, .send(.ping(payload: nil)), .ready),
                (.pingTimer, closing(.keepAliveTimeout, "Keep-alive timeout: ping not answered", stopping: [run("a", 0)]), .closed),
            ]),
        Scenario(
            "any message answers the keep-alive ping, before the acknowledgement too",
            [
                (.pingTimer, .send(.ping(payload: nil)), .awaitingInit),
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.pingTimer, .send(.ping(payload: nil)), .authenticating),
                (.text(#"{"type":"ping"}"#), .send(.pong(payload: nil)), .authenticating),
                (.pingTimer, .send(.ping(payload: nil)), .authenticating),
                (.pingTimer, closing(.keepAliveTimeout, "Keep-alive timeout: ping not answered"), .closed),
            ]),
        Scenario(
            "the server closing (shutdown) stops every operation; nothing happens after",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (.text(subscribe("b")), start("b", 1), .ready),
                (.close(.goingAway, nil), closing(.goingAway, "Going away", stopping: [run("a", 0), run("b", 1)]), .closed),
            ], then: afterClose),
        Scenario(
            "a connection that fell behind closes 4410 with its own reason",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (.close(.fellBehind, nil), closing(.fellBehind, "Fell behind: resume from your last seq", stopping: [run("a", 0)]), .closed),
            ]),
        Scenario(
            "the server closing with its own reason, before the acknowledgement",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (.close(.internalServerError, "The store is unavailable"), closing(.internalServerError, "The store is unavailable"), .closed),
            ]),
        Scenario(
            "the peer closing stops every operation; nothing happens after",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (.text(subscribe("b")), start("b", 1), .ready),
                (.text(complete("a")), .stop([run("a", 0)]), .ready),
                (.socketClosed, .stop([run("b", 1)]), .closed),
            ], then: afterClose),
        Scenario(
            "the peer closing before connection_init stops nothing",
            [(.socketClosed, .stop([]), .closed)], then: afterClose),
    ]

    static let invalidFrameScenarios: [Scenario] = [
        Scenario(
            "a frame that is not JSON closes 4400 saying so",
            [(.text("{type: ping}"), closing(.invalidMessage, "Invalid message: not JSON"), .closed)], then: afterClose),
        Scenario(
            "a frame that is not an object closes 4400",
            [(.text(#"["ping"]"#), closing(.invalidMessage, "Invalid message: expected a JSON object, not array"), .closed)]),
        Scenario(
            "an unknown type closes 4400 naming it",
            [
                (.text(#"{"type":"start","id":"1"}"#), closing(.invalidMessage, #"Invalid message: unknown type "start""#), .closed)
            ]),
        Scenario(
            "a subscribe without an id closes 4400 and stops the running operations",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (
                    .text(#"{"type":"subscribe","payload":{"query":"{ a }"}}"#),
                    closing(.invalidMessage, "Invalid subscribe message: 'id' is missing", stopping: [run("a", 0)]), .closed
                ),
            ]),
        Scenario(
            "a subscribe without a query closes 4400",
            from: handshake,
            [
                (
                    .text(#"{"type":"subscribe","id":"1","payload":{}}"#),
                    closing(.invalidMessage, "Invalid subscribe message: 'payload.query' is missing"), .closed
                )
            ]),
        Scenario(
            "connection_ack from the client closes 4400",
            [(.text(#"{"type":"connection_ack"}"#), closing(.invalidMessage, "Unexpected message of type connection_ack received"), .closed)]),
        Scenario(
            "error from the client while its payload is checked closes 4400",
            [
                (.text(initWithToken), .authenticate(payload: token), .authenticating),
                (
                    .text(#"{"type":"error","id":"1","payload":[{"message":"x"}]}"#),
                    closing(.invalidMessage, "Unexpected message of type error received"), .closed
                ),
            ]),
        Scenario(
            "next from the client closes 4400 and stops the running operations",
            from: handshake,
            [
                (.text(subscribe("a")), start("a", 0), .ready),
                (
                    .text(#"{"type":"next","id":"a","payload":{"data":null}}"#),
                    closing(.invalidMessage, "Unexpected message of type next received", stopping: [run("a", 0)]), .closed
                ),
            ]),
        Scenario(
            "a reason too long for a close frame (an unknown type of wide characters) becomes the default",
            [
                (
                    .text(#"{"type":"\#(String(repeating: "🦊", count: 40))"}"#),
                    closing(.invalidMessage, "Invalid message received"), .closed
                )
            ]),
    ]

    @Test(arguments: connectionScenarios + invalidFrameScenarios)
    func answersEveryConnectionEvent(_ scenario: Scenario) {
        Self.play(scenario)
    }

    static func play(_ scenario: Scenario) {
        var machine = Machine(maximumSubscriptions: scenario.maximumSubscriptions)
        #expect(machine.state == .awaitingInit)
        for (index, step) in scenario.steps.enumerated() {
            if case .next(let subscription, _) = step.event {
                // The hub writes `next` itself when the machine says it delivers: the two answers must agree.
                let delivers: Bool
                if case .send = step.action { delivers = true } else { delivers = false }
                #expect(machine.isDelivering(subscription) == delivers, "step \(index + 1), \(step.event)")
            }
            let action = receive(step.event, on: &machine)
            #expect(action == step.action, "step \(index + 1), \(step.event)")
            #expect(machine.state == step.state, "step \(index + 1), \(step.event)")
        }
    }

    static func receive(_ event: Event, on machine: inout Machine) -> Action {
        switch event {
        case .text(let text): machine.receive(text)
        case .authorized(let payload): machine.authorized(ackPayload: payload)
        case .rejected(let reason): machine.rejected(reason: reason)
        case .initTimeout: machine.initTimeoutFired()
        case .pingTimer: machine.pingTimerFired()
        case .next(let subscription, let payload): machine.next(subscription, payload: payload)
        case .finished(let subscription): machine.subscriptionFinished(subscription)
        case .failed(let subscription, let errors): machine.subscriptionFailed(subscription, errors: errors)
        case .close(let code, let reason): machine.close(code, reason: reason)
        case .socketClosed: machine.socketClosed()
        }
    }
}
