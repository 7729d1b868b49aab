import HummingbirdWebSocket
import KizunaCore
import NIOCore

/// Turns a connection's WebSocket frames into whole `graphql-transport-ws` messages, within the connection's limits:
/// fragments are joined up to ``maxBytes``, every message passes the rate limit, and anything the protocol does not
/// allow (a binary message, a stray continuation) is refused with the close code and reason that say what was wrong.
///
/// A value the reader owns and calls synchronously: its work is done on the thread's stack, so the reader, which waits
/// for the socket for as long as the connection is open, keeps no memory of it between frames.
struct GraphQLWSMessageAssembler {
    /// What one frame gives.
    enum Outcome: Equatable, Sendable {
        /// A whole text message.
        case message(String)
        /// The first or a middle fragment of a message: read on.
        case partial
        /// Close the connection with this code and reason.
        case refused(GraphQLWSCloseCode, reason: String)
    }

    let maxBytes: Int
    private var rateLimit: MessageRateLimit
    /// The fragments so far of a message not yet whole, and whether it is text.
    private var pending: (text: Bool, bytes: ByteBuffer)?

    init(maxBytes: Int, maxMessagesPerSecond: Int) {
        self.maxBytes = maxBytes
        rateLimit = MessageRateLimit(rate: maxMessagesPerSecond)
    }

    /// Takes the next frame, arriving at `now`.
    mutating func add(_ frame: WebSocketDataFrame, at now: ContinuousClock.Instant) -> Outcome {
        add(frame.opcode, frame.data, fin: frame.fin, at: now)
    }

    /// Takes the next frame, given as its parts.
    mutating func add(_ opcode: WebSocketDataFrame.Opcode, _ data: ByteBuffer, fin: Bool, at now: ContinuousClock.Instant) -> Outcome {
        var data = data
        switch opcode {
        case .text, .binary:
            guard pending == nil else {
                return .refused(.invalidMessage, reason: "Invalid message: a message began before the previous one's last fragment")
            }
            pending = (opcode == .text, data)
        case .continuation:
            guard pending != nil else {
                return .refused(.invalidMessage, reason: "Invalid message: a continuation frame with no message to continue")
            }
            pending?.bytes.writeBuffer(&data)
        }
        guard let whole = pending, whole.bytes.readableBytes <= maxBytes else {
            return .refused(.messageTooBig, reason: "Message too big: at most \(maxBytes) bytes")
        }
        guard fin else { return .partial }
        pending = nil
        guard rateLimit.admit(at: now) else {
            return .refused(.tooManyMessages, reason: "Too many messages: at most \(rateLimit.rate) per second")
        }
        // graphql-ws reads a binary frame as text; the protocol's messages are text, and nothing Kizuna serves sends
        // binary, so one is a client's mistake worth saying.
        guard whole.text else {
            return .refused(.invalidMessage, reason: "Invalid message: graphql-transport-ws messages are text frames, not binary")
        }
        return .message(String(buffer: whole.bytes))
    }
}
