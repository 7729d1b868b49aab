/// What `PUT /v1/admin/apps/{app}/push/credentials` takes: an APNs token-signing key and where it may send.
public struct PushCredentialsUpload: Sendable, Hashable, Codable {
    /// The `.p8` file's text (a PEM `PRIVATE KEY`, P-256), as Apple's developer site gives it.
    public var p8: String
    /// The key's 10-character id.
    public var keyId: String
    /// The developer team's 10-character id.
    public var teamId: String
    /// The `apns-topic`: the app's bundle id unless given (`…voip`, `…complication` and the like for other push types).
    public var topic: String?
    /// Only this APNs environment; each device's own when `nil`.
    public var environment: APNsEnvironment?

    public init(p8: String, keyId: String, teamId: String, topic: String? = nil, environment: APNsEnvironment? = nil) {
        self.p8 = p8
        self.keyId = keyId
        self.teamId = teamId
        self.topic = topic
        self.environment = environment
    }
}

/// An app's APNs credentials as the admin API shows them: everything but the key, which no route returns.
public struct PushCredentialsInfo: Sendable, Hashable, Codable {
    public var keyId: String
    public var teamId: String
    public var topic: String
    public var environment: APNsEnvironment?
    /// The SHA-256 of the key's public half (hex): tells which key is set without showing it.
    public var keyFingerprint: String
    /// Epoch milliseconds.
    public var updatedAt: Int64

    public init(keyId: String, teamId: String, topic: String, environment: APNsEnvironment?, keyFingerprint: String, updatedAt: Int64) {
        self.keyId = keyId
        self.teamId = teamId
        self.topic = topic
        self.environment = environment
        self.keyFingerprint = keyFingerprint
        self.updatedAt = updatedAt
    }
}

/// Which devices a push goes to. JSON: `{"install": "…"}`, `{"installs": […]}`, `{"user": "…"}`, `{"users": […]}`,
/// `{"where": <condition>}` (remote config's condition language over each device's registered context), or
/// `{"all": true}`.
public enum PushTarget: Sendable, Hashable, Codable {
    case installs([String])
    case users([String])
    case condition(JSONValue)
    case all

    private enum Key: String, CodingKey { case install, installs, user, users, `where`, all }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "A target has one of install, installs, user, users, where or all."))
        }
        switch key {
        case .install: self = .installs([try container.decode(String.self, forKey: key)])
        case .installs: self = .installs(try container.decode([String].self, forKey: key))
        case .user: self = .users([try container.decode(String.self, forKey: key)])
        case .users: self = .users(try container.decode([String].self, forKey: key))
        case .where: self = .condition(try container.decode(JSONValue.self, forKey: key))
        case .all:
            guard try container.decode(Bool.self, forKey: key) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "all must be true.")
            }
            self = .all
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .installs(let ids): try container.encode(ids, forKey: .installs)
        case .users(let ids): try container.encode(ids, forKey: .users)
        case .condition(let condition): try container.encode(condition, forKey: .where)
        case .all: try container.encode(true, forKey: .all)
        }
    }
}

/// A text in one language, or in several: JSON `"Hello"`, or `{"default": "Hello", "ja": "こんにちは", "pt-BR": "Olá"}`.
/// A device gets its locale's text (`ja-JP` takes `ja-JP`, then `ja`), else the default.
public struct PushText: Sendable, Hashable, Codable {
    public var defaultText: String
    /// By BCP 47 tag.
    public var localized: [String: String]

    public init(_ text: String, localized: [String: String] = [:]) {
        defaultText = text
        self.localized = localized
    }

    /// The text for `locale` (a BCP 47 tag, `_` accepted for `-`).
    public func text(for locale: String?) -> String {
        guard let locale, !localized.isEmpty else { return defaultText }
        let byTag = Dictionary(localized.map { (LocaleTag($0.key).description, $0.value) }, uniquingKeysWith: { first, _ in first })
        for tag in LocaleTag(locale).fallbacks { if let text = byTag[tag] { return text } }
        return defaultText
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self.init(text)
            return
        }
        var texts = try container.decode([String: String].self)
        guard let text = texts.removeValue(forKey: "default") else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Localized texts need a \"default\".")
        }
        self.init(text, localized: texts)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if localized.isEmpty {
            try container.encode(defaultText)
        } else {
            try container.encode(localized.merging(["default": defaultText]) { _, new in new })
        }
    }
}

/// APNs' `apns-push-type`.
public enum APNsPushType: String, Sendable, Hashable, Codable, CaseIterable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls
}

/// A notification: what the user sees (localized), the app's own data beside `aps`, and how APNs treats it.
public struct PushMessage: Sendable, Hashable, Codable {
    public var title: PushText?
    public var subtitle: PushText?
    public var body: PushText?
    public var badge: Int?
    /// A sound file's name, or `default`.
    public var sound: String?
    public var threadId: String?
    public var category: String?
    /// A background update (`content-available: 1`).
    public var contentAvailable: Bool?
    /// A notification service extension may change it (`mutable-content: 1`).
    public var mutableContent: Bool?
    /// The app's keys beside `aps`, which `Push.decode(_:as:)` reads into the app's own type.
    public var data: [String: JSONValue]?
    /// `alert` unless given (`background` when only `contentAvailable` is set).
    public var pushType: APNsPushType?
    /// 10 (at once) or 5 (when power allows); 5 for background pushes unless given.
    public var priority: Int?
    /// Until when APNs keeps trying an offline device (epoch seconds); once only when `nil`.
    public var expiresAt: Int64?
    /// Notifications with the same id replace one another on the device (at most 64 bytes).
    public var collapseId: String?

    public init(
        title: PushText? = nil, subtitle: PushText? = nil, body: PushText? = nil, badge: Int? = nil, sound: String? = nil,
        threadId: String? = nil, category: String? = nil, contentAvailable: Bool? = nil, mutableContent: Bool? = nil,
        data: [String: JSONValue]? = nil, pushType: APNsPushType? = nil, priority: Int? = nil, expiresAt: Int64? = nil, collapseId: String? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.threadId = threadId
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.data = data
        self.pushType = pushType
        self.priority = priority
        self.expiresAt = expiresAt
        self.collapseId = collapseId
    }
}

/// What `POST /v1/admin/apps/{app}/push/jobs` takes.
public struct PushSendRequest: Sendable, Hashable, Codable {
    public var target: PushTarget
    public var message: PushMessage
    /// When to send: an RFC 3339 time (`2026-12-01T09:00:00Z`); now when absent. With ``localTime``, a wall-clock time
    /// without offset (`2026-12-01T09:00:00`), reached in each device's own time zone.
    public var sendAt: String?
    /// Sends at ``sendAt`` in each device's time zone.
    public var localTime: Bool?
    /// The time zone of devices that registered none (UTC when absent).
    public var fallbackTimeZone: String?

    public init(target: PushTarget, message: PushMessage, sendAt: String? = nil, localTime: Bool? = nil, fallbackTimeZone: String? = nil) {
        self.target = target
        self.message = message
        self.sendAt = sendAt
        self.localTime = localTime
        self.fallbackTimeZone = fallbackTimeZone
    }
}

/// A push job as the admin API answers it: what it sends, to whom, when, and how far it got.
public struct PushJobStatus: Sendable, Hashable, Codable {
    /// `scheduled` (not yet due), `sending`, `done` or `cancelled`.
    public enum State: String, Sendable, Hashable, Codable {
        case scheduled, sending, done, cancelled
    }

    /// Deliveries by state, once the job is expanded to its devices.
    public struct Totals: Sendable, Hashable, Codable {
        public var devices: Int
        public var pending: Int
        public var sent: Int
        public var failed: Int
        public var skipped: Int

        public init(devices: Int = 0, pending: Int = 0, sent: Int = 0, failed: Int = 0, skipped: Int = 0) {
            self.devices = devices
            self.pending = pending
            self.sent = sent
            self.failed = failed
            self.skipped = skipped
        }
    }

    public var id: String
    public var app: String
    public var state: State
    public var target: PushTarget
    public var message: PushMessage
    /// Epoch milliseconds: when it is sent (for a local-time send, the first moment its time is reached anywhere).
    public var sendAt: Int64
    /// The wall-clock time of a local-time send.
    public var localTime: String?
    public var createdAt: Int64
    public var finishedAt: Int64?
    public var totals: Totals
    /// Failed and skipped deliveries by APNs' reason (`Unregistered`, `BadDeviceToken`, …) or Kizuna's.
    public var reasons: [String: Int]

    public init(
        id: String, app: String, state: State, target: PushTarget, message: PushMessage, sendAt: Int64, localTime: String?, createdAt: Int64,
        finishedAt: Int64?, totals: Totals, reasons: [String: Int]
    ) {
        self.id = id
        self.app = app
        self.state = state
        self.target = target
        self.message = message
        self.sendAt = sendAt
        self.localTime = localTime
        self.createdAt = createdAt
        self.finishedAt = finishedAt
        self.totals = totals
        self.reasons = reasons
    }
}

/// One device's outcome in a push job.
public struct PushDeliveryStatus: Sendable, Hashable, Codable {
    /// `pending` (waiting, or to be retried), `sent` (APNs accepted it), `failed`, or `skipped` (its token was retired).
    public enum State: String, Sendable, Hashable, Codable {
        case pending, sent, failed, skipped
    }

    public var installId: String
    public var state: State
    /// APNs' reason, or Kizuna's (`TokenRetired`, `NoCredentials`, `EnvironmentNotConfigured`, `TooManyAttempts`).
    public var reason: String?
    public var attempts: Int
    /// The `apns-id` APNs answered.
    public var apnsId: String?
    public var dueAt: Int64
    public var updatedAt: Int64

    public init(installId: String, state: State, reason: String?, attempts: Int, apnsId: String?, dueAt: Int64, updatedAt: Int64) {
        self.installId = installId
        self.state = state
        self.reason = reason
        self.attempts = attempts
        self.apnsId = apnsId
        self.dueAt = dueAt
        self.updatedAt = updatedAt
    }
}

/// A page of an app's push registry, in install id order; `next` is the `after` of the next page.
public struct PushDeviceList: Sendable, Hashable, Codable {
    public var devices: [PushDevice]
    public var next: String?

    public init(devices: [PushDevice], next: String?) {
        self.devices = devices
        self.next = next
    }
}

/// A page of a push job's deliveries, in install id order; `next` is the `after` of the next page.
public struct PushDeliveryList: Sendable, Hashable, Codable {
    public var deliveries: [PushDeliveryStatus]
    public var next: String?

    public init(deliveries: [PushDeliveryStatus], next: String?) {
        self.deliveries = deliveries
        self.next = next
    }
}

/// An app's latest push jobs, newest first.
public struct PushJobList: Sendable, Hashable, Codable {
    public var jobs: [PushJobStatus]

    public init(jobs: [PushJobStatus]) { self.jobs = jobs }
}
