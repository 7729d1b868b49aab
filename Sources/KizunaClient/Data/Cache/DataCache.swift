import Foundation
import KizunaCore

/// The offline cache behind ``DataClient/observe(_:)``: each user's copy of the records they may read, in the SDK's
/// database, kept current while a live query watches a model, and answered from the device whether or not the
/// server can be reached.
///
/// For each model a live query watches, the cache syncs (`syncXs`, from the last sync's `lastSeq`, or from the start
/// the first time, when the model's fields changed, when the last full sync is older than ``fullSyncInterval``, or
/// when the server's tombstones no longer go back that far), then follows the model's `onCreate`, `onUpdate` and
/// `onDelete` subscriptions from that position, and syncs again whenever they cannot resume. The outbox's items not
/// yet confirmed are applied on top (``LiveMerge``), so a send shows at once, offline too.
actor DataCache {
    /// A live query registered with the cache.
    struct Observer {
        let model: String
        let matching: [String: JSONValue]
        let client: DataClient
        /// Answers the query from the merged records and yields it.
        let refresh: @Sendable ([LiveMerge.Entry]) -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private let database: LocalDatabase
    private let outbox: Outbox
    private let auth: Auth
    private(set) var store: RecordStore?
    /// Whose copy the live queries show: the signed-in account's id, `""` for nobody.
    private(set) var user = ""
    private var observers: [Int: Observer] = [:]
    /// The task keeping each watched model current for ``user``.
    private var replicas: [String: Task<Void, Never>] = [:]
    /// The generation a model's writes are marked with: the last full sync's, or the one under way.
    var generations: [String: Int64] = [:]
    private var outboxEntries: [(item: OutboxItem, userId: String?)] = []
    /// Items the outbox sent whose record the cache has not received yet, by model and record id: shown as sent
    /// until it comes, so a message does not blink out between its answer and its delivery.
    private var settling: [String: [String: OutboxItem]] = [:]
    var backoff = GraphQLWSReconnectBackoff()
    /// How old a copy's last full sync may be before the next sync starts from the start (24 hours, as Amplify
    /// DataStore's `fullSyncInterval`): only a full sync sees records whose access changed without a change of their
    /// own (a room the user joined, or left).
    var fullSyncInterval: Duration = .seconds(24 * 3600)
    private var counter = 0
    /// The opening under way, when one is.
    private var opening: Task<Void, any Error>?

    init(database: LocalDatabase, outbox: Outbox, auth: Auth) {
        self.database = database
        self.outbox = outbox
        self.auth = auth
    }

    /// Opens the cache: its tables, the outbox's items, and the signed-in account (followed from now on). Callers
    /// arriving while it opens wait for the same opening.
    private func start() async throws(KizunaError) {
        if store != nil { return }
        if let opening {
            try await Self.wait(for: opening)
            return
        }
        let task = Task { try await self.open() }
        opening = task
        defer { opening = nil }
        try await Self.wait(for: task)
    }

    private static func wait(for task: Task<Void, any Error>) async throws(KizunaError) {
        do {
            try await task.value
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.internalError, "The offline cache could not be opened: \(error)")
        }
    }

    private func open() async throws(KizunaError) {
        let store = RecordStore(database: try database.queue())
        let feed = try await outbox.feed()
        self.store = store
        user = await auth.account?.id ?? ""
        Task { [weak self] in
            for await change in feed {
                guard let self else { return }
                await self.outboxChanged(change)
            }
        }
        Task { [weak self, auth] in
            for await account in await auth.accountChanges() {
                guard let self else { return }
                await self.switchUser(to: account?.id ?? "")
            }
        }
    }

    /// Where a live query's registration is, shared by ``add(_:registration:)`` and the stream's termination, each of
    /// which moves it in one step under its lock.
    enum Registration: Sendable {
        case pending
        case added(Int)
        case ended
    }

    /// Registers a live query, answers it at once from the device, and keeps its model current — unless its stream
    /// ended first.
    func add(_ observer: Observer, registration: Locked<Registration>) async throws(KizunaError) {
        try await start()
        counter += 1
        let key = counter
        let kept = registration.withLock { state in
            guard case .pending = state else { return false }
            state = .added(key)
            return true
        }
        guard kept else { return }
        observers[key] = observer
        refresh(key)
        if observers[key] != nil, replicas[observer.model] == nil { replicas[observer.model] = replica(observer.model, client: observer.client) }
    }

    /// Removes a live query; a model no query watches any more stops being followed.
    func remove(_ key: Int) {
        guard let observer = observers.removeValue(forKey: key) else { return }
        if !observers.values.contains(where: { $0.model == observer.model }) {
            replicas.removeValue(forKey: observer.model)?.cancel()
        }
    }

    // MARK: Changes

    /// The outbox changed: queries on the models its items touch answer again.
    private func outboxChanged(_ feed: Outbox.Feed) {
        let touched = Set((outboxEntries.map(\.item) + feed.entries.map(\.item)).map(\.mutation.model))
        outboxEntries = feed.entries
        if let sent = feed.sent, let id = sent.mutation.recordId, !feed.entries.contains(where: { $0.item.id == sent.id }) {
            settling[sent.mutation.model, default: [:]][id] = sent
        }
        for model in touched { refresh(model: model) }
    }

    /// Records of `model` were written for `user` (by id, with their `_version`): a sent item is confirmed by its
    /// record at the version it answered with, or a later one; the model's queries answer again.
    func written(_ records: [String: Int?], model: String, user: String) {
        guard user == self.user else { return }
        for (id, version) in records {
            guard let item = settling[model]?[id] else { continue }
            let sent: Int? = if case .sent(let record) = item.state { record["_version"]?.numberValue.map { Int($0) } } else { nil }
            if let sent, let version, version < sent { continue }  // an older version, delivered late
            settling[model]?[id] = nil
        }
        refresh(model: model)
    }

    /// Another account signed in, or the one signed in signed out: queries show that user's copy, kept current as
    /// that user.
    private func switchUser(to user: String) {
        guard user != self.user else { return }
        self.user = user
        settling = [:]
        generations = [:]
        for task in replicas.values { task.cancel() }
        replicas = [:]
        for key in observers.keys.sorted() {
            guard let observer = observers[key] else { continue }
            refresh(key)
            if replicas[observer.model] == nil { replicas[observer.model] = replica(observer.model, client: observer.client) }
        }
    }

    /// A model cannot be followed for a reason a retry will not fix (the user may not read it, no such model): its
    /// queries end with the error.
    func failed(model: String, user: String, error: any Error) {
        guard user == self.user else { return }
        for (key, observer) in observers where observer.model == model {
            observer.fail(error)
            observers[key] = nil
        }
        replicas.removeValue(forKey: model)?.cancel()
    }

    // MARK: Answers

    private func refresh(model: String) {
        for (key, observer) in observers where observer.model == model { refresh(key) }
    }

    private func refresh(_ key: Int) {
        guard let observer = observers[key], let store else { return }
        do {
            let rows = try store.records(user: user, model: observer.model, matching: observer.matching)
            observer.refresh(LiveMerge.apply(unconfirmed(observer.model), to: rows))
        } catch {
            observer.fail(error)
            remove(key)
        }
    }

    /// The items changing `model` the server has not confirmed to the cache: sent ones waiting for their record, then
    /// the outbox's, in the order queued.
    private func unconfirmed(_ model: String) -> [OutboxItem] {
        let sent = (settling[model] ?? [:]).values.sorted { $0.queuedAt < $1.queuedAt }
        let queued = outboxEntries.filter { $0.item.mutation.model == model && ($0.userId ?? "") == user }.map(\.item)
        return sent + queued
    }

    private func replica(_ model: String, client: DataClient) -> Task<Void, Never> {
        let user = user
        return Task { await self.replicate(model, user: user, client: client) }
    }
}

extension DataCache {
    /// Sets the backoff between tries of a sync (tests use a short one).
    func setBackoff(_ backoff: GraphQLWSReconnectBackoff) { self.backoff = backoff }
}
