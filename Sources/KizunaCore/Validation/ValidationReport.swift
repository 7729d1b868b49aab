import Foundation

/// Collects problems from several fields and throws them together.
///
/// Problems are kept in the order they were found: fields in the order they were checked, and each field's problems
/// in the order its validator lists its rules (``record(_:)`` adds its problem where it is called). So
/// ``firstProblem`` is the problem a form that shows one error at a time shows first, the same on every run.
///
/// Each checked value is also kept in ``form`` under its field's name, so a later field's cross-field rule
/// (``Matches``) can compare with it: check the field a rule refers to before the field that carries the rule.
public struct ValidationReport: Sendable {
    /// The problems found so far, in the order described above.
    public private(set) var problems: [KizunaError.Detail] = []
    /// The values checked so far, by field name.
    public private(set) var form = ValidationForm()

    /// Creates an empty report.
    public init() {}

    /// Creates a report that already knows values of the form (fields it will not check itself but that
    /// cross-field rules refer to).
    public init(form: ValidationForm) {
        self.form = form
    }

    /// The first problem found, or `nil` when everything checked is valid: for the "show the first error" style.
    public var firstProblem: KizunaError.Detail? { problems.first }

    /// The first problem of `field`, or `nil` when it passed: for one message under each field.
    public func firstProblem(of field: String) -> KizunaError.Detail? {
        problems.first { $0.field == field }
    }

    /// Validates `value` and records its problems, with messages in the first of `languages` that has them.
    /// The value is then kept in ``form`` under the validator's field.
    public mutating func check<Value: Sendable>(_ value: Value, with validator: FieldValidator<Value>, languages: [String] = []) {
        problems += validator.problems(in: value, form: form, languages: languages)
        form[validator.field] = value
    }

    /// Records a problem found by a check that spans fields.
    public mutating func record(_ problem: KizunaError.Detail) {
        problems.append(problem)
    }

    /// Throws a `validation_failed` error listing every problem, if there are any.
    public func throwIfFailed(_ subject: String) throws(KizunaError) {
        guard !problems.isEmpty else { return }
        let fields = Set(problems.compactMap(\.field)).sorted().joined(separator: ", ")
        throw KizunaError(
            .validationFailed,
            "\(subject) is not valid: check \(fields).",
            field: problems.count == 1 ? problems[0].field : nil,
            details: problems
        )
    }
}
