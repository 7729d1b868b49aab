import Foundation

/// A rule about a device and the current time, evaluated identically on the server and in the SDK.
///
/// Conditions are written as JSON objects with one key; see ``Condition/parse(_:at:reader:)`` for the forms.
/// They combine with `all`, `any` and `not` to any depth.
public indirect enum Condition: Sendable, Hashable {
    /// True when every condition is (true for an empty list).
    case all([Condition])
    /// True when at least one condition is.
    case any([Condition])
    /// True when the condition is false.
    case not(Condition)
    /// The app's version (CFBundleShortVersionString) satisfies every comparison.
    case appVersion(Comparison<SemanticVersion>)
    /// The app's build number (CFBundleVersion) satisfies every comparison.
    case buildNumber(Comparison<BuildNumber>)
    /// The operating system's version satisfies every comparison.
    case osVersion(Comparison<SemanticVersion>)
    /// The device runs one of these platforms.
    case platform(Set<Platform>)
    /// The app's Kizuna id is one of these.
    case appId(Set<String>)
    /// The device locale matches one of these tags; `ja` matches `ja-JP`, `en-US` matches only `en-US`.
    case locale([LocaleTag])
    /// The device's language is one of these (case-insensitive), such as `ja`.
    case language(Set<String>)
    /// The device's country or region is one of these ISO 3166 codes (case-insensitive).
    case country(Set<String>)
    /// The install id is one of these.
    case installId(Set<String>)
    /// The install falls in a sticky percentage bucket.
    case percent(PercentRollout)
    /// A custom attribute the app sends passes a typed test.
    case attribute(name: String, test: AttributeTest)
    /// The current time lies in a date/time window.
    case dateTime(DateWindow)
    /// The current time lies in a weekly window.
    case weekly(WeeklyWindow)

    /// Whether the condition holds for `context`.
    public func evaluate(_ context: EvaluationContext) -> Bool {
        switch self {
        case .all(let conditions): conditions.allSatisfy { $0.evaluate(context) }
        case .any(let conditions): conditions.contains { $0.evaluate(context) }
        case .not(let condition): !condition.evaluate(context)
        case .appVersion(let comparison): context.appVersion.map(comparison.matches) ?? false
        case .buildNumber(let comparison): context.buildNumber.map(comparison.matches) ?? false
        case .osVersion(let comparison): context.osVersion.map(comparison.matches) ?? false
        case .platform(let platforms): context.platform.map(platforms.contains) ?? false
        case .appId(let ids): context.appId.map(ids.contains) ?? false
        case .locale(let tags): context.locale.map { locale in tags.contains { $0.matches(locale) } } ?? false
        case .language(let languages): context.locale.map { languages.contains($0.language) } ?? false
        case .country(let countries): context.country.map { countries.contains($0) } ?? false
        case .installId(let ids): context.installId.map(ids.contains) ?? false
        case .percent(let rollout): context.installId.map(rollout.contains) ?? false
        case .attribute(let name, let test): context.attributes[name].map(test.matches) ?? false
        case .dateTime(let window): window.contains(context.now)
        case .weekly(let window): window.contains(context.now)
        }
    }
}

/// Comparisons that must all hold, such as `>= 3.0` and `< 4.0` for a range.
public struct Comparison<Value: Comparable & Sendable & Hashable>: Sendable, Hashable {
    /// A comparison operator as written in JSON.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }

    /// The comparisons, in the order written.
    public let terms: [Term]

    /// One operator and its operand.
    public struct Term: Sendable, Hashable {
        public let op: Operator
        public let value: Value
    }

    /// Creates a comparison from terms that must all hold.
    public init(_ terms: [Term]) { self.terms = terms }

    /// Whether `candidate` satisfies every term.
    public func matches(_ candidate: Value) -> Bool {
        terms.allSatisfy { term in
            switch term.op {
            case .equal: candidate == term.value
            case .notEqual: candidate != term.value
            case .less: candidate < term.value
            case .lessOrEqual: candidate <= term.value
            case .greater: candidate > term.value
            case .greaterOrEqual: candidate >= term.value
            }
        }
    }
}

/// A typed test of a custom attribute.
public enum AttributeTest: Sendable, Hashable {
    case string(Comparison<String>)
    case number(Comparison<Double>)
    /// The attribute is this bool (`{"==": true}` and `{"!=": false}` both read as `true`).
    case bool(Bool)
    case version(Comparison<SemanticVersion>)

    /// Whether `value` has the test's type and passes it; a value of another type never matches.
    public func matches(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (.string(let comparison), .string(let string)): comparison.matches(string)
        case (.number(let comparison), .number(let number)): comparison.matches(number)
        case (.bool(let expected), .bool(let bool)): bool == expected
        case (.version(let comparison), .string(let string)): (try? SemanticVersion(parsing: string)).map(comparison.matches) ?? false
        default: false
        }
    }
}
