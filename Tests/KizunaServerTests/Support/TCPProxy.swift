import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// A TCP forwarder on a loopback port, for taking a real database away from a running server and giving it back:
/// ``cut()`` closes the listener and every forwarded connection (the server sees its store vanish, as when
/// PostgreSQL stops); ``restore()`` listens on the same port again.
final class TCPProxy: Sendable {
    let port: Int
    private let target: (host: String, port: Int)
    private let listener = Mutex<(any Channel)?>(nil)
    /// The forwarded connections, and whether new ones are taken (false once cut, until restored).
    private let connections = Mutex<(open: [ObjectIdentifier: any Channel], accepting: Bool)>(([:], false))

    private init(port: Int, target: (host: String, port: Int)) {
        self.port = port
        self.target = target
    }

    /// Starts forwarding a free loopback port to `host:port`.
    static func start(to host: String, port: Int) async throws -> TCPProxy {
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let free = probe.localAddress?.port ?? 0
        try await probe.close()
        let proxy = TCPProxy(port: free, target: (host, port))
        try await proxy.restore()
        return proxy
    }

    /// A proxy to the test PostgreSQL server, and its URL through the proxy (the same database and credentials).
    static func postgres() async throws -> (proxy: TCPProxy, url: String) {
        let url = try #require(TestBackend.postgresURL)
        let target = try #require(URLComponents(string: url))
        let proxy = try await TCPProxy.start(to: target.host ?? "127.0.0.1", port: target.port ?? 5432)
        var viaProxy = target
        viaProxy.port = proxy.port
        return (proxy, try #require(viaProxy.string))
    }

    /// Listens again and forwards new connections.
    func restore() async throws {
        let target = target
        connections.withLock { $0.accepting = true }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                guard self.track(inbound) else { return inbound.close() }
                // Both channels run on the inbound one's event loop, so the handlers are added synchronously there.
                return ClientBootstrap(group: inbound.eventLoop).connect(host: target.host, port: target.port).flatMapThrowing { outbound in
                    guard self.track(outbound) else {
                        outbound.close(promise: nil)
                        throw ChannelError.ioOnClosedChannel
                    }
                    let (local, remote) = GlueHandler.matchedPair()
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
    func cut() async {
        // Refused from here on, so a connection the listener is taking while it closes is closed too.
        let open = connections.withLock { connections in
            defer { connections = ([:], false) }
            return Array(connections.open.values)
        }
        let server = listener.withLock { $0.take() }
        try? await server?.close()
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

    static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
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
    private func partnerClose() { context?.close(promise: nil) }
    private var partnerWritable: Bool { context?.channel.isWritable ?? false }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.partnerWrite(data) }
    func channelReadComplete(context: ChannelHandlerContext) { partner?.partnerFlush() }
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
