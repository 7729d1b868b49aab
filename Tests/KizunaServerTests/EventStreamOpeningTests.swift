import Testing

@testable import KizunaServer

/// How an event stream opens, from the client's resume id, the oldest change the log still holds and the position
/// its subscription starts after.
@Suite("Event stream opening")
struct EventStreamOpeningTests {
    struct Vector: CustomTestStringConvertible, Sendable {
        let resumeFrom: Int64?
        let oldest: Int64?
        let position: Int64
        let expected: EventStreamController.StreamOpening
        let note: String
        var testDescription: String { note }
    }

    static let vectors: [Vector] = [
        .init(resumeFrom: nil, oldest: 1, position: 10, expected: .snapshot, note: "no resume id: snapshot"),
        .init(resumeFrom: nil, oldest: nil, position: 0, expected: .snapshot, note: "no resume id on an empty log: snapshot"),
        // The log holds 5...10: changes 1...4 were pruned.
        .init(resumeFrom: 2, oldest: 5, position: 10, expected: .snapshot, note: "resume id before oldest - 1: snapshot"),
        .init(resumeFrom: 0, oldest: 5, position: 10, expected: .snapshot, note: "resume id 0 after pruning: snapshot"),
        .init(resumeFrom: 4, oldest: 5, position: 10, expected: .replay(after: 4, through: 10), note: "resume id at oldest - 1: replay"),
        .init(resumeFrom: 7, oldest: 5, position: 10, expected: .replay(after: 7, through: 10), note: "resume id within the log: replay"),
        .init(resumeFrom: 9, oldest: 5, position: 10, expected: .replay(after: 9, through: 10), note: "one change missed: replay"),
        .init(resumeFrom: 0, oldest: 1, position: 3, expected: .replay(after: 0, through: 3), note: "resume id 0 with nothing pruned: replay"),
        .init(resumeFrom: 10, oldest: 5, position: 10, expected: .nothing, note: "resume id at the position: nothing"),
        // Another instance may have read further than this one's feed.
        .init(resumeFrom: 12, oldest: 5, position: 10, expected: .nothing, note: "resume id past the position: nothing"),
        .init(resumeFrom: 2, oldest: 5, position: 2, expected: .nothing, note: "resume id at the position after pruning: nothing"),
        .init(resumeFrom: 0, oldest: nil, position: 0, expected: .nothing, note: "empty log, resume id 0: nothing"),
        .init(resumeFrom: 4, oldest: nil, position: 4, expected: .nothing, note: "emptied log, resume id at the position: nothing"),
        .init(resumeFrom: 3, oldest: nil, position: 4, expected: .snapshot, note: "emptied log, a change missed: snapshot"),
    ]

    @Test(arguments: vectors)
    func choosesTheOpening(_ vector: Vector) {
        let opening = EventStreamController.opening(resumeFrom: vector.resumeFrom, oldest: vector.oldest, position: vector.position)
        #expect(opening == vector.expected)
    }
}
