import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP forwarder on a loopback port, for taking a real peer away from a running program and giving it back:
/// ``cut()`` closes the listener and every forwarded connection (a server sees its store vanish, as when PostgreSQL
/// stops; a client sees no server); ``restore(_:)`` listens on the same port again, forwarding as ``Mode`` says. A cut
/// gives the port up, and under load a restore has found it taken (`EADDRINUSE`, twice in CI for the SDK's offline
/// tests): to take a peer away and give it back, `switchTo(.refuse)` and `switchTo(.forward)` keep the port.
/// ``switchTo(_:port:)`` changes what it does, and where it forwards, without giving up its port: a client that keeps
/// reconnecting to the proxy reaches nothing else while the server behind it restarts.
public final class TCPProxy: Sendable {
    /// What the proxy does with the connections it accepts.
    public enum Mode: Sendable {
        /// Forwards both ways.
        case forward
        /// Accepts and holds the connection, forwarding nothing: a request that never reaches the server.
        case hold
        /// Forwards what the client sends and drops what the server answers: a request the server applies whose
        /// answer never arrives.
        case dropAnswers
        /// Closes each connection as soon as it is accepted: a server that is down, on a port nobody else can take.
        case refuse
    }

    public let port: Int
    /// The ports of this process's proxies: one cut keeps its port from the others until it is restored.
    private static let reserved = Mutex<Set<Int>>([])
    private let host: String
    private let listener = Mutex<(any Channel)?>(nil)
    /// The forwarded connections, whether new ones are taken (false once cut, until restored), what is done with them
    /// and the port they are forwarded to.
    private let connections = Mutex<(open: [ObjectIdentifier: any Channel], accepting: Bool, mode: Mode, target: Int)>(([:], false, .forward, 0))
    /// One element per connection accepted.
    public let accepted: AsyncStream<Void>
    /// How many connections it has accepted so far.
    public var acceptedCount: Int { count.withLock { $0 } }
    private let count = Mutex(0)
    private let accept: AsyncStream<Void>.Continuation

    private init(port: Int, host: String, target: Int) {
        self.port = port
        self.host = host
        connections.withLock { $0.target = target }
        (accepted, accept) = AsyncStream.makeStream(of: Void.self)
    }

    /// Starts forwarding a free loopback port to `host:port`.
    ///
    /// The port is below Linux's ephemeral range (32768–60999 by default), so no outgoing connection is ever given it:
    /// while the proxy is cut, a client reconnecting to it cannot be handed the port itself (TCP connects a socket to
    /// itself then, and a database driver waits on its own startup message for ever), and nothing else takes the port
    /// before ``restore(_:)`` binds it again: no other proxy of the process is given it (they are kept in
    /// ``reserved`` for the process's life, cut or not), and the suite's other listeners (nginx) use another range.
    public static func start(to host: String, port: Int, mode: Mode = .forward) async throws -> TCPProxy {
        var lastError: (any Error)?
        for _ in 0..<100 {
            let candidate = Int.random(in: 20_000..<32_000)
            guard reserved.withLock({ $0.insert(candidate).inserted }) else { continue }
            let proxy = TCPProxy(port: candidate, host: host, target: port)
            do {
                try await proxy.restore(mode)
                return proxy
            } catch {
                lastError = error  // taken: another one
            }
        }
        throw lastError ?? ChannelError.ioOnClosedChannel
    }

    /// Listens again and treats new connections as `mode` says.
    public func restore(_ mode: Mode = .forward) async throws {
        let host = host
        connections.withLock {
            $0.accepting = true
            $0.mode = mode
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                guard self.track(inbound) else { return inbound.close() }
                self.count.withLock { $0 += 1 }
                self.accept.yield()
                let (mode, target) = self.connections.withLock { ($0.mode, $0.target) }
                switch mode {
                case .hold: return inbound.eventLoop.makeSucceededVoidFuture()
                case .refuse: return inbound.close()
                case .forward, .dropAnswers: break
                }
                // Both channels run on the inbound one's event loop, so the handlers are added synchronously there.
                return ClientBootstrap(group: inbound.eventLoop).connect(host: host, port: target).flatMapThrowing { outbound in
                    guard self.track(outbound) else {
                        outbound.close(promise: nil)
                        throw ChannelError.ioOnClosedChannel
                    }
                    let (local, remote) = GlueHandler.matchedPair(answers: { if case .dropAnswers = mode { false } else { true } }())
                    try inbound.pipeline.syncOperations.addHandler(local)
                    try outbound.pipeline.syncOperations.addHandler(remote)
                }.flatMapErrorThrowing { error in
                    inbound.close(promise: nil)
                    throw error
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        listener.withLock { $0 = channel }
    }

    /// Stops listening and closes every forwarded connection.
    public func cut() async {
        // Refused from here on, so a connection the listener is taking while it closes is closed too.
        let open = connections.withLock { connections in
            defer { connections = ([:], false, connections.mode, connections.target) }
            return Array(connections.open.values)
        }
        let server = listener.withLock { $0.take() }
        try? await server?.close()
        for channel in open { try? await channel.close() }
    }

    /// From now on treats new connections as `mode` says, forwarding them to `port` (the same one when `nil`), and
    /// closes the open ones; the proxy keeps listening.
    public func switchTo(_ mode: Mode, port: Int? = nil) async {
        let open = connections.withLock { connections in
            connections.mode = mode
            if let port { connections.target = port }
            defer { connections.open = [:] }
            return Array(connections.open.values)
        }
        for channel in open { try? await channel.close() }
    }

    /// Remembers `channel` for ``cut()``; false when the proxy has been cut since the connection was accepted
    /// (a connection the listener took just before it closed must not outlive the cut).
    private func track(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let accepted = connections.withLock { connections in
            if connections.accepting { connections.open[id] = channel }
            return connections.accepting
        }
        channel.closeFuture.whenComplete { _ in _ = self.connections.withLock { $0.open.removeValue(forKey: id) } }
        return accepted
    }
}

/// Joins two channels: what one reads, the other writes (after swift-nio's connect-proxy example).
private final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    /// Whether what this side reads is passed on (false: dropped).
    private var forwards = true

    /// The handler of the client's side, and of the server's (which drops the answers unless `answers`).
    static func matchedPair(answers: Bool = true) -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
        second.forwards = answers
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    private func partnerWrite(_ data: NIOAny) { context?.write(data, promise: nil) }
    private func partnerFlush() { context?.flush() }

    /// Closes this side once what it still has to write is written: a server that answers and closes at once ends
    /// its answer before its close reaches the proxy, and closed there and then, the proxy dropped the answer's last
    /// bytes whenever the client read slower than the server wrote (a ranged GET of moto under a loaded CI run, read
    /// short and failed three times). A peer that never reads would hold the write, and the connection, for ever:
    /// ten seconds at most.
    private func partnerClose() {
        guard let channel = context?.channel else { return }
        let giveUp = channel.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
        channel.writeAndFlush(ByteBuffer()).whenComplete { _ in
            giveUp.cancel()
            channel.close(promise: nil)
        }
    }
    private var partnerWritable: Bool { context?.channel.isWritable ?? false }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { if forwards { partner?.partnerWrite(data) } }
    func channelReadComplete(context: ChannelHandlerContext) { if forwards { partner?.partnerFlush() } }
    func channelInactive(context: ChannelHandlerContext) { partner?.partnerClose() }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { partner?.partnerClose() }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
    }

    func read(context: ChannelHandlerContext) {
        if let partner, partner.partnerWritable {
            context.read()
        } else {
            pendingRead = true
        }
    }
}

@available(*, unavailable)
extension GlueHandler: Sendable {}
