/// The private-selector lint: Objective-C method names in an app's binaries that look like Apple's private API.
///
/// The store's check is textual — a method merely *named* like a private selector is rejected at upload ("The app
/// references non-public selectors in Payload/App.app/App: _terminateWithStatus:") — so this one is too. The rule:
/// - a name in ``denylist`` is an **error**: the store is known to reject it;
/// - any other name with a leading underscore is a **warning**: Apple's private methods are spelled that way, so such a
///   name in your code or a library's may collide with one (rename it, or accept the warning).
public enum PrivateSelectors {
    /// How serious a finding is.
    public enum Severity: String, Sendable, Hashable, Codable, Comparable {
        case warning
        case error

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs == .warning && rhs == .error }
    }

    /// Selectors of Apple's private API, matched exactly: well-known private methods of UIApplication, UIView and
    /// NSObject and UIKit's private edit-menu actions. It is Kizuna's list, not Apple's (which is not published), so
    /// a name missing here is still a warning by the underscore rule.
    public static let denylist: Set<String> = [
        // UIApplication
        "_terminateWithStatus:",
        "_performMemoryWarning",
        "_setApplicationIsOpaque:",
        "_setAlwaysRunsAtForegroundPriority:",
        // UIView, UIWindow and view controllers
        "_setViewDelegate:",
        "_viewControllerForAncestor",
        "_setDrawsAsBackdropOverlayWithBlendMode:",
        "_setContinuousCornerRadius:",
        // UIResponder edit-menu actions
        "_define:",
        "_lookup:",
        "_share:",
        "_addShortcut:",
        "_promptForReplace:",
        "_transliterateChinese:",
        "_showTextStyleOptions:",
        "_accessibilitySpeak:",
        // NSObject's debugging descriptions
        "_ivarDescription",
        "_shortMethodDescription",
        "_methodDescription",
    ]

    /// The severity of `name`, or `nil` when it does not look private.
    public static func severity(of name: String) -> Severity? {
        if denylist.contains(name) { return .error }
        // `_` alone, or a C++/Swift mangled-looking name, is not a selector someone wrote.
        if name.count > 1, name.hasPrefix("_"), !name.hasPrefix("__") { return .warning }
        return nil
    }
}
