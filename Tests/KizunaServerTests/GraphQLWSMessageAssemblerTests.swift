import HummingbirdWebSocket
import KizunaCore
import NIOCore
import Testing

@testable import KizunaServer

/// The reader's frames-to-messages step, frame by frame: fragments joined within the size limit, the rate limit on
/// whole messages, and the protocol's refusals, each with the close code and reason a client is sent.
@Suite("GraphQL over WebSocket: assembling messages from frames")
struct GraphQLWSMessageAssemblerTests {
    typealias Outcome = GraphQLWSMessageAssembler.Outcome

    struct Frame {
        var opcode: WebSocketDataFrame.Opcode
        var text: String
        var fin = true
    }

    /// Feeds `frames` in order, all at one instant, and returns each outcome.
    static func outcomes(_ frames: [Frame], maxBytes: Int = 16, rate: Int = 100) -> [Outcome] {
        var assembler = GraphQLWSMessageAssembler(maxBytes: maxBytes, maxMessagesPerSecond: rate)
        let now = ContinuousClock.now
        return frames.map { assembler.add($0.opcode, ByteBuffer(string: $0.text), fin: $0.fin, at: now) }
    }

    @Test(arguments: [
        (
            "a whole text frame is a message", [Frame(opcode: .text, text: #"{"type":"ping"}"#)],
            [Outcome.message(#"{"type":"ping"}"#)]
        ),
        (
            "fragments are joined",
            [
                Frame(opcode: .text, text: "ab", fin: false), Frame(opcode: .continuation, text: "cd", fin: false),
                Frame(opcode: .continuation, text: "ef"),
            ], [.partial, .partial, .message("abcdef")]
        ),
        (
            "a message may be exactly the limit", [Frame(opcode: .text, text: String(repeating: "x", count: 16))],
            [.message(String(repeating: "x", count: 16))]
        ),
        (
            "one byte over the limit closes with 1009", [Frame(opcode: .text, text: String(repeating: "x", count: 17))],
            [.refused(.messageTooBig, reason: "Message too big: at most 16 bytes")]
        ),
        (
            "so do fragments that add up to more",
            [Frame(opcode: .text, text: "0123456789", fin: false), Frame(opcode: .continuation, text: "0123456789")],
            [.partial, .refused(.messageTooBig, reason: "Message too big: at most 16 bytes")]
        ),
        (
            "a binary message closes with 4400", [Frame(opcode: .binary, text: "{}")],
            [.refused(.invalidMessage, reason: "Invalid message: graphql-transport-ws messages are text frames, not binary")]
        ),
        (
            "a continuation with nothing to continue closes with 4400", [Frame(opcode: .continuation, text: "{}")],
            [.refused(.invalidMessage, reason: "Invalid message: a continuation frame with no message to continue")]
        ),
        (
            "a new message inside a fragmented one closes with 4400",
            [Frame(opcode: .text, text: "ab", fin: false), Frame(opcode: .text, text: "{}")],
            [.partial, .refused(.invalidMessage, reason: "Invalid message: a message began before the previous one's last fragment")]
        ),
    ])
    func frames(_ what: String, _ frames: [Frame], _ expected: [Outcome]) {
        #expect(Self.outcomes(frames) == expected, "\(what)")
    }

    @Test func theRateLimitCountsMessagesNotFrames() {
        // A burst of twice the rate: 4 messages of 3 fragments each pass, the fifth message does not.
        let message = [
            Frame(opcode: .text, text: "a", fin: false), Frame(opcode: .continuation, text: "b", fin: false), Frame(opcode: .continuation, text: "c"),
        ]
        let outcomes = Self.outcomes(Array(repeating: message, count: 5).flatMap { $0 }, rate: 2)
        #expect(outcomes.filter { $0 == .message("abc") }.count == 4)
        #expect(outcomes.last == .refused(.tooManyMessages, reason: "Too many messages: at most 2 per second"))
    }
}
