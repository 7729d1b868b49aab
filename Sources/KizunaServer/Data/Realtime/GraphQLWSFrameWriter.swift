import KizunaCore
import NIOCore
import NIOWebSocket

/// Writes a connection's messages straight to its NIO channel, as text frames, from any thread and without waiting.
///
/// hummingbird-websocket's outbound writer is an async sequence of frames: each write is a suspension and a hop to the
/// channel's event loop, and the calling task keeps the memory its deepest write took for as long as it lives. A
/// change heard by ten thousand connections made ten thousand such hops. Here a write is a closure on the event loop,
/// and ``GraphQLWSFrameBatch`` puts one change's frames for every connection on a loop into one closure.
///
/// Every write of a connection goes through its writer (and ``GraphQLWSFrameBatch``), which run on the loop in the
/// order they were made; the close frame goes through hummingbird-websocket's writer after ``drained()``, so it comes
/// last. A client that stops reading is found with ``isWritable``: NIO buffers what it cannot send yet.
struct GraphQLWSFrameWriter: Sendable {
    let channel: any Channel

    /// Whether the channel takes more data now; `false` while what it holds for a slow reader is over NIO's high
    /// watermark.
    var isWritable: Bool { channel.isWritable }

    /// Writes a message.
    func write(_ message: GraphQLWSMessage) {
        write(ByteBuffer(bytes: message.json.jsonBytes))
    }

    /// Writes one text frame holding `text`, a whole message.
    func write(_ text: ByteBuffer) {
        let channel = channel
        let frame = WebSocketFrame(fin: true, opcode: .text, data: text)
        channel.eventLoop.execute { channel.writeAndFlush(frame, promise: nil) }
    }

    /// Returns once every write made before has been handed to the channel.
    func drained() async {
        try? await channel.eventLoop.submit {}.get()
    }

    /// A `next` message whose payload is JSON text already written (a payload shared by many subscribers, written
    /// once): the bytes ``GraphQLWSMessage/json`` would give, with the payload copied in.
    static func next(id: String, payload: [UInt8]) -> ByteBuffer {
        let id = JSONValue.string(id).jsonBytes
        var buffer = ByteBuffer()
        buffer.reserveCapacity(payload.count + id.count + 32)
        buffer.writeString(#"{"id":"#)
        buffer.writeBytes(id)
        buffer.writeString(#","payload":"#)
        buffer.writeBytes(payload)
        buffer.writeString(#","type":"next"}"#)
        return buffer
    }
}

/// Frames for many connections, written with one closure per event loop: a change's fan-out (``SubscriptionHub``).
struct GraphQLWSFrameBatch {
    private var loops: [ObjectIdentifier: (loop: any EventLoop, writes: [(channel: any Channel, frame: WebSocketFrame)])] = [:]

    var isEmpty: Bool { loops.isEmpty }

    /// Adds a text frame holding `text` for `writer`'s channel.
    mutating func add(_ text: ByteBuffer, to writer: GraphQLWSFrameWriter) {
        let loop = writer.channel.eventLoop
        let frame = WebSocketFrame(fin: true, opcode: .text, data: text)
        loops[ObjectIdentifier(loop), default: (loop, [])].writes.append((writer.channel, frame))
    }

    /// Writes every frame added, in the order added for each channel, and empties the batch.
    mutating func send() {
        for (loop, writes) in loops.values {
            loop.execute {
                for write in writes { write.channel.write(write.frame, promise: nil) }
                for write in writes { write.channel.flush() }
            }
        }
        loops = [:]
    }
}
