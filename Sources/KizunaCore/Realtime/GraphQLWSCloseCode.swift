/// A WebSocket close code of a `graphql-transport-ws` connection: the protocol's, the reference implementation's
/// (graphql-ws, its `CloseCode` enum) and Kizuna's own, each with the reason text it is sent with.
///
/// A struct rather than an enum so that a code nobody listed here (a proxy's, 1006 from a dropped connection) is still
/// a value the SDK can report. graphql-ws uses 4004, 4005, 4400, 4401, 4403, 4406, 4408, 4409, 4429, 4499, 4500 and
/// 4504; Kizuna's own codes (``fellBehind``, ``keepAliveTimeout``) are numbers it does not use.
public struct GraphQLWSCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as sent in the close frame.
    public var rawValue: UInt16

    /// A code by its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The most bytes of UTF-8 a close reason may have: a close frame's payload is at most 125 bytes, two of them the
    /// code (RFC 6455 §5.5).
    public static let maximumReasonBytes = 123

    // MARK: WebSocket (RFC 6455)

    /// 1000: the client is done (every operation completed), or the server ends a connection that did nothing wrong
    /// — as it does to every connection when it shuts down: a client with subscriptions reconnects (to another
    /// instance, or to this one once it is back) and resumes them by seq.
    public static let normalClosure = Self(rawValue: 1000)
    /// 1001: the server cannot serve subscriptions now (it is starting or stopping); reconnect, as after 1000.
    public static let goingAway = Self(rawValue: 1001)
    /// 1009: a message was larger than the server takes (`kizuna serve --ws-max-message-size`). Sending it again would
    /// fail again.
    public static let messageTooBig = Self(rawValue: 1009)
    /// 1013: the server cannot serve the connection right now (its store cannot be reached); reconnect after a pause,
    /// resuming with `since`.
    public static let tryAgainLater = Self(rawValue: 1013)

    // MARK: graphql-transport-ws, sent by the server

    /// 4400: a message that is not JSON, not an object, of an unknown type, missing a field or with a field of the wrong
    /// type, or of a type the server never receives (`connection_ack`, `next`, `error`). The reason says which.
    public static let invalidMessage = Self(rawValue: 4400)
    /// 4401: `subscribe` before the server acknowledged the connection.
    public static let unauthorized = Self(rawValue: 4401)
    /// 4403: the server refused the `connection_init` payload (no, a wrong or an expired token), or the session it
    /// carried ended while the connection was open. The client may retry with a new token.
    public static let forbidden = Self(rawValue: 4403)
    /// 4406: the WebSocket handshake did not ask for the `graphql-transport-ws` subprotocol.
    public static let subprotocolNotAcceptable = Self(rawValue: 4406)
    /// 4408: no `connection_init` within the server's wait.
    public static let connectionInitialisationTimeout = Self(rawValue: 4408)
    /// 4409: `subscribe` with the id of an operation that is still active. The reference sends
    /// `Subscriber for <id> already exists`.
    public static let subscriberAlreadyExists = Self(rawValue: 4409)
    /// 4429: a second `connection_init` on the same connection.
    public static let tooManyInitialisationRequests = Self(rawValue: 4429)
    /// 4500: the server failed; the reason carries no internals.
    public static let internalServerError = Self(rawValue: 4500)

    // MARK: graphql-transport-ws, sent by the client (graphql-ws's client)

    /// 4004: the server sent something the client cannot read.
    public static let badResponse = Self(rawValue: 4004)
    /// 4005: the client failed.
    public static let internalClientError = Self(rawValue: 4005)
    /// 4499: the client gave up on a socket that stopped emitting events and will reconnect.
    public static let terminated = Self(rawValue: 4499)
    /// 4504: the server did not acknowledge the connection within the client's wait.
    public static let connectionAcknowledgementTimeout = Self(rawValue: 4504)

    // MARK: Kizuna

    /// 4410: the connection could not keep up with the changes its subscriptions hear of (its send buffer filled), so
    /// the server cut it rather than slow everyone else. Reconnect and resubscribe from the last seq each subscription
    /// saw: the change log replays what was missed. (4410 for HTTP's 410 Gone: the live position is gone.)
    public static let fellBehind = Self(rawValue: 4410)
    /// 4411: the client did not answer the server's keep-alive `ping` (with a `pong` or any other message) before the
    /// next one was due: the peer is presumed dead. Mostly for the server's own logs, since a dead peer reads nothing;
    /// a peer that was merely suspended reconnects. The protocol has no code for it, and the reference server just drops
    /// the TCP connection; 1011 would make graphql-ws's client give up, so a 44xx the protocol leaves free.
    public static let keepAliveTimeout = Self(rawValue: 4411)
    /// 4430: the client sent more messages per second than the server takes (`kizuna serve
    /// --ws-max-messages-per-second`), pings included. A client that reconnects after a pause, and resumes with
    /// `since`, loses nothing; one that floods again is closed again. (4429 is the protocol's, for a second
    /// `connection_init`.)
    public static let tooManyMessages = Self(rawValue: 4430)

    /// The reason text the code is sent with when there is nothing more precise to say: graphql-ws's for its codes.
    public var defaultReason: String {
        switch rawValue {
        case 1000: "Normal Closure"
        case 1001: "Going away"
        case 4400: "Invalid message received"
        case 4401: "Unauthorized"
        case 4403: "Forbidden"
        case 4406: "Subprotocol not acceptable"
        case 4408: "Connection initialisation timeout"
        case 4409: "Subscriber already exists"
        case 4429: "Too many initialisation requests"
        case 4500: "Internal server error"
        case 4004: "Bad response"
        case 4005: "Internal client error"
        case 4499: "Terminated"
        case 4504: "Connection acknowledgement timeout"
        case 4410: "Fell behind: resume from your last seq"
        case 4411: "Keep-alive timeout: ping not answered"
        case 1009: "Message too big"
        case 1013: "Try again later"
        case 4430: "Too many messages"
        default: ""
        }
    }

    /// Whether graphql-ws's client gives up after this code instead of reconnecting: every WebSocket code in 1000–1999
    /// but 1000, 1001, 1005, 1006, 1012, 1013 and 1014, and 4004, 4005, 4400, 4401, 4406, 4409, 4429 and 4500 —
    /// the ones where trying again as before cannot succeed. 4403, 4408, 4410, 4411, 4499 and 4504 are retried.
    public var isFatal: Bool {
        switch rawValue {
        case 1000, 1001, 1005, 1006, 1012, 1013, 1014: false
        case 1000...1999: true
        case 4004, 4005, 4400, 4401, 4406, 4409, 4429, 4500: true
        default: false
        }
    }

    /// `reason` if it fits a close frame (``maximumReasonBytes``), otherwise ``defaultReason``: a reason that names
    /// what the client sent (an id, a type) can be as long as the client made it.
    public func fitting(_ reason: String) -> String {
        reason.utf8.count <= Self.maximumReasonBytes ? reason : defaultReason
    }

    public var description: String {
        let reason = defaultReason
        return reason.isEmpty ? "\(rawValue)" : "\(rawValue) (\(reason))"
    }
}
