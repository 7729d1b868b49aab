import Foundation
import KizunaCore

extension DataCache {
    /// Keeps `model` current for `user` until cancelled: sync, follow the subscriptions, sync again when they cannot
    /// resume; after a failure a retry may fix (no network, the server unavailable), again after a backoff.
    func replicate(_ model: String, user: String, client: DataClient) async {
        // Failures in a row: reset only once the subscriptions delivered something, so a socket that keeps refusing
        // them (a sync succeeding each time) still backs off.
        var failures = 0
        while !Task.isCancelled {
            do {
                let (since, fields) = try await sync(model, user: user, client: client)
                let delivered = try await follow(model, user: user, client: client, since: since, fields: fields)
                failures = delivered ? 0 : failures + 1
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                guard Self.isTransient(error) else {
                    failed(model: model, user: user, error: error)
                    return
                }
                failures += 1
            }
            if failures > 0 { try? await Task.sleep(for: backoff.delay(attempt: failures, random: Double.random(in: 0..<1))) }
        }
    }

    /// Whether a later try may get past `error`: no answer at all (as the outbox retries one), or a refusal with one
    /// of the outbox's transient codes; an answer that does not decode is not.
    static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case DataError.transport: return true
        case DataError.decoding: return false
        case let error as DataError: return OutboxPolicy.transient.contains(error.code)
        case let error as KizunaError: return OutboxPolicy.transient.contains(error.code)
        default: return false
        }
    }

    /// Brings the copy of `model` up to the server's change log: from the last sync's position, or from the start when
    /// there was none, the model's fields changed, the last full sync is older than ``fullSyncInterval``, or the
    /// server answers `sync_expired`.
    /// - Returns: The seq the subscriptions resume after, and the fields the copy holds.
    func sync(_ model: String, user: String, client: DataClient) async throws -> (since: Int64, fields: [String]) {
        guard let store else { throw KizunaError(.internalError, "The offline cache is not open.") }
        let names = ClientNames(model: model)
        let state = try store.syncState(user: user, model: model)
        let fields = try await Self.fields(of: model, client: client, stored: state?.fields)
        var full = RecordStore.SyncState.needsFullSync(state, fields: fields, now: EpochMillis.now, interval: fullSyncInterval)
        var generation = (state?.generation ?? 0) + (full ? 1 : 0)
        var since = full ? nil : state?.lastSeq
        var nextToken: String?
        generations[model] = generation
        let document = """
            query KizunaSync($since: String, $nextToken: String) { \(names.sync)(since: $since, nextToken: $nextToken, limit: 500) { \
            items { \(fields.joined(separator: " ")) } nextToken lastSeq } }
            """
        while true {
            var variables: [String: JSONValue] = [:]
            if let since { variables["since"] = .string(since) }
            if let nextToken { variables["nextToken"] = .string(nextToken) }
            let response = try await client.execute(document, variables: variables, operationName: "KizunaSync")
            if let error = response.errors.first {
                // Deletions after our position may be pruned already: start again from the start, dropping whatever
                // that sync does not see.
                guard error.code == .syncExpired, !full else { throw DataError.graphQL(response.errors, data: response.data) }
                (full, since, nextToken) = (true, nil, nil)
                generation += 1
                generations[model] = generation
                continue
            }
            guard let page = response.data?[names.sync]?.objectValue, let lastSeq = page["lastSeq"]?.stringValue,
                let seq = Self.seq(of: lastSeq)
            else {
                throw DataError.decoding("\(names.sync) answered without items and a lastSeq.")
            }
            let records = (page["items"]?.arrayValue ?? []).compactMap(\.objectValue)
            // Answered for a user no longer signed in, or after the cache stopped following the model: not written,
            // so a switch mid-sync cannot file one account's records, or a full sync's deletions, under another's.
            try checkCurrent(user)
            let written = try await store.write(records, user: user, model: model, seq: seq, generation: generation)
            self.written(written, model: model, user: user)
            nextToken = page["nextToken"]?.stringValue
            guard nextToken == nil else { continue }
            try checkCurrent(user)
            let finished = RecordStore.SyncState(fields: fields, lastSeq: lastSeq, generation: generation, fullSyncAt: EpochMillis.now)
            try await store.finishSync(user: user, model: model, state: finished, full: full)
            if full { self.written([:], model: model, user: user) }
            return (seq, fields)
        }
    }

    /// Follows `model`'s changes after `since` on its three subscriptions, writing each, until one of them cannot
    /// resume (a sync is due).
    /// - Returns: Whether any change was delivered.
    /// - Throws: What ended a subscription; `unavailable` when the server completed one.
    func follow(_ model: String, user: String, client: DataClient, since: Int64, fields: [String]) async throws -> Bool {
        let names = ClientNames(model: model)
        let selection = fields.joined(separator: " ")
        let delivered = Locked(false)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for field in [names.onCreate, names.onUpdate, names.onDelete] {
                let document = "subscription KizunaCache($since: String) { \(field)(since: $since) { \(selection) } }"
                group.addTask {
                    for try await event in client.subscribe(document, variables: ["since": .string(String(since))], field: field, as: JSONValue.self)
                    {
                        switch event {
                        case .resync: return true
                        case .value(let record, let seq):
                            guard let record = record.objectValue, let seq = seq.flatMap({ Int64($0) }) else { continue }
                            try await self.apply(record, seq: seq, model: model, user: user)
                            delivered.withLock { $0 = true }
                        }
                    }
                    return false
                }
            }
            // The first subscription to stop — for a resync, or the socket giving up — ends the others; the caller syncs
            // again (and follows again after it).
            let resync = try await group.next() ?? false
            group.cancelAll()
            guard resync else { throw KizunaError(.unavailable, "The server ended a subscription of the offline cache.") }
        }
        return delivered.withLock { $0 }
    }

    /// Writes one delivered change.
    private func apply(_ record: [String: JSONValue], seq: Int64, model: String, user: String) async throws {
        guard let store else { return }
        try checkCurrent(user)
        let written = try await store.write([record], user: user, model: model, seq: seq, generation: generations[model] ?? 0)
        self.written(written, model: model, user: user)
    }

    /// Throws `CancellationError` when the task was cancelled (the cache stopped following the model) or `user` is no
    /// longer the one signed in.
    private func checkCurrent(_ user: String) throws {
        if Task.isCancelled || user != self.user { throw CancellationError() }
    }

    /// The seq of a `lastSeq` (`"<seq>:<time>"`).
    static func seq(of lastSeq: String) -> Int64? {
        lastSeq.split(separator: ":").first.flatMap { Int64($0) }
    }

    /// The fields the cache keeps of `model`: every field of its type that is not a relation, by the live schema's
    /// introspection (`id` and `_deleted` always), sorted; the stored ones when the server cannot be asked.
    static func fields(of model: String, client: DataClient, stored: [String]?) async throws -> [String] {
        let document = """
            query KizunaFields($name: String!) { __type(name: $name) { fields { name type { kind ofType { kind ofType { kind ofType { kind } } } } } } }
            """
        let response: GraphQLResponse
        do {
            response = try await client.execute(document, variables: ["name": .string(model)], operationName: "KizunaFields")
        } catch {
            if let stored { return stored }
            throw error
        }
        guard response.errors.isEmpty else { throw DataError.graphQL(response.errors, data: response.data) }
        guard let fields = response.data?["__type"]?["fields"]?.arrayValue else {
            throw KizunaError(.notFound, "The app's schema has no model \(model).", field: "model")
        }
        var names: Set<String> = ["id", "_deleted"]
        for field in fields {
            guard let name = field["name"]?.stringValue else { continue }
            var type = field["type"]
            while let kind = type?["kind"]?.stringValue, kind == "NON_NULL" || kind == "LIST" { type = type?["ofType"] }
            if let kind = type?["kind"]?.stringValue, kind == "SCALAR" || kind == "ENUM" { names.insert(name) }
        }
        return names.sorted()
    }
}
