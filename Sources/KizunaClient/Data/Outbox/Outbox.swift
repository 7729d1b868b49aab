import Foundation
import KizunaCore

/// Mutations that reach the server even when the app is offline or killed (`app.data.outbox`): each is stored on the
/// device before it is sent, with an id of its own, and sent until the server has it.
///
/// ```swift
/// func post(_ text: String, to room: String, app: KizunaApp) async throws {
///     let item = try await app.data.outbox.send(.create("Message", ["roomId": .string(room), "text": .string(text)], parent: "Room:\(room)"))
///     for await state in await app.data.outbox.states(of: item.id) {
///         switch state {
///         case .pending, .sending: print("sending…")
///         case .sent(let record): print("sent", record["id"] ?? "")
///         case .failed(let error): print("not sent:", error.message)  // retry(item.id) or discard(item.id)
///         }
///     }
/// }
/// ```
///
/// An item moves `pending → sending → sent`, or to `failed` when the server refuses it for a reason a retry cannot fix
/// (``OutboxItem/State/failed(_:)``). Other failures (no network, the server or its store unavailable, a rate limit)
/// are retried with backoff and jitter, with the same id: a create names its record's id, so the server stores it once
/// however often it arrives. Items for the same record, or with the same ``OutboxMutation/parent``, are sent one at a
/// time in the order queued. Each item is sent as the user who was signed in when it was queued, and waits while
/// another is. An app killed at any point sends what it had queued on its next start (call ``start()`` at launch).
public actor Outbox {
    typealias Execute = @Sendable (_ document: String, _ variables: [String: JSONValue]) async throws(DataError) -> GraphQLResponse

    private let database: LocalDatabase
    private let execute: Execute
    private let auth: Auth
    var backoff = GraphQLWSReconnectBackoff()
    private var store: OutboxStore?
    private var entries: [OutboxPolicy.Entry] = []
    private var sender: Task<Void, Never>?
    private let wakes: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    private var listWatchers: [Int: AsyncStream<[OutboxItem]>.Continuation] = [:]
    private var stateWatchers: [Int: (id: String, continuation: AsyncStream<OutboxItem.State>.Continuation)] = [:]
    private var feedWatchers: [Int: AsyncStream<Feed>.Continuation] = [:]
    private var counter = 0

    init(database: LocalDatabase, auth: Auth, execute: @escaping Execute) {
        self.database = database
        self.auth = auth
        self.execute = execute
        (wakes, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Opens the outbox and starts sending what an earlier run left in it. Every other call does this too; call it at
    /// launch so nothing waits for the app's next mutation.
    /// - Throws: `store_too_new` when a newer SDK wrote the database; `internal_error` when it cannot be opened.
    public func start() throws(KizunaError) {
        guard store == nil else { return }
        let store = OutboxStore(database: try database.queue())
        entries = try store.rows().map { OutboxPolicy.Entry(row: $0, notBefore: nil) }
        self.store = store
        sender = Task { await self.run() }
        // Items wait for the user who queued them: a sign-in (or sign-out) may let some go.
        let (auth, wakeup) = (auth, wakeup)
        Task {
            for await _ in await auth.accountChanges() { wakeup.yield() }
        }
    }

    /// Stores `mutation` and queues it; answers once it is stored, so it is sent even if the app is killed now.
    /// - Throws: `validation_failed` for a mutation without a model, or an update or delete without an `id`; what
    ///   ``start()`` throws.
    @discardableResult
    public func send(_ mutation: OutboxMutation) async throws(KizunaError) -> OutboxItem {
        try start()
        guard let store else { throw KizunaError(.internalError, "The outbox is not open.") }
        var mutation = mutation
        try Self.validate(mutation)
        let id = UUID().uuidString.lowercased()
        if mutation.action == .create, mutation.input["id"] == nil { mutation.input["id"] = .string(id) }
        let item = OutboxItem(id: id, mutation: mutation, state: .pending, attempts: 0, queuedAt: Date())
        let row = try await store.insert(item, userId: await auth.account?.id)
        let position = entries.firstIndex { $0.row.seq > row.seq } ?? entries.endIndex
        entries.insert(OutboxPolicy.Entry(row: row, notBefore: nil), at: position)
        changed(item)
        return item
    }

    /// The items not yet sent (pending, sending and failed), in the order queued: now, and again after every change.
    public func items() throws(KizunaError) -> AsyncStream<[OutboxItem]> {
        try start()
        counter += 1
        let key = counter
        let (stream, continuation) = AsyncStream.makeStream(of: [OutboxItem].self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(snapshot)
        listWatchers[key] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(key) } }
        return stream
    }

    /// An item's state now, and each one after it; the stream ends when the item is sent or discarded (at once for an
    /// id the outbox no longer holds).
    public func states(of id: String) -> AsyncStream<OutboxItem.State> {
        let (stream, continuation) = AsyncStream.makeStream(of: OutboxItem.State.self)
        guard (try? start()) != nil, let item = item(id) else {
            continuation.finish()
            return stream
        }
        counter += 1
        let key = counter
        continuation.yield(item.state)
        stateWatchers[key] = (id, continuation)
        continuation.onTermination = { _ in Task { await self.stopWatching(key) } }
        return stream
    }

    /// The item with this id, while the outbox holds it (until it is sent or discarded).
    public func item(_ id: String) -> OutboxItem? {
        entries.first { $0.item.id == id }?.item
    }

    /// Queues a failed item again, in its place: it goes before anything queued after it in its lanes.
    /// - Parameter mutation: What to send instead, after the app fixed what was wrong (a field the server refused, an
    ///   update merged with ``OutboxItem/current`` and given its `_version`); `nil` sends the same again. A create keeps
    ///   its record's id when the new one names none.
    /// - Throws: `not_found` for an id the outbox does not hold; `conflict` for an item that has not failed;
    ///   `validation_failed` as ``send(_:)`` does.
    public func retry(_ id: String, with mutation: OutboxMutation? = nil) async throws(KizunaError) {
        try start()  // items an earlier run left can be retried or dropped before anything else opened the outbox
        guard let store, let index = entries.firstIndex(where: { $0.item.id == id }) else { throw Self.missing(id) }
        guard case .failed = entries[index].item.state else {
            throw KizunaError(.conflict, "Outbox item \(id) has not failed; only a failed item is retried.", field: "id")
        }
        if var mutation {
            try Self.validate(mutation)
            if mutation.action == .create, mutation.input["id"] == nil { mutation.input["id"] = entries[index].item.mutation.input["id"] }
            entries[index].item.mutation = mutation
        }
        entries[index].item.state = .pending
        entries[index].item.current = nil
        entries[index].notBefore = nil
        try await store.save(entries[index].item)
        changed(entries[index].item)
    }

    /// Drops an item that is pending or failed; it will not be sent.
    /// - Throws: `not_found` for an id the outbox does not hold; `conflict` for an item on the wire now.
    public func discard(_ id: String) async throws(KizunaError) {
        try start()  // items an earlier run left can be retried or dropped before anything else opened the outbox
        guard let store, let index = entries.firstIndex(where: { $0.item.id == id }) else { throw Self.missing(id) }
        guard entries[index].item.state != .sending else {
            throw KizunaError(.conflict, "Outbox item \(id) is being sent; it can be discarded if it fails.", field: "id")
        }
        try await store.delete(id)
        let item = entries.remove(at: index).item
        for (_, watcher) in stateWatchers where watcher.id == item.id { watcher.continuation.finish() }
        changed(nil)
    }

    /// Tries every pending item now, without waiting out backoffs: for when the network is back or the app returns to
    /// the foreground.
    public func sendNow() throws(KizunaError) {
        try start()
        for index in entries.indices { entries[index].notBefore = nil }
        wakeup.yield()
    }

    // MARK: Sending

    private func run() async {
        while !Task.isCancelled {
            let user = await auth.account?.id
            let now = ContinuousClock.now
            if let index = OutboxPolicy.next(in: entries, user: user, now: now) {
                await attempt(entries[index].item.id)
                continue
            }
            // Woken by a new item, a retry, sendNow, or the account changing; or when a backoff ends.
            await Self.wait(for: wakes, until: OutboxPolicy.nextWake(in: entries, user: user, now: now))
        }
    }

    private static func wait(for wakes: AsyncStream<Void>, until deadline: ContinuousClock.Instant?) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var wake = wakes.makeAsyncIterator()
                _ = await wake.next()
            }
            if let deadline { group.addTask { try? await Task.sleep(until: deadline) } }
            await group.next()
            group.cancelAll()
        }
    }

    private func attempt(_ id: String) async {
        guard let store, let index = entries.firstIndex(where: { $0.item.id == id }) else { return }
        entries[index].item.state = .sending
        entries[index].item.attempts += 1
        let item = entries[index].item
        try? await store.save(item)  // a kill now leaves it pending or sending: sent again either way, with its id
        changed(item)
        let answer: Result<GraphQLResponse, DataError>
        do {
            answer = .success(try await execute(item.mutation.document, ["input": .object(item.mutation.input)]))
        } catch {
            answer = .failure(error)
        }
        let outcome = OutboxPolicy.outcome(of: answer, for: item.mutation, retried: item.attempts > 1)
        guard let index = entries.firstIndex(where: { $0.item.id == id }) else { return }
        switch outcome {
        case .sent(let record):
            entries[index].item.state = .sent(record)
            try? await store.save(entries[index].item)  // lost: sent again at the next start, and stored once
            changed(entries.remove(at: index).item)
        case .retry(let notBefore):
            entries[index].item.state = .pending
            let delay = max(backoff.delay(attempt: item.attempts, random: Double.random(in: 0..<1)), notBefore ?? .zero)
            entries[index].notBefore = .now + delay
            try? await store.save(entries[index].item)
            changed(entries[index].item)
        case .failed(let error, let current):
            entries[index].item.state = .failed(error)
            entries[index].item.current = current
            try? await store.save(entries[index].item)
            changed(entries[index].item)
        }
    }

    // MARK: Watchers

    private var snapshot: [OutboxItem] { entries.map(\.item) }

    private func changed(_ item: OutboxItem?) {
        if let item {
            for (_, watcher) in stateWatchers where watcher.id == item.id {
                watcher.continuation.yield(item.state)
                if case .sent = item.state { watcher.continuation.finish() }
            }
        }
        let snapshot = snapshot
        for watcher in listWatchers.values { watcher.yield(snapshot) }
        if !feedWatchers.isEmpty {
            let feed = Feed(entries: entries.map { ($0.item, $0.row.userId) }, sent: item.flatMap { if case .sent = $0.state { $0 } else { nil } })
            for watcher in feedWatchers.values { watcher.yield(feed) }
        }
        wakeup.yield()
    }

    private func stopWatching(_ key: Int) {
        listWatchers[key] = nil
        feedWatchers[key] = nil
        stateWatchers[key] = nil
    }

    private static func missing(_ id: String) -> KizunaError {
        KizunaError(.notFound, "The outbox holds no item \(id); it was sent or discarded.", field: "id")
    }

    private static func validate(_ mutation: OutboxMutation) throws(KizunaError) {
        guard let first = mutation.model.unicodeScalars.first, CharacterSet.uppercaseLetters.contains(first),
            mutation.model.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "_" })
        else {
            throw KizunaError(.validationFailed, "'\(mutation.model)' is not a model name, such as Message.", field: "model")
        }
        switch mutation.action {
        case .create:
            guard mutation.input["id"].map({ $0.stringValue?.isEmpty == false }) ?? true else {
                throw KizunaError(.validationFailed, "A create's id, when given, must be non-empty text.", field: "input.id")
            }
        case .update, .delete:
            guard mutation.input["id"]?.stringValue?.isEmpty == false else {
                throw KizunaError(.validationFailed, "An \(mutation.action.rawValue) must name its record's id.", field: "input.id")
            }
        }
    }
}

extension Outbox {
    /// What the offline cache follows: every item the outbox holds, with who queued it, after each change, and the
    /// item the change sent, if it did.
    struct Feed: Sendable {
        var entries: [(item: OutboxItem, userId: String?)]
        var sent: OutboxItem?
    }

    /// The outbox's items now, and again after every change (for the offline cache's live queries).
    func feed() throws(KizunaError) -> AsyncStream<Feed> {
        try start()
        counter += 1
        let key = counter
        let (stream, continuation) = AsyncStream.makeStream(of: Feed.self)
        continuation.yield(Feed(entries: entries.map { ($0.item, $0.row.userId) }, sent: nil))
        feedWatchers[key] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(key) } }
        return stream
    }

    /// Sets the backoff between tries of an item (tests use a short one).
    func setBackoff(_ backoff: GraphQLWSReconnectBackoff) { self.backoff = backoff }
}
