import Foundation

/// The data of an event on `GET /v1/apps/{app}/events` (`event: config` or `event: gate`).
public struct PublishEvent: Sendable, Hashable, Codable {
    public var kind: DocumentKind
    public var version: Int64
    /// The position in the `changes` log; also the event's `id`.
    public var seq: Int64

    public init(kind: DocumentKind, version: Int64, seq: Int64) {
        self.kind = kind
        self.version = version
        self.seq = seq
    }
}

/// The data of the `snapshot` event a stream opens with when it has no position to resume from.
public struct EventSnapshot: Sendable, Hashable, Codable {
    public var config: Int64
    public var gate: Int64
    public var seq: Int64

    public init(config: Int64, gate: Int64, seq: Int64) {
        self.config = config
        self.gate = gate
        self.seq = seq
    }
}
