import Foundation
import KizunaCore

/// A create, update or delete of one record, as the outbox keeps and sends it.
///
/// The outbox writes the GraphQL document itself, by the schema's naming (`createMessage(input: CreateMessageInput!)`,
/// `updateMessage`, `deleteMessage`), so it knows which record each item changes: items for the same record, and for
/// the same ``parent``, are sent in the order they were queued, and a live query can show an item before the server
/// has it.
public struct OutboxMutation: Sendable, Hashable, Codable {
    /// What the mutation does to its record.
    public enum Action: String, Sendable, Hashable, Codable {
        case create, update, delete
    }

    /// The model's name, as the schema declares it (`Message`).
    public var model: String
    public var action: Action
    /// The mutation's input. A create without an `id` is given the item's id, so a create sent twice (after a lost
    /// answer, or a kill) stores one record; an update or a delete names its record's `id`.
    public var input: [String: JSONValue]
    /// A group whose items are sent in order, such as the room a message is posted to (`"Room:lobby"`); items for the
    /// same record are always sent in order.
    public var parent: String?
    /// The fields the server's answer selects (default `id`): the record an item's ``OutboxItem/State/sent(_:)``
    /// carries.
    public var selection: String

    public init(model: String, action: Action, input: [String: JSONValue], parent: String? = nil, selection: String = "id") {
        self.model = model
        self.action = action
        self.input = input
        self.parent = parent
        self.selection = selection
    }

    /// A create of a `model` record.
    public static func create(_ model: String, _ input: [String: JSONValue], parent: String? = nil, selection: String = "id") -> Self {
        Self(model: model, action: .create, input: input, parent: parent, selection: selection)
    }

    /// An update of the `model` record `input["id"]`: the fields `input` names.
    public static func update(_ model: String, _ input: [String: JSONValue], parent: String? = nil, selection: String = "id") -> Self {
        Self(model: model, action: .update, input: input, parent: parent, selection: selection)
    }

    /// A delete of the `model` record `id`.
    public static func delete(_ model: String, id: String, parent: String? = nil, selection: String = "id") -> Self {
        Self(model: model, action: .delete, input: ["id": .string(id)], parent: parent, selection: selection)
    }

    /// The root field: `createMessage`.
    var field: String { action.rawValue + model }

    /// The GraphQL document sent.
    var document: String {
        let input = action.rawValue.prefix(1).uppercased() + action.rawValue.dropFirst() + model + "Input"
        return "mutation KizunaOutbox($input: \(input)!) { \(field)(input: $input) { \(selection) } }"
    }

    /// The record's id: the input's.
    var recordId: String? { input["id"]?.stringValue }
}

/// One mutation in the outbox: its id, what it does, and where it is.
public struct OutboxItem: Sendable, Hashable, Identifiable {
    /// Where an item is: queued, on the wire, done, or stopped by an error a retry cannot fix.
    public enum State: Sendable, Hashable {
        /// Stored on the device, waiting its turn (after a backoff, when the last try failed for a reason a retry may
        /// fix: no network, the server unavailable).
        case pending
        /// Sent; the answer has not come yet.
        case sending
        /// The server applied it; the record as the server answered it (the mutation's ``OutboxMutation/selection``).
        case sent([String: JSONValue])
        /// The server refused it for a reason a retry cannot fix: `validation_failed`, `forbidden`, `not_found`,
        /// `conflict` (the stored record in ``OutboxItem/current``), `condition_failed`. ``Outbox/retry(_:)`` queues
        /// it again (after the app changed what was wrong); ``Outbox/discard(_:)`` drops it.
        case failed(KizunaError)

        /// Whether the item is waiting or on the wire: not sent, not failed.
        public var isUnsent: Bool {
            switch self {
            case .pending, .sending: true
            case .sent, .failed: false
            }
        }
    }

    /// The client-generated id, the same on every try (and the record's id, for a create that named none).
    public var id: String
    public var mutation: OutboxMutation
    public var state: State
    /// How many times it has been sent.
    public var attempts: Int
    /// For a `conflict`: the record as the server stores it, when the caller may read it, to merge with and retry.
    public var current: [String: JSONValue]?
    /// When it was queued.
    public var queuedAt: Date
}
