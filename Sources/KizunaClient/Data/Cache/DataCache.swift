import Foundation
import KizunaCore

/// The offline cache behind ``DataClient/observe(_:)``: each user's copy of the records they may read, in the SDK's
/// database, kept current while a live query watches a model, and answered from the device whether or not the
/// server can be reached.
///
/// For each model a live query watches, the cache syncs (`syncXs`, from the last sync's `lastSeq`, or from the start
/// the first time, when the model's fields changed, or when the server's tombstones no longer go back that far), then
/// follows the model's `onCreate`, `onUpdate` and `onDelete` subscriptions from that position, and syncs again
/// whenever they cannot resume. The outbox's items not yet confirmed are applied on top ( ``LiveMerge``), so a send
/// shows at once, offline too.
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
    private var counter = 0

    init(database: LocalDatabase, outbox: Outbox, auth: Auth) {
        self.database = database
        self.outbox = outbox
        self.auth = auth
    }

    /// Opens the cache: its tables, the outbox's items, and the signed-in account (followed from now on).
    private func start() async throws(KizunaError) {
        guard store == nil else { return }
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

    /// Registers a live query, answers it at once from the device, and keeps its model current.
    /// - Parameter ended: Set when the app stopped iterating; a query that ended before it was added is removed again.
    func add(_ observer: Observer, ended: Locked<Bool>) async throws(KizunaError) -> Int {
        try await start()
        counter += 1
        let key = counter
        observers[key] = observer
        if ended.withLock({ $0 }) {
            remove(key)
            return key
        }
        refresh(key)
        if replicas[observer.model] == nil { replicas[observer.model] = replica(observer.model, client: observer.client) }
        return key
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

    /// Records of `model` were written for `user`: their sent items are confirmed, and its queries answer again.
    func written(_ ids: [String], model: String, user: String) {
        guard user == self.user else { return }
        for id in ids { settling[model]?[id] = nil }
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
        replicas[model] = nil
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
            observers[key] = nil
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
