import Foundation

/// One check of one value, such as "not empty" or "at most 100 characters".
///
/// Rules are small types; a ``FieldValidator`` runs several in order so the server can report every failing
/// rule at once and the SDK can show the same messages while the user types.
public protocol ValidationRule<Value>: Sendable {
    associatedtype Value
    /// Returns the problem with `value`, or `nil` when it passes.
    func check(_ value: Value) -> ValidationProblem?
    /// Returns the problem with `value` given the other values of its form, for rules that span fields such as
    /// ``Matches``; a rule that looks at its own value alone need not implement it (it calls ``check(_:)``).
    func check(_ value: Value, in form: ValidationForm) -> ValidationProblem?
}

extension ValidationRule {
    /// Checks `value` alone: most rules do not look at the rest of the form.
    public func check(_ value: Value, in form: ValidationForm) -> ValidationProblem? {
        check(value)
    }
}

/// A failed rule: a stable code and a message, in English and optionally in other languages.
public struct ValidationProblem: Hashable, Sendable {
    /// Stable code, such as `too_long`.
    public var code: String
    /// A message a person can act on, in English.
    public var message: String
    /// The message in other languages, by language code (`ja`).
    public var localized: [String: String]

    /// Creates a problem.
    public init(code: String, message: String, localized: [String: String] = [:]) {
        self.code = code
        self.message = message
        self.localized = localized
    }

    /// The message in the first of `languages` it has (language codes or tags such as `ja-JP`), else English.
    public func message(in languages: [String]) -> String {
        let language = LocaleTag.negotiate(languages, available: Set(localized.keys).union(["en"]))
        return language == "en" ? message : localized[language] ?? message
    }
}

/// Runs rules over one field's value and collects every problem.
public struct FieldValidator<Value>: Sendable {
    /// The field name reported with each problem.
    public let field: String
    private let rules: [any ValidationRule<Value>]

    /// Creates a validator for `field` from rules run in order.
    public init(field: String, rules: [any ValidationRule<Value>]) {
        self.field = field
        self.rules = rules
    }

    /// The same rules reporting under another field name, for a request that calls the value something else
    /// (`newPassword` where sign-up says `password`).
    public func reporting(as field: String) -> FieldValidator {
        FieldValidator(field: field, rules: rules)
    }

    /// Every problem with `value`, in rule order; empty when it is valid.
    /// - Parameters:
    ///   - form: The form's other values, for rules that span fields (``Matches``); a ``ValidationReport`` passes
    ///     the values it has checked so far.
    ///   - languages: The reader's languages, most preferred first (from `Accept-Language`); English when none of
    ///     them has a translation.
    public func problems(in value: Value, form: ValidationForm = ValidationForm(), languages: [String] = []) -> [KizunaError.Detail] {
        rules.compactMap { $0.check(value, in: form) }.map {
            KizunaError.Detail(code: $0.code, message: $0.message(in: languages), field: field)
        }
    }
}

/// The value must not be empty or only white space.
public struct NotEmpty: ValidationRule {
    public init() {}
    public func check(_ value: String) -> ValidationProblem? {
        value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            ? ValidationProblem(code: "empty", message: "must not be empty", localized: ["ja": "入力してください"]) : nil
    }
}

/// The value's length in characters must lie in a range.
public struct Length: ValidationRule {
    public let range: ClosedRange<Int>
    public init(_ range: ClosedRange<Int>) { self.range = range }
    public func check(_ value: String) -> ValidationProblem? {
        if value.count < range.lowerBound {
            return ValidationProblem(
                code: "too_short", message: "must be at least \(range.lowerBound) characters", localized: ["ja": "\(range.lowerBound)文字以上にしてください"])
        }
        if value.count > range.upperBound {
            return ValidationProblem(
                code: "too_long", message: "must be at most \(range.upperBound) characters", localized: ["ja": "\(range.upperBound)文字以内にしてください"])
        }
        return nil
    }
}

/// A number must lie in a range.
public struct InRange: ValidationRule {
    public let range: ClosedRange<Int>
    public init(_ range: ClosedRange<Int>) { self.range = range }
    public func check(_ value: Int) -> ValidationProblem? {
        range.contains(value)
            ? nil
            : ValidationProblem(
                code: "out_of_range", message: "must be from \(range.lowerBound) to \(range.upperBound)",
                localized: ["ja": "\(range.lowerBound)から\(range.upperBound)までにしてください"])
    }
}

/// The value must satisfy a predicate; `message` says in words what shape it must have.
public struct Format: ValidationRule {
    public let code: String
    public let message: String
    public let localized: [String: String]
    private let test: @Sendable (String) -> Bool

    /// Creates a rule from a predicate.
    public init(code: String = "bad_format", message: String, localized: [String: String] = [:], _ test: @escaping @Sendable (String) -> Bool) {
        self.code = code
        self.message = message
        self.localized = localized
        self.test = test
    }

    public func check(_ value: String) -> ValidationProblem? {
        test(value) ? nil : ValidationProblem(code: code, message: message, localized: localized)
    }
}

/// Applies a rule only when an optional value is present.
public struct IfPresent<Wrapped: ValidationRule>: ValidationRule {
    public let rule: Wrapped
    public init(_ rule: Wrapped) { self.rule = rule }
    public func check(_ value: Wrapped.Value?) -> ValidationProblem? {
        value.flatMap { rule.check($0) }
    }
    public func check(_ value: Wrapped.Value?, in form: ValidationForm) -> ValidationProblem? {
        value.flatMap { rule.check($0, in: form) }
    }
}
