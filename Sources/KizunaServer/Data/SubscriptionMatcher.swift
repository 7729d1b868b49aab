import Foundation
import GraphQL
import KizunaCore
import Logging

/// Decides which subscribers a data change goes to, and what each is sent: the delivery half of subscriptions, with
/// no transport in it (the WebSocket layer hands it changes from the feed and sends what it answers).
///
/// A change of kind `data` is decoded once: its model, its record as the change left it (the payload's `record`,
/// in the stored form) and which kind of change it was (version 1 and not deleted: created; deleted: deleted;
/// otherwise updated). A subscriber is sent it when it subscribed to that model and kind, its filter matches the
/// record (``DataFilter/matches(_:)``, the SQL filter's semantics) and the read rules let it read the record
/// (``DataAuthorization/mayRead(_:record:related:for:)``, the rules queries are narrowed by). The records `via`
/// rules follow are loaded once per change, whatever the number of subscribers, and only when one of them wants the
/// change; they are read as they are now, so a user added to a room receives its messages from the next one on, and
/// one removed stops receiving them.
///
/// What is sent is GraphQL's own answer: the subscriber's document executed with the record as the root field's
/// value (the spec's "execute subscription event", which `graphqlSubscribe` runs for each event of a source stream;
/// running that step alone needs no stream and no task per subscriber), with `extensions.seq`, the position to
/// resume after.
struct SubscriptionMatcher: Sendable {
    /// Loads the records `record`'s `via` read rules follow, keyed by relation field, as
    /// ``DataAuthorization/relatedRecords(of:record:for:on:)`` does.
    typealias RelatedRecords = @Sendable (_ model: DataModel, _ record: [String: JSONValue]) async throws -> [String: [String: JSONValue]]

    /// One subscriber: whatever the transport knows it by, who it is, and what it subscribed to.
    struct Subscriber<Key: Sendable>: Sendable {
        var key: Key
        var caller: DataCaller
        var request: SubscriptionRequest
    }

    /// A data change, decoded once for every subscriber.
    struct Change: Sendable {
        /// Its position in the change log.
        var seq: Int64
        /// The changed record's model, in the live schema.
        var model: DataModel
        /// Whether the record was created, updated or deleted.
        var kind: SubscriptionRequest.Kind
        /// The record as the change left it, in the stored form.
        var record: [String: JSONValue]
    }

    let runtime: DataRuntime
    let related: RelatedRecords
    let logger: Logger

    /// A matcher for the app `runtime` serves.
    /// - Parameters:
    ///   - related: How the records of `via` rules are loaded; the store, as it is now, when left out.
    init(runtime: DataRuntime, logger: Logger = Logger(label: "kizuna.subscriptions"), related: RelatedRecords? = nil) {
        self.runtime = runtime
        self.logger = logger
        if let related {
            self.related = related
        } else {
            self.related = { model, record in
                try await runtime.authorization.relatedRecords(of: model, record: record, for: .read, on: runtime.database)
            }
        }
    }

    /// `change` decoded, or `nil` when it is not one a subscription of this app can be sent: another kind or app, a
    /// model the live schema no longer has, or a payload without the record (written before changes carried it).
    func decode(_ change: ChangeRecord) -> Change? {
        guard change.kind == DataRuntime.changeKind, change.entityId == runtime.app, let text = change.payload,
            let payload = try? JSONValue(parsing: text),
            case .string(let name)? = payload["model"], let model = runtime.data.model(named: name),
            case .object(let record)? = payload["record"]
        else { return nil }
        let deleted = payload["deleted"]?.boolValue ?? false
        let kind: SubscriptionRequest.Kind = deleted ? .delete : (change.version == 1 ? .create : .update)
        return Change(seq: change.seq, model: model, kind: kind, record: record)
    }

    /// Whether `request` asks for `change`, before who asks is looked at: the same model and kind of change, and a
    /// filter the record matches.
    func wants(_ request: SubscriptionRequest, _ change: Change) -> Bool {
        request.model.name == change.model.name && request.kind == change.kind && request.filter.matches(change.record)
    }

    /// What one subscriber is sent.
    struct Delivery<Key: Sendable>: Sendable {
        var key: Key
        /// The `next` payload (``payload(of:for:_:)``).
        var payload: JSONValue
        /// Its JSON text: written once for every subscriber a shared payload is for (``DeliveryCache``).
        var text: [UInt8]
    }

    /// What `change` sends to each of `subscribers`, in their order; those it is not for are left out.
    /// - Throws: What loading the `via` records throws: the change is then for nobody yet, and the caller retries it.
    func deliveries<Key: Sendable>(of change: ChangeRecord, to subscribers: [Subscriber<Key>]) async throws -> [Delivery<Key>] {
        guard let decoded = runtime.deliveries.change(change.seq, decode: { decode(change) }) else { return [] }
        let interested = subscribers.filter { wants($0.request, decoded) }
        guard !interested.isEmpty else { return [] }
        let authorization = runtime.authorization
        var via: [String: [String: JSONValue]] = [:]
        if !authorization.viaFields(of: decoded.model, for: .read).isEmpty { via = try await related(decoded.model, decoded.record) }
        var deliveries: [Delivery<Key>] = []
        for subscriber in interested where authorization.mayRead(decoded.model, record: decoded.record, related: via, for: subscriber.caller) {
            let (caller, request) = (subscriber.caller, subscriber.request)
            let sent: DeliveryCache.SharedPayload
            if let shared = request.sharedKey {
                sent = try await runtime.deliveries.payload(decoded.seq, shared) { try await payload(of: decoded, for: caller, request) }
            } else {
                sent = DeliveryCache.SharedPayload(try await payload(of: decoded, for: caller, request))
            }
            deliveries.append(Delivery(key: subscriber.key, payload: sent.json, text: sent.bytes))
        }
        return deliveries
    }

    /// The `next` payload of `change` for one subscriber: `data` (the root field's answer on the record), `errors`
    /// when a field failed (a relation the caller may not read), and `extensions` with `seq`, as a decimal string.
    ///
    /// Relation fields are loaded as `getX` loads them, one statement per relation level for this subscriber.
    func payload(of change: Change, for caller: DataCaller, _ request: SubscriptionRequest) async throws -> JSONValue {
        let notes = RequestNotes()
        let result = try await GraphQL.execute(
            schema: try runtime.schema(), documentAST: request.document,
            rootValue: DataRecords.output(stored: change.record, model: change.model),
            context: DataRequest(caller: caller, notes: notes), variableValues: request.variables, operationName: request.operationName)
        var body: [String: JSONValue] = [:]
        if let data = result.data { body["data"] = DataRecords.json(data) }
        if !result.errors.isEmpty {
            body["errors"] = .array(
                try result.errors.map { error in
                    try GraphQLExecutor.json(error) { other in
                        logger.error("A subscription delivery failed", metadata: ["error": "\(String(reflecting: other))", "seq": "\(change.seq)"])
                        return "The server could not answer this field; the log has the details (seq \(change.seq))."
                    }
                })
        }
        var extensions = notes.extensions?.objectValue ?? [:]
        extensions["seq"] = .string(String(change.seq))
        body["extensions"] = .object(extensions)
        return .object(body)
    }
}
