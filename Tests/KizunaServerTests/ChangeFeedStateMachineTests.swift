import Testing

@testable import KizunaServer

/// The change feed's fan-out decisions, event by event, with plain strings for subscribers and waiters: no streams,
/// no database, no waiting.
@Suite("Change feed state machine")
struct ChangeFeedStateMachineTests {
    typealias Machine = ChangeFeedStateMachine<String, String>
    typealias Action = Machine.Action

    /// What happens to the machine, as ``ChangeFeed`` tells it.
    enum Event: Sendable, CustomStringConvertible {
        case wait(String)
        case start(position: Int64)
        case subscribe(String)
        case deliver(seq: Int64)
        case dropped(id: Int)
        case unsubscribe(id: Int)
        case stop

        var description: String {
            switch self {
            case .wait(let waiter): "wait(\(waiter))"
            case .start(let position): "start(\(position))"
            case .subscribe(let subscriber): "subscribe(\(subscriber))"
            case .deliver(let seq): "deliver(\(seq))"
            case .dropped(let id): "dropped(\(id))"
            case .unsubscribe(let id): "unsubscribe(\(id))"
            case .stop: "stop"
            }
        }
    }

    /// A sequence of events, each with the action the machine must answer.
    struct Scenario: CustomTestStringConvertible, Sendable {
        let name: String
        let steps: [(event: Event, action: Action)]
        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "start releases the waiters that came before it; a later waiter goes on at once",
            steps: [
                (.wait("w1"), .none),
                (.wait("w2"), .none),
                (.start(position: 7), .resume(["w1", "w2"])),
                (.wait("w3"), .resume(["w3"])),
                (.subscribe("a"), .subscribed(id: 0, position: 7)),
            ]
        ),
        Scenario(
            name: "a start with no waiters resumes none, and a second start changes nothing",
            steps: [
                (.start(position: 4), .resume([])),
                (.start(position: 9), .none),
                (.subscribe("a"), .subscribed(id: 0, position: 4)),
            ]
        ),
        Scenario(
            name: "a subscriber is given the position of the last change delivered",
            steps: [
                (.start(position: 4), .resume([])),
                (.subscribe("a"), .subscribed(id: 0, position: 4)),
                (.deliver(seq: 5), .yield([0: "a"])),
                (.subscribe("b"), .subscribed(id: 1, position: 5)),
                (.deliver(seq: 6), .yield([0: "a", 1: "b"])),
            ]
        ),
        Scenario(
            name: "a change with no subscribers still moves the position",
            steps: [
                (.start(position: 0), .resume([])),
                (.deliver(seq: 1), .yield([:])),
                (.deliver(seq: 2), .yield([:])),
                (.subscribe("a"), .subscribed(id: 0, position: 2)),
            ]
        ),
        Scenario(
            name: "every change goes to both subscribers",
            steps: [
                (.start(position: 0), .resume([])),
                (.subscribe("a"), .subscribed(id: 0, position: 0)),
                (.subscribe("b"), .subscribed(id: 1, position: 0)),
                (.deliver(seq: 1), .yield([0: "a", 1: "b"])),
                (.deliver(seq: 2), .yield([0: "a", 1: "b"])),
            ]
        ),
        Scenario(
            name: "a dropped yield cuts exactly that subscriber, once, and it hears of nothing more",
            steps: [
                (.start(position: 0), .resume([])),
                (.subscribe("a"), .subscribed(id: 0, position: 0)),
                (.subscribe("b"), .subscribed(id: 1, position: 0)),
                (.deliver(seq: 1), .yield([0: "a", 1: "b"])),
                (.dropped(id: 0), .cut(id: 0, "a")),
                (.dropped(id: 0), .none),
                (.deliver(seq: 2), .yield([1: "b"])),
                (.unsubscribe(id: 0), .none),
                (.stop, .finish([1: "b"])),
            ]
        ),
        Scenario(
            name: "unsubscribe finishes the subscriber once; the others keep hearing",
            steps: [
                (.start(position: 3), .resume([])),
                (.subscribe("a"), .subscribed(id: 0, position: 3)),
                (.subscribe("b"), .subscribed(id: 1, position: 3)),
                (.unsubscribe(id: 0), .finish([0: "a"])),
                (.unsubscribe(id: 0), .none),
                (.deliver(seq: 4), .yield([1: "b"])),
                (.dropped(id: 0), .none),
            ]
        ),
        Scenario(
            name: "ids are never reused",
            steps: [
                (.start(position: 0), .resume([])),
                (.subscribe("a"), .subscribed(id: 0, position: 0)),
                (.unsubscribe(id: 0), .finish([0: "a"])),
                (.subscribe("b"), .subscribed(id: 1, position: 0)),
                (.unsubscribe(id: 0), .none),
                (.deliver(seq: 1), .yield([1: "b"])),
            ]
        ),
        Scenario(
            name: "stop finishes every subscriber; later subscribers are finished at once",
            steps: [
                (.start(position: 2), .resume([])),
                (.subscribe("a"), .subscribed(id: 0, position: 2)),
                (.subscribe("b"), .subscribed(id: 1, position: 2)),
                (.deliver(seq: 3), .yield([0: "a", 1: "b"])),
                (.stop, .finish([0: "a", 1: "b"])),
                (.stop, .none),
                (.deliver(seq: 4), .none),
                (.unsubscribe(id: 0), .none),
                (.dropped(id: 1), .none),
                (.wait("w"), .resume(["w"])),
                (.subscribe("c"), .alreadyStopped("c", position: 3)),
            ]
        ),
        Scenario(
            name: "stop before start releases the waiters, whose subscriptions are finished at once",
            steps: [
                (.wait("w1"), .none),
                (.stop, .resume(["w1"])),
                (.subscribe("a"), .alreadyStopped("a", position: 0)),
                (.start(position: 9), .none),
                (.wait("w2"), .resume(["w2"])),
                (.deliver(seq: 10), .none),
            ]
        ),
    ]

    @Test(arguments: scenarios)
    func answersEveryEventWithTheExpectedAction(_ scenario: Scenario) {
        var machine = Machine()
        for (index, step) in scenario.steps.enumerated() {
            let action = Self.receive(step.event, on: &machine)
            #expect(action == step.action, "step \(index + 1), \(step.event)")
        }
    }

    @Test func thePositionFollowsStartAndDeliveries() {
        var machine = Machine()
        #expect(machine.position == 0)
        _ = machine.start(position: 12)
        #expect(machine.position == 12)
        _ = machine.deliver(seq: 13)
        #expect(machine.position == 13)
        _ = machine.stop()
        _ = machine.deliver(seq: 14)
        #expect(machine.position == 13)
    }

    static func receive(_ event: Event, on machine: inout Machine) -> Action {
        switch event {
        case .wait(let waiter): machine.waitForStart(waiter)
        case .start(let position): machine.start(position: position)
        case .subscribe(let subscriber): machine.subscribe(subscriber)
        case .deliver(let seq): machine.deliver(seq: seq)
        case .dropped(let id): machine.yieldDropped(id: id)
        case .unsubscribe(let id): machine.unsubscribe(id: id)
        case .stop: machine.stop()
        }
    }
}
