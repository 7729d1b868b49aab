import KizunaCore
import SQLKit

/// Who is asking for records: what every access rule is decided on.
package struct DataCaller: Sendable, Equatable {
    /// A signed-in user's account id; `nil` for a caller with only an API key, or none.
    package var userId: String?
    /// The user's groups, which `groups` rules name.
    package var groups: Set<String>
    /// Whether the request presented a valid API key of the app: what `public` rules require, as AppSync's
    /// `API_KEY` mode does.
    package var hasAPIKey: Bool
    /// Whether an operator asks through the admin API (`kizuna data query` without `--as`): every rule lets it in,
    /// on every model and operation, including models without rules. It is no user: owner fields it would fill on a
    /// create stay null.
    package var isOperator: Bool

    package init(userId: String? = nil, groups: Set<String> = [], hasAPIKey: Bool = false, isOperator: Bool = false) {
        self.userId = userId
        self.groups = groups
        self.hasAPIKey = hasAPIKey
        self.isOperator = isOperator
    }

    /// A caller with neither a session nor an API key: every rule refuses it.
    package static let anonymous = DataCaller()
}

/// Which existing records a caller may read, update or delete.
package enum DataAccess: Sendable {
    /// None: no rule for the operation lets this caller in.
    case denied
    /// Every record: a rule let the caller in without looking at any record (`public`, `private`, `groups`).
    case all
    /// The records for which this condition on the model's table (columns qualified with the table's name) holds.
    case rows(any SQLExpression)
}

/// The one engine for a model's `@auth` rules, deciding the same way in SQL (queries, updates, deletes) and in memory
/// (creates, and realtime deliveries to each subscriber).
///
/// Both sides start from one ``Grant``: the rules that allow the operation, with every part that depends only on
/// the caller (an API key, a session, a group) already decided, leaving only row checks (an owner field holds the
/// caller's id). The SQL side compiles those checks into a condition; the memory side evaluates the very same
/// checks on a record, so a subscriber is sent exactly the changes a query would have shown it.
///
/// The semantics are AppSync's, deny by default: a model without rules, or an operation no rule lists, lets nobody
/// in. Rules are ORed: any one rule letting the caller in is enough. An operator (``DataCaller/isOperator``) is
/// let in whatever the rules.
/// - `public` (``AuthRule/Allow/anyone``) lets in a caller that presents the app's API key, signed in or not. As in
///   AppSync, where an `API_KEY` rule is not met by a user-pool token, a session alone is not enough: it is what a
///   `private` rule is for.
/// - `private` (``AuthRule/Allow/signedIn``) lets in any caller with a user id.
/// - `groups` lets in a signed-in user in any of the listed groups.
/// - `owner` lets in the user whose id is the record's owner field; `owners`, a user whose id is an element of the
///   record's list field.
/// - With `via`, the owner field is read on the record the `belongsTo` relation leads to, which must exist and not be
///   deleted: a message is readable by the members its room has now, so a user added to a room reads its history.
package struct DataAuthorization: Sendable {
    /// The app's schema, for the models `via` relations lead to.
    package let schema: DataSchema
    /// The app, which names its tables.
    package let app: String
    /// The engine conditions are written for.
    package let dialect: DataTables.Dialect

    package init(schema: DataSchema, app: String, dialect: DataTables.Dialect) {
        self.schema = schema
        self.app = app
        self.dialect = dialect
    }

    /// Which records of `model` the caller may `operation` (read, update or delete).
    ///
    /// The condition is the OR of every rule that allows the operation for this caller, on the model's table with
    /// its columns qualified, so it can be ANDed into any query on that table (``KeysetPage``'s `filter`, an
    /// `UPDATE … WHERE`, a `DELETE … WHERE`). It does not test `_deleted`: the query says whether tombstones count.
    /// - Returns: ``DataAccess/all`` when a rule needs no row check, ``DataAccess/denied`` when no rule can let this
    ///   caller in, otherwise the condition. For `create`, which has no existing row, use ``mayCreate(_:record:related:for:)``.
    package func access(_ operation: DataOperation, on model: DataModel, for caller: DataCaller) -> DataAccess {
        switch grant(operation, on: model, for: caller) {
        case .denied: return .denied
        case .all: return .all
        case .rows(let checks): return .rows(condition(checks, on: model))
        }
    }

    /// Whether the caller may create `record`.
    /// - Parameters:
    ///   - model: The model created.
    ///   - record: The input after the server filled the automatic fields and the ``ownerFields(of:)`` from the
    ///     session: stored field names to values, a list as a JSON array.
    ///   - related: For each `via` relation field, the record it leads to (its `id` and owner fields), as
    ///     ``relatedRecords(of:record:for:on:)`` loads it; a relation whose record is missing or deleted is absent.
    ///   - caller: Who creates.
    /// - Returns: `true` when a rule that allows `create` lets the caller in: an owner field equal to the caller's id,
    ///   the caller's id in an owners list, the same on the related record for a `via` rule, or a matched
    ///   `public`, `private` or `groups` rule.
    package func mayCreate(_ model: DataModel, record: [String: JSONValue], related: [String: [String: JSONValue]], for caller: DataCaller) -> Bool {
        allows(.create, on: model, record: record, related: related, for: caller)
    }

    /// Whether the caller may read `record`, decided in memory: what a realtime delivery asks for each subscriber,
    /// with no database read per subscriber. It answers exactly as ``access(_:on:for:)`` with `read` does for the
    /// same stored record.
    /// - Parameters:
    ///   - model: The record's model.
    ///   - record: The record's stored fields (a list as a JSON array), with its `id`.
    ///   - related: For each `via` relation field, the record it leads to, loaded once per change with
    ///     ``relatedRecords(of:record:for:on:)``; a relation whose record is missing or deleted is absent.
    ///   - caller: The subscriber.
    package func mayRead(_ model: DataModel, record: [String: JSONValue], related: [String: [String: JSONValue]], for caller: DataCaller) -> Bool {
        allows(.read, on: model, record: record, related: related, for: caller)
    }

    /// Whether the caller may `operation` the record in memory; the decision behind ``mayCreate(_:record:related:for:)``
    /// and ``mayRead(_:record:related:for:)``, for any operation.
    package func allows(
        _ operation: DataOperation, on model: DataModel, record: [String: JSONValue], related: [String: [String: JSONValue]], for caller: DataCaller
    ) -> Bool {
        switch grant(operation, on: model, for: caller) {
        case .denied: return false
        case .all: return true
        case .rows(let checks): return checks.contains { $0.holds(record: record, related: related) }
        }
    }

    /// The owner fields the server fills from the session on create, so a client can never forge them: the fields
    /// of `owner` rules without `via`, whatever operations they list (a message created through its room's rule
    /// still records its author, whom an update-and-delete owner rule then lets in). Owners lists are not filled:
    /// their members are the client's to choose, and a create must include the caller.
    package func ownerFields(of model: DataModel) -> [String] {
        var fields: [String] = []
        for rule in model.rules where rule.via == nil {
            if case .owner(let field) = rule.allow, !fields.contains(field) { fields.append(field) }
        }
        return fields
    }

    /// The `via` relations the rules allowing `operation` on `model` read, each with the related model's owner
    /// fields they test: what ``relatedRecords(of:record:for:on:)`` loads. Independent of the caller, so a change
    /// delivered to many subscribers loads its related records once.
    package func viaFields(of model: DataModel, for operation: DataOperation) -> [(relation: DataRelation, fields: [String])] {
        var found: [(relation: DataRelation, fields: [String])] = []
        for rule in model.rules where rule.operations.contains(operation) {
            guard let via = rule.via, let relation = model.relation(named: via), relation.kind == .belongsTo else { continue }
            let field: String
            switch rule.allow {
            case .owner(let name), .owners(let name): field = name
            case .groups, .signedIn, .anyone: continue
            }
            if let index = found.firstIndex(where: { $0.relation == relation }) {
                if !found[index].fields.contains(field) { found[index].fields.append(field) }
            } else {
                found.append((relation: relation, fields: [field]))
            }
        }
        return found
    }

    /// The rules allowing `operation` on `model`, with what depends only on the caller decided. An operator is let in
    /// before any rule is looked at: the admin token stands above the app's rules.
    func grant(_ operation: DataOperation, on model: DataModel, for caller: DataCaller) -> Grant {
        if caller.isOperator { return .all }
        var checks: [RowCheck] = []
        for rule in model.rules where rule.operations.contains(operation) {
            switch rule.allow {
            case .anyone:
                if caller.hasAPIKey { return .all }
            case .signedIn:
                if caller.userId != nil { return .all }
            case .groups(let groups):
                // Groups belong to a user; a caller without a session has none, whatever it claims.
                if caller.userId != nil, groups.contains(where: { caller.groups.contains($0) }) { return .all }
            case .owner(let field):
                if let check = rowCheck(field: field, isList: false, rule: rule, on: model, for: caller) { checks.append(check) }
            case .owners(let field):
                if let check = rowCheck(field: field, isList: true, rule: rule, on: model, for: caller) { checks.append(check) }
            }
        }
        return checks.isEmpty ? .denied : .rows(checks)
    }

    /// The row check of an owner or owners rule for a signed-in caller; `nil` for a caller without a session.
    private func rowCheck(field: String, isList: Bool, rule: AuthRule, on model: DataModel, for caller: DataCaller) -> RowCheck? {
        guard let userId = caller.userId else { return nil }
        guard let name = rule.via else { return RowCheck(field: field, isList: isList, userId: userId, via: nil) }
        // The schema checker guarantees a belongsTo relation; a rule that somehow lacks one lets nobody in.
        guard let relation = model.relation(named: name), relation.kind == .belongsTo else { return nil }
        return RowCheck(field: field, isList: isList, userId: userId, via: relation)
    }
}

/// The rules allowing one operation to one caller, before any record is looked at.
enum Grant: Sendable, Equatable {
    /// No rule lets the caller in.
    case denied
    /// A rule lets the caller in whatever the record.
    case all
    /// The caller is let in on a record where any of these checks holds.
    case rows([RowCheck])
}

/// What an owner or owners rule asks of a record, once the caller's id is known.
struct RowCheck: Sendable, Equatable {
    /// The owner field, on the record or, with ``via``, on the related record.
    var field: String
    /// Whether the field is a list (`owners`) the id must be an element of, rather than a value equal to it.
    var isList: Bool
    /// The caller's id.
    var userId: String
    /// The `belongsTo` relation leading to the record that holds the field, or `nil` for the record itself.
    var via: DataRelation?

    /// Whether the check holds on `record`, in memory, as the SQL condition does in the table: the related record
    /// must be the one the record's reference field names (a stale one, say of a message's old room, does not count)
    /// and must not be deleted.
    func holds(record: [String: JSONValue], related: [String: [String: JSONValue]]) -> Bool {
        var subject = record
        if let via {
            guard case .string(let id)? = record[via.references], let target = related[via.field], target["id"] == JSONValue.string(id),
                target[DataTables.deletedColumn] != JSONValue.bool(true)
            else { return false }
            subject = target
        }
        guard isList else { return subject[field] == JSONValue.string(userId) }
        guard case .array(let elements)? = subject[field] else { return false }
        return elements.contains(JSONValue.string(userId))
    }
}
