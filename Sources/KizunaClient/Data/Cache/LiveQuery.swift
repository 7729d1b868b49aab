import Foundation
import KizunaCore

/// A question to the offline cache — a model's records, filtered and sorted — that ``DataClient/observe(_:)`` answers
/// now and again after every change.
///
/// ```swift
/// struct Message: Codable, Sendable {
///     var id: String
///     var roomId: String
///     var text: String
///     var createdAt: String
/// }
///
/// func show(room: String, app: KizunaApp) async throws {
///     let messages = LiveQuery<Message>("Message", matching: ["roomId": .string(room)], sortedBy: \.createdAt)
///     for try await list in app.data.observe(messages) {
///         for message in list { print(message.isPending ? "sending…" : "", message.value.text) }
///     }
/// }
/// ```
///
/// `matching` is tested by the store, so a query on one room reads that room's records only; `where` runs on the
/// decoded records after it, for anything else. Records tie-broken by `id`, so the order is the same every time.
public struct LiveQuery<Record: Decodable & Sendable>: Sendable {
    /// The model, as the schema names it (`Message`).
    public var model: String
    /// Fields and the values they must hold (JSON equality, as the record's JSON carries them).
    public var matching: [String: JSONValue]
    /// A further test on each record, after `matching`.
    public var isIncluded: (@Sendable (Record) -> Bool)?
    /// The order.
    public var areInIncreasingOrder: @Sendable (Record, Record) -> Bool
    /// At most this many records, the first in the order.
    public var limit: Int?

    /// - Parameters:
    ///   - model: The model (`Message`).
    ///   - matching: Fields and the values they must hold.
    ///   - isIncluded: A further test on each record.
    ///   - limit: At most this many, the first in the order.
    ///   - areInIncreasingOrder: The order.
    public init(
        _ model: String, matching: [String: JSONValue] = [:], where isIncluded: (@Sendable (Record) -> Bool)? = nil, limit: Int? = nil,
        sortedBy areInIncreasingOrder: @escaping @Sendable (Record, Record) -> Bool
    ) {
        self.model = model
        self.matching = matching
        self.isIncluded = isIncluded
        self.limit = limit
        self.areInIncreasingOrder = areInIncreasingOrder
    }

    /// A query sorted by one key of the record, ascending unless `descending`.
    public init<Key: Comparable & SendableMetatype>(
        _ model: String, matching: [String: JSONValue] = [:], where isIncluded: (@Sendable (Record) -> Bool)? = nil, limit: Int? = nil,
        sortedBy key: @escaping @Sendable (Record) -> Key, descending: Bool = false
    ) {
        self.init(model, matching: matching, where: isIncluded, limit: limit) { a, b in descending ? key(b) < key(a) : key(a) < key(b) }
    }
}

/// One record of a live query's answer: the server's, or one the app changed through the outbox that the server has
/// not confirmed yet (optimistic UI).
public struct LiveRecord<Record: Sendable>: Sendable, Identifiable {
    /// The record's id.
    public var id: String
    /// The record, with the outbox's changes not yet confirmed applied to it.
    public var value: Record
    /// The newest outbox item that changed it and is not confirmed yet; `nil` for the server's record as it is.
    public var outboxItem: OutboxItem?

    /// Whether an outbox item changing it is still waiting or on the wire (a "sending…" badge).
    public var isPending: Bool { outboxItem?.state.isUnsent ?? false }
    /// Whether the server refused the newest change to it; the item says why, and can be retried or discarded.
    public var hasFailed: Bool {
        if case .failed = outboxItem?.state { true } else { false }
    }
}

extension LiveRecord: Equatable where Record: Equatable {}
extension LiveRecord: Hashable where Record: Hashable {}

/// The records a live query shows, before decoding: the cache's rows with the outbox's unconfirmed items applied.
enum LiveMerge {
    /// One record as a live query sees it.
    struct Entry: Sendable, Equatable {
        var id: String
        var record: [String: JSONValue]
        var item: OutboxItem?
        /// Made on the device by a create the server's copy has not replaced yet.
        var isLocal = false
    }

    /// `rows` (the cache's records of one model, by id) with `items` (the outbox's items for that model that the
    /// server has not confirmed, in the order queued) applied: a create adds its record (the cache's, once the server's
    /// copy has arrived), an update sets its fields on the record, a delete removes it — unless it failed, when the
    /// record stays, marked with the failure.
    static func apply(_ items: [OutboxItem], to rows: [(id: String, record: [String: JSONValue])]) -> [Entry] {
        var order: [String] = []
        var entries: [String: Entry] = [:]
        for row in rows {
            order.append(row.id)
            entries[row.id] = Entry(id: row.id, record: row.record, item: nil)
        }
        for item in items {
            guard let id = item.mutation.recordId else { continue }
            switch item.mutation.action {
            case .create:
                if entries[id] == nil {
                    order.append(id)
                    entries[id] = Entry(id: id, record: created(item), item: item, isLocal: true)
                } else {
                    entries[id]?.item = item
                }
            case .update:
                guard var entry = entries[id] else { continue }
                for (name, value) in item.mutation.input where name != "_version" { entry.record[name] = value }
                entry.item = item
                entries[id] = entry
            case .delete:
                guard entries[id] != nil else { continue }
                if case .failed = item.state { entries[id]?.item = item } else { entries[id] = nil }
            }
        }
        return order.compactMap { entries[$0] }
    }

    /// The record a create makes, as far as the device knows it before the server answers: its input, with the fields
    /// the server sets on every record filled in (`createdAt`, `updatedAt`: when it was queued; `_version` 0), so a
    /// generated model type, which requires them, decodes it.
    static func created(_ item: OutboxItem) -> [String: JSONValue] {
        var record = item.mutation.input
        let queued = JSONValue.string(WireFormat.dateTimeText(item.queuedAt))
        if record["createdAt"] == nil { record["createdAt"] = queued }
        if record["updatedAt"] == nil { record["updatedAt"] = queued }
        if record["_deleted"] == nil { record["_deleted"] = .bool(false) }
        if record["_version"] == nil { record["_version"] = 0 }  // none yet: the server's first is 1
        return record
    }

    /// Whether `record` holds every value of `matching`.
    static func matches(_ record: [String: JSONValue], _ matching: [String: JSONValue]) -> Bool {
        matching.allSatisfy { name, value in (record[name] ?? .null) == value }
    }
}

extension LiveQuery {
    /// The answer to the query from `entries`: those matching, decoded, tested, sorted (ties by id), limited.
    /// - Throws: ``DataError/decoding(_:)`` when a record of the server's does not decode as `Record`. A record made
    ///   on the device that does not (the type wants a field only the server sets) is left out until the server's
    ///   copy arrives.
    func answer(from entries: [LiveMerge.Entry]) throws(DataError) -> [LiveRecord<Record>] {
        var records: [LiveRecord<Record>] = []
        for entry in entries where LiveMerge.matches(entry.record, matching) {
            let value: Record
            do {
                value = try KizunaHTTPClient.decoder.decode(Record.self, from: Data(JSONValue.object(entry.record).jsonBytes))
            } catch {
                if entry.isLocal { continue }
                throw .decoding("A cached \(model) record does not decode as \(Record.self): \(error)")
            }
            if let isIncluded, !isIncluded(value) { continue }
            records.append(LiveRecord(id: entry.id, value: value, outboxItem: entry.item))
        }
        records.sort { a, b in
            if areInIncreasingOrder(a.value, b.value) { return true }
            if areInIncreasingOrder(b.value, a.value) { return false }
            return a.id < b.id
        }
        if let limit, records.count > limit { records.removeLast(records.count - limit) }
        return records
    }
}
