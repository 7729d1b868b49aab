import Foundation

/// What an app must do about its version, the OS it runs on, or maintenance: the answer of the update gate.
public struct UpdateDecision: Sendable, Hashable, Codable {
    /// What the app shows.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// Nothing to show.
        case none
        /// An update is available: show a dismissable prompt, at most once per ``UpdateDecision/nagInterval``.
        case recommend
        /// This version may not be used: show a prompt that cannot be dismissed.
        case require
        /// The service is down for maintenance: block use until a later check clears it.
        case maintenance
    }

    /// Why the gate decided what it did.
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
        case upToDate
        case belowMinimumVersion
        case blockedVersion
        case belowRecommendedVersion
        case osBelowMinimum
        case osUpdateRecommended
        /// The OS version is one the team listed in the policy's `osAdvisories` (not yet validated, or known bad).
        case osAdvisory
        case maintenance
    }

    public var action: Action
    public var reason: Reason
    /// The localized title, or `nil` for ``Action/none``.
    public var title: String?
    /// The localized message, or `nil` for ``Action/none``.
    public var message: String?
    /// The language of `title` and `message`, such as `ja`.
    public var language: String?
    /// What the prompt's button opens: the store page, a status page, or `nil` for a prompt without a button
    /// (for `require` and `maintenance`, an alert that simply stays up).
    public var url: String?
    /// For ``Action/recommend``: the least time, in seconds, between two prompts.
    public var nagInterval: Int?
    /// For ``Action/maintenance`` in a scheduled window: when it is expected to end.
    public var until: Date?
    /// The policy version that decided; 0 when the app has no policy.
    public var policyVersion: Int64

    /// Creates a decision.
    public init(
        action: Action,
        reason: Reason,
        title: String? = nil,
        message: String? = nil,
        language: String? = nil,
        url: String? = nil,
        nagInterval: Int? = nil,
        until: Date? = nil,
        policyVersion: Int64
    ) {
        self.action = action
        self.reason = reason
        self.title = title
        self.message = message
        self.language = language
        self.url = url
        self.nagInterval = nagInterval
        self.until = until
        self.policyVersion = policyVersion
    }

    /// Whether the app must be blocked until a later check says otherwise.
    public var isBlocking: Bool { action == .require || action == .maintenance }
}

/// A title and message in one language.
public struct LocalizedText: Sendable, Hashable, Codable {
    public var title: String
    public var message: String

    public init(title: String, message: String) {
        self.title = title
        self.message = message
    }
}

/// The prompt for one kind of decision: texts by language and what its button opens.
public struct GateNotice: Sendable, Hashable {
    /// What a notice's button opens.
    public enum Link: Sendable, Hashable {
        /// Not given: the app's store page for `require` and `recommend` (an update is the way out), nothing
        /// for maintenance, OS updates and OS advisories (the App Store is the wrong place for those).
        case automatic
        /// `"url": null`: no button; a blocking alert simply stays up.
        case none
        /// This URL.
        case url(String)
    }

    /// Texts keyed by normalised language tag (`ja`, `en`, `zh-hant`).
    public var texts: [String: LocalizedText]
    /// What the button opens.
    public var link: Link

    public init(texts: [String: LocalizedText], link: Link = .automatic) {
        self.texts = texts
        self.link = link
    }

    /// Whether `text` may be a notice's link: an absolute https, http or itms-apps URL with a host.
    package static func isLinkURL(_ text: String) -> Bool {
        guard let parsed = URL(string: text), let scheme = parsed.scheme?.lowercased() else { return false }
        return ["https", "http", "itms-apps"].contains(scheme) && parsed.host != nil
    }

    /// The URL for a decision of `kind`, given the app's store page.
    func url(for kind: GatePolicy.NoticeKind, storeURL: String?) -> String? {
        switch link {
        case .url(let url): url
        case .none: nil
        case .automatic: kind == .require || kind == .recommend ? storeURL : nil
        }
    }

    /// Built-in English and Japanese texts used when a policy gives none.
    static let builtIn: [GatePolicy.NoticeKind: GateNotice] = [
        .require: GateNotice(texts: [
            "en": LocalizedText(title: "Update required", message: "This version is no longer supported. Please update the app to continue."),
            "ja": LocalizedText(title: "アップデートが必要です", message: "このバージョンはご利用いただけなくなりました。アプリをアップデートしてご利用ください。"),
        ]),
        .recommend: GateNotice(texts: [
            "en": LocalizedText(title: "Update available", message: "A new version of the app is available."),
            "ja": LocalizedText(title: "新しいバージョンがあります", message: "新しいバージョンのアプリをご利用いただけます。"),
        ]),
        .maintenance: GateNotice(texts: [
            "en": LocalizedText(title: "Under maintenance", message: "The service is under maintenance. Please try again later."),
            "ja": LocalizedText(title: "メンテナンス中です", message: "ただいまメンテナンス中です。しばらくしてからもう一度お試しください。"),
        ]),
        .osUpdate: GateNotice(texts: [
            "en": LocalizedText(title: "Update your OS", message: "This app needs a newer version of the operating system."),
            "ja": LocalizedText(title: "OSのアップデートが必要です", message: "このアプリのご利用には新しいバージョンのOSが必要です。"),
        ]),
        .osAdvisory: GateNotice(texts: [
            "en": LocalizedText(
                title: "This OS version is not supported yet",
                message: "The app may not work correctly on this version of the operating system. Please check for an update."),
            "ja": LocalizedText(
                title: "このOSバージョンには未対応です",
                message: "このバージョンのOSではアプリが正しく動作しない場合があります。アップデートをご確認ください。"),
        ]),
    ]

    /// The texts for `locale`: its fallbacks most specific first, then `defaultLanguage`, then `en`, then any.
    func text(for locale: LocaleTag?, defaultLanguage: String) -> (language: String, text: LocalizedText)? {
        // The locale's fallbacks walked in place (`zh-hant-tw`, `zh-hant`, `zh`), not built as arrays: this runs on
        // every gate:check with a notice.
        if var tag = locale.map({ Substring($0.description) }) {
            while !tag.isEmpty {
                if let text = texts[String(tag)] { return (String(tag), text) }
                tag = tag[..<(tag.lastIndex(of: "-") ?? tag.startIndex)]
            }
        }
        if let text = texts[defaultLanguage] { return (defaultLanguage, text) }
        if let text = texts["en"] { return ("en", text) }
        return texts.keys.sorted().first.map { ($0, texts[$0]!) }
    }
}
