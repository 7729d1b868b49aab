import Foundation

/// The values of one form by field name: what cross-field rules such as ``Matches`` compare with.
///
/// A ``ValidationReport`` fills it with each value it checks; build one yourself to check a single field against
/// others with ``FieldValidator/problems(in:form:languages:)``.
public struct ValidationForm: Sendable {
    private var values: [String: any Sendable]

    /// Creates a form from values by field name.
    public init(_ values: [String: any Sendable] = [:]) {
        self.values = values
    }

    /// The value of `field`, or `nil` when the form has none.
    public subscript(field: String) -> (any Sendable)? {
        get { values[field] }
        set { values[field] = newValue }
    }

    /// The value of `field` as a `Value`, or `nil` when the form has none of that type.
    public func value<Value>(of field: String, as type: Value.Type = Value.self) -> Value? {
        values[field] as? Value
    }
}

/// The value must equal another field's value in the same form: a confirm-email or confirm-password field.
///
/// ```swift
/// var report = ValidationReport()
/// report.check(password, with: FieldValidator(field: "password", rules: [Length(10...256)]))
/// report.check(confirmation, with: FieldValidator(field: "confirmPassword", rules: [Matches(field: "password", label: "the password", localizedLabel: ["ja": "パスワード"])]))
/// ```
///
/// The other field must have been checked earlier in the same ``ValidationReport`` (or be in the
/// ``ValidationForm`` given), with a value of the same type. When the form has no such value there is nothing the
/// value matches, and the rule fails: a mistake in wiring shows instead of passing silently.
public struct Matches<Value: Equatable & Sendable>: ValidationRule {
    /// The field whose value this one must equal.
    public let field: String
    /// How the message names that field in English (such as `the password`); the field's name when `nil`.
    public let label: String?
    /// How the message names that field in other languages, by language code (`ja`).
    public let localizedLabel: [String: String]

    /// Creates the rule.
    /// - Parameters:
    ///   - field: The field whose value this one must equal.
    ///   - label: The other field as the English message names it (`must match the password`).
    ///   - localizedLabel: The other field in other languages (`["ja": "パスワード"]` gives `パスワードと一致しません`).
    public init(field: String, label: String? = nil, localizedLabel: [String: String] = [:]) {
        self.field = field
        self.label = label
        self.localizedLabel = localizedLabel
    }

    /// Checked without a form, there is nothing to match: the value fails.
    public func check(_ value: Value) -> ValidationProblem? {
        check(value, in: ValidationForm())
    }

    /// Whether `value` equals the form's value of ``field``.
    public func check(_ value: Value, in form: ValidationForm) -> ValidationProblem? {
        guard form.value(of: field, as: Value.self) != value else { return nil }
        let english = label ?? field
        return ValidationProblem(
            code: "mismatch", message: "must match \(english)", localized: ["ja": "\(localizedLabel["ja"] ?? english)と一致しません"])
    }
}
