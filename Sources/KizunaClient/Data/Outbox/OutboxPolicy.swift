import Foundation
import KizunaCore

/// The outbox's decisions, apart from any I/O: which item goes next, and what an answer means for an item.
enum OutboxPolicy {
    /// What a try of an item came to.
    enum Outcome: Sendable, Hashable {
        /// Applied: the record as the server answered it.
        case sent([String: JSONValue])
        /// Not applied, or not known to be, for a reason a retry may fix: try again after a backoff (at least
        /// `notBefore`, when the server said when).
        case retry(notBefore: Duration?)
        /// Refused for good: the error, and for a conflict the stored record.
        case failed(KizunaError, current: [String: JSONValue]?)
    }

    /// Codes a later try of the same mutation may get past: the network, the server or its store unavailable, a rate
    /// limit, an access token to refresh.
    static let transient: Set<KizunaError.Code> = [
        .transport, .timeout, .unavailable, .storeUnavailable, .rateLimited, .throttled, .unauthorized,
    ]

    /// What `answer` means for an item sending `mutation`, tried before when `retried` (so an earlier try may have
    /// been applied and its answer lost).
    ///
    /// A retried create is safe by itself: the server answers a create whose id exists with the same input as the
    /// stored record. A retried delete answered `not_found`, and a retried update answered `conflict` with a stored
    /// record that already has every value the update sets, were applied by the earlier try: they are sent.
    static func outcome(of answer: Result<GraphQLResponse, DataError>, for mutation: OutboxMutation, retried: Bool) -> Outcome {
        let errors: [GraphQLError]
        switch answer {
        case .success(let response):
            guard !response.errors.isEmpty else { return .sent(response.data?[mutation.field]?.objectValue ?? [:]) }
            errors = response.errors
        case .failure(.transport(let error)):
            return .retry(notBefore: error.retryAfter.map { .seconds($0) })
        case .failure(.graphQL(let list, _)):
            errors = list
        case .failure(.decoding):
            return .retry(notBefore: nil)  // not an answer execute gives; no answer as far as the outbox knows
        }
        guard let first = errors.first else { return .retry(notBefore: nil) }
        let error = first.kizunaError
        let current = first.extensions["current"]?.objectValue
        if transient.contains(error.code) { return .retry(notBefore: error.retryAfter.map { .seconds($0) }) }
        if retried {
            if mutation.action == .delete, error.code == .notFound { return .sent(["id": mutation.input["id"] ?? .null]) }
            if mutation.action == .update, error.code == .conflict, let current, applied(mutation.input, to: current) {
                return .sent(current)
            }
        }
        return .failed(error, current: current)
    }

    /// Whether `record` holds every value `input` sets (`_version` aside).
    static func applied(_ input: [String: JSONValue], to record: [String: JSONValue]) -> Bool {
        input.allSatisfy { name, value in name == "_version" || record[name] == value }
    }
}

extension OutboxPolicy {
    /// An item as the sender sees it: its row, and when its backoff ends.
    struct Entry: Sendable {
        var row: OutboxStore.Row
        var notBefore: ContinuousClock.Instant?

        var item: OutboxItem {
            get { row.item }
            set { row.item = newValue }
        }
    }

    /// The lanes an item goes in: its record, and its parent if it has one. Items that share a lane are sent in the
    /// order they were queued.
    static func lanes(of mutation: OutboxMutation) -> [String] {
        ["record \(mutation.model) \(mutation.recordId ?? "")"] + (mutation.parent.map { ["parent \($0)"] } ?? [])
    }

    /// The index of the item to send next for `user` (the signed-in account's id, `nil` for nobody), or `nil`: the
    /// first of `user`'s pending items whose backoff is over and which no earlier unsent item of `user` shares a lane
    /// with. Failed items hold nothing up; another user's items wait for that user.
    static func next(in entries: [Entry], user: String?, now: ContinuousClock.Instant) -> Int? {
        var held: Set<String> = []
        for (index, entry) in entries.enumerated() where entry.row.userId == user && entry.item.state.isUnsent {
            let lanes = lanes(of: entry.item.mutation)
            if entry.item.state == .pending, entry.notBefore.map({ $0 <= now }) ?? true, held.isDisjoint(with: lanes) {
                return index
            }
            held.formUnion(lanes)
        }
        return nil
    }

    /// When the earliest backoff of `user`'s pending items ends, if one is still running.
    static func nextWake(in entries: [Entry], user: String?, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        entries.lazy.filter { $0.row.userId == user && $0.item.state == .pending }.compactMap(\.notBefore).filter { $0 > now }.min()
    }
}
