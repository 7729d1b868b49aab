import Foundation

/// An app's update gate: the versions it must or should run, blocked versions, maintenance and OS minimums.
///
/// ``decide(_:policyVersion:storeURL:)`` is the one decision function; the server answers `gate:check` with
/// it and the SDK applies it to the last policy it saw when the server is out of reach.
public struct GatePolicy: Sendable {
    /// Which prompt a decision shows.
    public enum NoticeKind: String, Sendable, Hashable, CaseIterable {
        case require, recommend, maintenance, osUpdate, osAdvisory
    }

    /// Maintenance: on now, or in a scheduled window, with testers who pass.
    public struct Maintenance: Sendable {
        public var active: Bool
        public var window: DateWindow?
        public var allowInstallIds: Set<String>
    }

    /// A minimum OS version: recommended before `deadline`, required after it, only inside `windows` if any.
    public struct OSRequirement: Sendable {
        public var version: SemanticVersion
        public var deadline: Date?
        public var windows: [WeeklyWindow]
    }

    /// An OS version or range the team has not validated, or knows to break the app: for the week a new iOS
    /// ships, tell its users to wait, or stop them, with a notice of its own.
    public struct OSAdvisory: Sendable {
        /// The OS versions it covers: every comparison must hold (`"26.0"` is `== 26.0`).
        public var versions: Comparison<SemanticVersion>
        /// The platforms it covers; empty for every platform.
        public var platforms: Set<Platform>
        /// ``UpdateDecision/Action/recommend`` or ``UpdateDecision/Action/require``.
        public var action: UpdateDecision.Action
        /// Its own prompt; `nil` uses `notices.osAdvisory`, then the built-in texts.
        public var notice: GateNotice?

        func covers(_ context: EvaluationContext) -> Bool {
            guard let os = context.osVersion, versions.matches(os) else { return false }
            return platforms.isEmpty || context.platform.map(platforms.contains) == true
        }
    }

    /// Below it, ``UpdateDecision/Action/require``.
    public var minimumVersion: SemanticVersion?
    /// Below it, ``UpdateDecision/Action/recommend``.
    public var recommendedVersion: SemanticVersion?
    /// The least time between two recommend prompts, in seconds.
    public var nagInterval: Int
    /// Versions pulled after a fatal bug; each entry is a comparison such as `{"==": "3.10.1"}`.
    public var blockedVersions: [Comparison<SemanticVersion>]
    public var maintenance: Maintenance?
    public var minimumOSVersion: OSRequirement?
    /// OS versions with a prompt of their own: of those that cover the device, the first that requires, else the
    /// first.
    public var osAdvisories: [OSAdvisory]
    /// Prompts by kind; kinds not given use built-in English and Japanese texts.
    public var notices: [NoticeKind: GateNotice]
    /// The language used when the device's language has no text.
    public var defaultLanguage: String
    /// The policy exactly as published.
    public let source: JSONValue

    /// The default nag interval: one day.
    public static let defaultNagInterval = 86_400

    /// A policy that lets every version through.
    public static let empty = try! GatePolicy(parsing: .object([:]))

    /// Decides for a device.
    ///
    /// Order: maintenance (unless allow-listed), a blocked version, below the minimum version, the OS
    /// requirement when enforced, an OS advisory that requires, one that recommends, below the recommended
    /// version, the OS requirement when only recommended.
    /// - Parameters:
    ///   - context: the device; its app version is required.
    ///   - policyVersion: reported back in the decision.
    ///   - storeURL: the app's store page: the link of `require` and `recommend` notices that give none.
    public func decide(_ context: EvaluationContext, policyVersion: Int64, storeURL: String?) -> UpdateDecision {
        func decision(
            _ action: UpdateDecision.Action, _ reason: UpdateDecision.Reason, _ kind: NoticeKind, notice own: GateNotice? = nil
        ) -> UpdateDecision {
            let notice = own ?? notices[kind] ?? GateNotice.builtIn[kind]!
            let text =
                notice.text(for: context.locale, defaultLanguage: defaultLanguage)
                ?? notices[kind]?.text(for: context.locale, defaultLanguage: defaultLanguage)
                ?? GateNotice.builtIn[kind]!.text(for: context.locale, defaultLanguage: defaultLanguage)
            return UpdateDecision(
                action: action,
                reason: reason,
                title: text?.text.title,
                message: text?.text.message,
                language: text?.language,
                url: notice.url(for: kind, storeURL: storeURL),
                nagInterval: action == .recommend ? nagInterval : nil,
                policyVersion: policyVersion
            )
        }
        if let maintenance, maintenance.active || maintenance.window?.contains(context.now) == true,
            !(context.installId.map(maintenance.allowInstallIds.contains) ?? false)
        {
            var result = decision(.maintenance, .maintenance, .maintenance)
            result.until = maintenance.active ? nil : maintenance.window?.end
            return result
        }
        if let version = context.appVersion {
            if blockedVersions.contains(where: { $0.matches(version) }) { return decision(.require, .blockedVersion, .require) }
            if let minimumVersion, version < minimumVersion { return decision(.require, .belowMinimumVersion, .require) }
        }
        var osRecommendation: UpdateDecision?
        if let requirement = minimumOSVersion, let os = context.osVersion, os < requirement.version {
            let pastDeadline = requirement.deadline.map { context.now >= $0 } ?? true
            let inWindow = requirement.windows.isEmpty || requirement.windows.contains { $0.contains(context.now) }
            if pastDeadline && inWindow { return decision(.require, .osBelowMinimum, .osUpdate) }
            osRecommendation = decision(.recommend, .osUpdateRecommended, .osUpdate)
        }
        let advisories = osAdvisories.filter { $0.covers(context) }
        if let advisory = advisories.first(where: { $0.action == .require }) ?? advisories.first {
            return decision(advisory.action, .osAdvisory, .osAdvisory, notice: advisory.notice)
        }
        if let version = context.appVersion, let recommendedVersion, version < recommendedVersion {
            return decision(.recommend, .belowRecommendedVersion, .recommend)
        }
        return osRecommendation ?? UpdateDecision(action: .none, reason: .upToDate, policyVersion: policyVersion)
    }
}
