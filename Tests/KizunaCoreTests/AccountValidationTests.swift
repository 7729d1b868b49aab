import Testing

@testable import KizunaCore

@Suite("Account identifiers and passwords")
struct AccountValidationTests {
    @Test(arguments: [
        ("Mio@Example.COM", "mio@example.com"),
        ("ｍｉｏ＠ｅｘａｍｐｌｅ．ｃｏｍ", "mio@example.com"),  // full width
        ("  mio@example.com\n", "mio@example.com"),
        ("Ｍｉｏ_Ｔａｎａｋａ", "mio_tanaka"),
        ("cafe\u{301}", "caf\u{E9}"),  // NFD and NFC agree
        ("ＳＴＲＡＳＳＥ", "strasse"),
        ("ﬁle", "file"),  // compatibility ligature
    ])
    func lookAlikesNormalizeToOneIdentifier(input: String, normalized: String) {
        #expect(AccountIdentifier(input).normalized == normalized)
        #expect(AccountIdentifier(input) == AccountIdentifier(normalized))
    }

    @Test(arguments: [
        ("mio@example.com", []),
        ("mio.tanaka+shop@mail.example.co.jp", []),
        ("みお_01", []),
        ("mio", []),
        ("", ["empty"]),
        ("mi", ["bad_username"]),
        ("mi o", ["invisible_character", "bad_username"]),
        ("mi\u{200B}o", ["invisible_character", "bad_username"]),
        ("mio\u{202E}moc.elpmaxe", ["invisible_character", "bad_username"]),
        ("mio@", ["bad_email"]),
        ("mio@localhost", ["bad_email"]),
        ("mio@@example.com", ["bad_email"]),
        (".mio@example.com", ["bad_email"]),
        ("mio@-example.com", ["bad_email"]),
        ("mio!", ["bad_username"]),
    ])
    func identifierRules(identifier: String, codes: [String]) {
        let problems = AccountValidation.identifier.problems(in: AccountIdentifier.normalize(identifier))
        #expect(problems.map(\.code) == codes, "\(identifier)")
    }

    @Test func aWeakPasswordListsEveryFailingRuleInTheReadersLanguage() {
        let error = #expect(throws: KizunaError.self) {
            try AccountValidation.validate(identifier: "mio@example.com", password: "mio", languages: ["ja-JP", "en"])
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.details.map(\.code) == ["password_too_short", "password_repetitive", "password_contains_identifier"])
        #expect(error?.details.allSatisfy { $0.field == "password" } == true)
        #expect(error?.details.first?.message == "10文字以上にしてください")

        let english = #expect(throws: KizunaError.self) {
            try AccountValidation.validate(identifier: "mio!", password: "Password123", languages: ["fr", "en-GB"])
        }
        #expect(english?.details.map(\.code) == ["bad_username", "password_common"])
        #expect(english?.details.last?.message == "is one of the most common passwords; choose another")
    }

    @Test(arguments: [
        ("correct horse battery staple", []),
        ("ぱすわーどはひみつです", []),
        ("aaaaaaaaaaaa", ["password_repetitive"]),
        ("1212121212121", ["password_repetitive"]),
        ("qwertyuiop", ["password_common"]),
        ("MIO-TANAKA-2026", ["password_contains_identifier"]),
        (String(repeating: "abcdef", count: 43), ["password_too_long"]),
    ])
    func passwordRules(password: String, codes: [String]) {
        let problems = AccountValidation.password.problems(in: PasswordCandidate(password: password, identifier: "mio-tanaka"))
        #expect(problems.map(\.code) == codes, "\(password)")
    }
}
