import Testing

@testable import KizunaCore

/// Validation as forms use it: the first problem to show, and a field that must repeat another.
@Suite("Validation reports and cross-field rules")
struct ValidationReportTests {
    static let name = FieldValidator<String>(field: "name", rules: [NotEmpty(), Length(3...20)])
    static let password = FieldValidator<String>(field: "password", rules: [Length(10...256)])
    static let confirmPassword = FieldValidator<String>(
        field: "confirmPassword", rules: [NotEmpty(), Matches(field: "password", label: "the password", localizedLabel: ["ja": "パスワード"])])

    /// Fills a sign-up form's report the way an app or a server would, in declared field order.
    static func report(name: String, password: String, confirmation: String, languages: [String] = []) -> ValidationReport {
        var report = ValidationReport()
        report.check(name, with: Self.name, languages: languages)
        report.check(password, with: Self.password, languages: languages)
        report.check(confirmation, with: Self.confirmPassword, languages: languages)
        return report
    }

    @Test func firstProblemFollowsTheDeclaredFieldAndRuleOrder() {
        // Every field fails; "name" was checked first and its first rule (NotEmpty) is the first problem.
        let all = Self.report(name: " ", password: "short", confirmation: "")
        #expect(all.problems.map(\.code) == ["empty", "too_short", "too_short", "empty", "mismatch"])
        #expect(all.firstProblem?.field == "name" && all.firstProblem?.code == "empty")
        #expect(all.firstProblem(of: "password")?.code == "too_short")
        #expect(all.firstProblem(of: "confirmPassword")?.code == "empty")

        // The same inputs give the same first problem every time, and fixing it moves on to the next field's.
        let again = Self.report(name: " ", password: "short", confirmation: "")
        #expect(again.firstProblem == all.firstProblem)
        let nameFixed = Self.report(name: "Mio", password: "short", confirmation: "")
        #expect(nameFixed.firstProblem?.field == "password" && nameFixed.firstProblem?.message == "must be at least 10 characters")
        #expect(nameFixed.firstProblem(of: "name") == nil)

        let valid = Self.report(name: "Mio", password: "correct horse battery", confirmation: "correct horse battery")
        #expect(valid.firstProblem == nil && valid.problems.isEmpty)
        #expect(throws: Never.self) { try valid.throwIfFailed("The form") }
    }

    @Test func matchesComparesWithTheOtherFieldInTheReadersLanguage() {
        let english = Self.report(name: "Mio", password: "correct horse battery", confirmation: "correct horse batery")
        #expect(english.problems.map(\.code) == ["mismatch"])
        #expect(english.firstProblem == KizunaError.Detail(code: "mismatch", message: "must match the password", field: "confirmPassword"))

        let japanese = Self.report(name: "Mio", password: "correct horse battery", confirmation: "x", languages: ["ja-JP"])
        #expect(japanese.firstProblem?.message == "パスワードと一致しません")
        let error = #expect(throws: KizunaError.self) { try japanese.throwIfFailed("The form") }
        #expect(error?.field == "confirmPassword" && error?.details.map(\.code) == ["mismatch"])

        // Without labels the message names the field itself.
        let bare = FieldValidator<String>(field: "confirmEmail", rules: [Matches(field: "email")])
        let form = ValidationForm(["email": "mio@example.com"])
        #expect(bare.problems(in: "mio@example.com", form: form).isEmpty)
        #expect(bare.problems(in: "mio@example.org", form: form).map(\.message) == ["must match email"])
        #expect(bare.problems(in: "mio@example.org", form: form, languages: ["ja"]).map(\.message) == ["emailと一致しません"])
    }

    @Test func matchesFailsWhenThereIsNothingToMatch() {
        let rule = Matches<String>(field: "password")
        // Outside a form, before the other field was checked, or against a value of another type: never a silent pass.
        #expect(rule.check("secret")?.code == "mismatch")
        var report = ValidationReport()
        report.check("secret", with: FieldValidator(field: "confirmPassword", rules: [rule]))
        report.check("secret", with: Self.password)
        #expect(report.firstProblem?.field == "confirmPassword")
        #expect(rule.check("secret", in: ValidationForm(["password": 42]))?.code == "mismatch")

        // A report can start from values it does not check itself.
        var seeded = ValidationReport(form: ValidationForm(["password": "secret"]))
        seeded.check("secret", with: FieldValidator(field: "confirmPassword", rules: [rule]))
        #expect(seeded.firstProblem == nil && seeded.form.value(of: "confirmPassword", as: String.self) == "secret")

        // Numbers match too.
        let pin = FieldValidator<Int>(field: "confirmPin", rules: [Matches(field: "pin")])
        #expect(pin.problems(in: 1234, form: ValidationForm(["pin": 1234])).isEmpty)
        #expect(pin.problems(in: 1243, form: ValidationForm(["pin": 1234])).map(\.code) == ["mismatch"])
    }

    @Test(arguments: [
        (["ja-JP", "en"], "ja"), (["fr", "ja"], "ja"), (["fr"], "en"), ([], "en"), (["EN_gb", "ja"], "en"), (["ja_JP"], "ja"),
    ])
    func languageNegotiationPicksTheFirstAvailable(languages: [String], expected: String) {
        #expect(LocaleTag.negotiate(languages, available: ["en", "ja"]) == expected)
    }
}
