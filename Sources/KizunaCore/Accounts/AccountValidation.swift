import Foundation

/// What a password is checked against: the password and the identifier it goes with.
public struct PasswordCandidate: Sendable, Hashable {
    public var password: String
    public var identifier: String?

    /// Creates a candidate.
    public init(password: String, identifier: String? = nil) {
        self.password = password
        self.identifier = identifier
    }
}

/// The rules for sign-up fields, shared by the server (authoritative, every failing rule in one answer) and the
/// SDK (the same messages while the user types). Messages come in English and Japanese.
public enum AccountValidation {
    /// An email address or a username, checked after ``AccountIdentifier`` normalisation.
    public static let identifier = FieldValidator<String>(
        field: "identifier",
        rules: [NotEmpty(), IdentifierCharacters(), IdentifierShape()]
    )

    /// A new password: long enough, not absurdly long, not one character repeated, not a well-known password,
    /// not the identifier. No composition rules (upper case, digits, symbols): length and "not guessable" are what
    /// NIST SP 800-63B asks for.
    public static let password = FieldValidator<PasswordCandidate>(
        field: "password",
        rules: [PasswordLength(minimum: 10, maximum: 256), PasswordVariety(minimumDistinct: 5), NotCommonPassword(), NotTheIdentifier()]
    )

    /// Validates a sign-up and throws `validation_failed` listing every problem of both fields.
    /// - Parameter languages: The reader's languages, most preferred first (from `Accept-Language`).
    public static func validate(identifier: String, password: String, languages: [String] = []) throws(KizunaError) {
        var report = ValidationReport()
        report.check(AccountIdentifier.normalize(identifier), with: self.identifier, languages: languages)
        report.check(PasswordCandidate(password: password, identifier: identifier), with: self.password, languages: languages)
        try report.throwIfFailed("The account")
    }
}

/// No control, format (zero-width, bidi) or white-space characters: they make look-alike identifiers.
public struct IdentifierCharacters: ValidationRule {
    public init() {}
    public func check(_ value: String) -> ValidationProblem? {
        let bad = value.unicodeScalars.first {
            [.control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate]
                .contains($0.properties.generalCategory)
        }
        guard let bad else { return nil }
        let name = String(format: "U+%04X", bad.value)
        return ValidationProblem(
            code: "invisible_character", message: "must not contain spaces or invisible characters (found \(name))",
            localized: ["ja": "空白や見えない文字は使えません（\(name)）"])
    }
}

/// An email address (`local@domain.tld`, at most 254 characters) or a username (3–32 letters, digits, `.`, `_`, `-`).
public struct IdentifierShape: ValidationRule {
    public init() {}
    public func check(_ value: String) -> ValidationProblem? {
        guard !value.isEmpty else { return nil }
        if value.contains("@") {
            let parts = value.split(separator: "@", omittingEmptySubsequences: false)
            let domainLabels = parts.count == 2 ? parts[1].split(separator: ".", omittingEmptySubsequences: false) : []
            let valid =
                parts.count == 2 && (1...64).contains(parts[0].utf8.count) && value.utf8.count <= 254 && domainLabels.count >= 2
                && domainLabels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
                && !parts[0].hasPrefix(".") && !parts[0].hasSuffix(".") && !parts[0].contains("..")
            return valid
                ? nil
                : ValidationProblem(
                    code: "bad_email", message: "must be an email address such as name@example.com",
                    localized: ["ja": "name@example.com のようなメールアドレスにしてください"])
        }
        let valid = (3...32).contains(value.count) && value.allSatisfy { $0.isLetter || $0.isNumber || "._-".contains($0) }
        return valid
            ? nil
            : ValidationProblem(
                code: "bad_username", message: "must be 3–32 letters, digits, periods, underscores or hyphens, or an email address",
                localized: ["ja": "3〜32文字の英数字・ピリオド・アンダースコア・ハイフン、またはメールアドレスにしてください"])
    }
}

/// The password's length in characters lies in a range. (Hashing never truncates: the server pre-hashes long
/// passwords itself, so the upper bound only stops abuse.)
public struct PasswordLength: ValidationRule {
    public let minimum: Int
    public let maximum: Int
    public init(minimum: Int, maximum: Int) {
        self.minimum = minimum
        self.maximum = maximum
    }
    public func check(_ value: PasswordCandidate) -> ValidationProblem? {
        if value.password.count < minimum {
            return ValidationProblem(
                code: "password_too_short", message: "must be at least \(minimum) characters", localized: ["ja": "\(minimum)文字以上にしてください"])
        }
        if value.password.count > maximum {
            return ValidationProblem(
                code: "password_too_long", message: "must be at most \(maximum) characters", localized: ["ja": "\(maximum)文字以内にしてください"])
        }
        return nil
    }
}

/// At least a few different characters: `aaaaaaaaaaaa` and `121212121212` are long but not secret.
public struct PasswordVariety: ValidationRule {
    public let minimumDistinct: Int
    public init(minimumDistinct: Int) { self.minimumDistinct = minimumDistinct }
    public func check(_ value: PasswordCandidate) -> ValidationProblem? {
        Set(value.password).count >= minimumDistinct
            ? nil
            : ValidationProblem(
                code: "password_repetitive", message: "must use at least \(minimumDistinct) different characters",
                localized: ["ja": "\(minimumDistinct)種類以上の文字を使ってください"])
    }
}

/// Not one of the passwords every guessing attack tries first.
public struct NotCommonPassword: ValidationRule {
    public init() {}
    public func check(_ value: PasswordCandidate) -> ValidationProblem? {
        Self.common.contains(value.password.lowercased())
            ? ValidationProblem(
                code: "password_common", message: "is one of the most common passwords; choose another",
                localized: ["ja": "よく使われるパスワードです。別のものにしてください"])
            : nil
    }

    /// Common passwords of 10 or more characters (shorter ones already fail the length rule).
    static let common: Set<String> = [
        "1234567890", "0123456789", "12345678910", "123456789a", "1q2w3e4r5t", "1qaz2wsx3edc", "qwertyuiop", "1234qwer!@#$",
        "password1!", "password12", "password123", "password1234", "passw0rd123", "iloveyou12", "qwerty1234", "qwerty12345",
        "qwerty123456", "abcdefghij", "abc1234567", "a1b2c3d4e5", "asdfghjkl;", "zxcvbnm123", "1111111111", "0000000000",
        "9876543210", "letmein123", "welcome123", "welcome1234", "admin12345", "administrator", "football123", "baseball123",
        "princess123", "sunshine123", "superman123", "starwars123", "dragon1234", "monkey1234", "trustno1234", "changeme123",
        "p@ssw0rd123", "p@ssword123", "qazwsxedcrfv", "1q2w3e4r5t6y", "q1w2e3r4t5", "q1w2e3r4t5y6", "zaq12wsxcde3",
    ]
}

/// Not the identifier, nor an email's local part, nor containing either.
public struct NotTheIdentifier: ValidationRule {
    public init() {}
    public func check(_ value: PasswordCandidate) -> ValidationProblem? {
        guard let identifier = value.identifier.map(AccountIdentifier.normalize), !identifier.isEmpty else { return nil }
        let password = AccountIdentifier.normalize(value.password)
        let local = identifier.split(separator: "@").first.map(String.init) ?? identifier
        let containsIdentifier = [identifier, local].contains { $0.count >= 3 && password.contains($0) }
        return containsIdentifier
            ? ValidationProblem(
                code: "password_contains_identifier", message: "must not contain your email address or username",
                localized: ["ja": "メールアドレスやユーザー名を含めないでください"])
            : nil
    }
}
