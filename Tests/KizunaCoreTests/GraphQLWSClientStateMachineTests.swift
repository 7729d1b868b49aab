import KizunaCore
import Testing

/// The SDK's side of graphql-transport-ws, event by event: each row is an event and the actions it must answer, and
/// each test a connection's life, from the first subscription through acknowledgements, deliveries, closes,
/// reconnects and resumes.
@Suite("graphql-transport-ws client state machine")
struct GraphQLWSClientStateMachineTests {
    typealias Machine = GraphQLWSClientStateMachine
    typealias Action = Machine.Action

    enum Event: Sendable {
        case subscribe(String, GraphQLWSSubscribePayload)
        case unsubscribe(String)
        case opened
        case authenticated([String: JSONValue]?)
        case authenticationFailed(String)
        case received(String)
        case closed(UInt16?)
        case reconnectDue
        case close
    }

    static let resumable = GraphQLWSSubscribePayload(query: "subscription($since: String) { onCreateNote(since: $since) { id } }")
    static let plain = GraphQLWSSubscribePayload(query: "subscription { onCreateNote { id } }")
    static let token: [String: JSONValue] = ["authorization": "Bearer t"]

    static func next(_ id: String, seq: Int) -> String {
        #"{"type":"next","id":"\#(id)","payload":{"data":{"onCreateNote":{"id":"n\#(seq)"}},"extensions":{"seq":"\#(seq)"}}}"#
    }

    static func delivered(_ id: String, seq: Int) -> Action {
        .deliver(id: id, payload: ["data": ["onCreateNote": ["id": .string("n\(seq)")]], "extensions": ["seq": .string("\(seq)")]])
    }

    static func resumed(after seq: Int) -> GraphQLWSSubscribePayload {
        var payload = resumable
        payload.variables = ["since": .string("\(seq)")]
        return payload
    }

    /// Runs `rows` on a new machine (or `machine`), expecting each event's actions in order.
    @discardableResult
    static func run(_ rows: [(Event, [Action])], on machine: Machine = Machine(), sourceLocation: SourceLocation = #_sourceLocation) -> Machine {
        var machine = machine
        for (index, (event, expected)) in rows.enumerated() {
            let actions: [Action] =
                switch event {
                case .subscribe(let id, let payload): machine.subscribe(id, payload)
                case .unsubscribe(let id): machine.unsubscribe(id)
                case .opened: machine.socketOpened()
                case .authenticated(let payload): machine.authenticated(payload)
                case .authenticationFailed(let code): machine.authenticationFailed(code, message: "no session")
                case .received(let text): machine.received(text)
                case .closed(let code): machine.socketClosed(code: code.map(GraphQLWSCloseCode.init(rawValue:)), reason: "")
                case .reconnectDue: machine.reconnectDue()
                case .close: machine.close()
                }
            #expect(actions == expected, "row \(index): \(event)", sourceLocation: sourceLocation)
        }
        return machine
    }

    /// The opening every connection goes through, up to the acknowledgement with `subscribes` sent.
    static func opening(_ subscribes: [Action]) -> [(Event, [Action])] {
        [
            (.opened, [.authenticate]),
            (.authenticated(token), [.send(.connectionInit(payload: token))]),
            (.received(#"{"type":"connection_ack"}"#), [.state(.connected)] + subscribes),
        ]
    }

    @Test func theFirstSubscriptionOpensTheSocketAndTheLastClosesIt() {
        let machine = Self.run(
            [
                (.subscribe("a", Self.resumable), [.state(.connecting), .connect]),
                (.subscribe("b", Self.plain), []),  // sent with the other once acknowledged
            ] + Self.opening([.send(.subscribe(id: "a", payload: Self.resumable)), .send(.subscribe(id: "b", payload: Self.plain))]) + [
                (.subscribe("c", Self.plain), [.send(.subscribe(id: "c", payload: Self.plain))]),
                (.received(#"{"type":"ping"}"#), [.send(.pong(payload: nil))]),
                (.received(Self.next("a", seq: 7)), [Self.delivered("a", seq: 7)]),
                (.received(Self.next("zzz", seq: 8)), []),  // no such subscription (ended meanwhile)
                (.unsubscribe("a"), [.send(.complete(id: "a"))]),
                (.unsubscribe("a"), []),
                (.received(#"{"type":"complete","id":"b"}"#), [.finish("b")]),
                (.unsubscribe("c"), [.send(.complete(id: "c")), .close(.normalClosure, reason: "Normal Closure"), .state(.idle)]),
                (.closed(1000), []),
            ])
        #expect(machine.state == .idle && machine.operations.isEmpty)
    }

    @Test func aDroppedSocketIsReconnectedWithBackoffAndResumedAfterTheLastSeq() {
        let machine = Self.run(
            [(.subscribe("a", Self.resumable), [.state(.connecting), .connect]), (.subscribe("p", Self.plain), [])]
                + Self.opening([.send(.subscribe(id: "a", payload: Self.resumable)), .send(.subscribe(id: "p", payload: Self.plain))]) + [
                    (.received(Self.next("a", seq: 41)), [Self.delivered("a", seq: 41)]),
                    (.received(Self.next("a", seq: 42)), [Self.delivered("a", seq: 42)]),
                    (.closed(1006), [.state(.disconnected), .reconnect(attempt: 1)]),
                    (.reconnectDue, [.state(.connecting), .connect]),
                    (.closed(nil), [.state(.disconnected), .reconnect(attempt: 2)]),  // could not connect
                    (.reconnectDue, [.state(.connecting), .connect]),
                ] + Self.opening([.send(.subscribe(id: "a", payload: Self.resumed(after: 42))), .send(.subscribe(id: "p", payload: Self.plain))]) + [
                    // The one that cannot resume says so before its next delivery, once.
                    (.received(Self.next("p", seq: 50)), [.gap("p"), Self.delivered("p", seq: 50)]),
                    (.received(Self.next("p", seq: 51)), [Self.delivered("p", seq: 51)]),
                ])
        #expect(machine.attempt == 0, "an acknowledgement starts the backoff over")
    }

    @Test(arguments: [
        (UInt16(1001), false), (1006, false), (1013, false), (4403, false), (4408, false), (4410, false), (4411, false), (4430, false),
        (4400, true), (4406, true), (4409, true), (4429, true), (4500, true), (1002, true),
    ])
    func closeCodesAreRetriedOrTerminal(_ code: UInt16, _ fatal: Bool) {
        let rows: [(Event, [Action])] =
            [(.subscribe("a", Self.resumable), [.state(.connecting), .connect])] + Self.opening([.send(.subscribe(id: "a", payload: Self.resumable))])
        var machine = Self.run(rows)
        let actions = machine.socketClosed(code: GraphQLWSCloseCode(rawValue: code), reason: "why")
        if fatal {
            #expect(actions == [.state(.closed), .terminate(GraphQLWSCloseCode(rawValue: code), reason: "why")])
            #expect(machine.subscribe("b", Self.plain).first.map { if case .fail = $0 { true } else { false } } == true)
        } else {
            #expect(actions == [.state(.disconnected), .reconnect(attempt: 1)])
        }
    }

    @Test func serverErrorsEndOneSubscriptionAndSyncExpiredAsksForAResyncAndGoesOnLive() {
        let expired = #"{"type":"error","id":"a","payload":[{"message":"too old","extensions":{"code":"sync_expired"}}]}"#
        let refused = #"{"type":"error","id":"b","payload":[{"message":"no","extensions":{"code":"forbidden"}}]}"#
        Self.run(
            [(.subscribe("a", Self.resumed(after: 1)), [.state(.connecting), .connect]), (.subscribe("b", Self.plain), [])]
                + Self.opening([.send(.subscribe(id: "a", payload: Self.resumed(after: 1))), .send(.subscribe(id: "b", payload: Self.plain))]) + [
                    // Too old to replay: a resync, and the subscription again without `since`, live from now.
                    (.received(expired), [.resync("a"), .send(.subscribe(id: "a", payload: Self.resumable))]),
                    (.received(Self.next("a", seq: 9)), [Self.delivered("a", seq: 9)]),
                    // Another subscription's refusal ends that one alone.
                    (.received(refused), [.fail(id: "b", errors: [["message": "no", "extensions": ["code": "forbidden"]]])]),
                    // The last one ended closes the socket.
                    (.unsubscribe("a"), [.send(.complete(id: "a")), .close(.normalClosure, reason: "Normal Closure"), .state(.idle)]),
                ])
    }

    @Test func aSessionThatCannotAuthenticateEndsEverySubscription() {
        let error: [String: JSONValue] = ["message": "no session", "extensions": ["code": "unauthorized"]]
        Self.run([
            (.subscribe("a", Self.plain), [.state(.connecting), .connect]),
            (.opened, [.authenticate]),
            (
                .authenticationFailed("unauthorized"),
                [.fail(id: "a", errors: [error]), .close(.normalClosure, reason: "Normal Closure"), .state(.idle)]
            ),
        ])
    }

    @Test func aBadServerMessageClosesWith4004AndTheAppsCloseIsFinal() {
        var machine = Self.run(
            [(.subscribe("a", Self.plain), [.state(.connecting), .connect])] + Self.opening([.send(.subscribe(id: "a", payload: Self.plain))]))
        let bad = machine.received("not json")
        #expect(bad.count == 1 && bad.first.map { if case .close(.badResponse, _) = $0 { true } else { false } } == true, "\(bad)")
        #expect(machine.close() == [.close(.normalClosure, reason: "Normal Closure"), .state(.closed)])
        #expect(machine.socketClosed(code: .normalClosure, reason: "").isEmpty)
        #expect(machine.reconnectDue().isEmpty)
    }

    @Test(arguments: [
        ("subscription($since: String) { x }", true), ("subscription ($since:String){x}", true),
        ("subscription($sinceDate: String) { x }", false), ("subscription { x(since: \"3\") }", false),
    ])
    func documentsThatDeclareSinceAreResumable(_ query: String, _ resumable: Bool) {
        var machine = Machine()
        _ = machine.subscribe("a", GraphQLWSSubscribePayload(query: query))
        #expect(machine.operations["a"]?.resumable == resumable)
    }

    @Test func theBackoffDoublesUpToItsMaximumWithJitter() {
        let backoff = GraphQLWSReconnectBackoff(base: .milliseconds(500), maximum: .seconds(30))
        #expect(backoff.delay(attempt: 1, random: 0) == .milliseconds(250))
        #expect(backoff.delay(attempt: 1, random: 1) == .milliseconds(500))
        #expect(backoff.delay(attempt: 3, random: 0.5) == .milliseconds(1500))
        #expect(backoff.delay(attempt: 20, random: 1) == .seconds(30))
        #expect(backoff.delay(attempt: 200, random: 0) == .seconds(15))
    }
}
