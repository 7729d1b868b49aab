import Foundation

/// The rules an app's fields must follow, shared by the server (authoritative) and clients (early feedback).
public enum AppValidation {
    /// Slug: 2–63 characters, lowercase ASCII letters, digits and single hyphens, starting with a letter.
    public static let id = FieldValidator<String>(
        field: "id",
        rules: [
            Length(2...63),
            Format(message: "use lowercase letters, digits and hyphens, start with a letter, no double or trailing hyphen") { slug in
                guard let first = slug.first, first.isASCII, first.isLowercase, slug.last != "-", !slug.contains("--") else { return false }
                return slug.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }
            },
        ])

    /// Display name: 1–100 characters, not blank.
    public static let name = FieldValidator<String>(field: "name", rules: [NotEmpty(), Length(0...100)])

    /// Bundle id: reverse-DNS of ASCII letters, digits, hyphens and periods, at most 155 characters.
    public static let bundleId = FieldValidator<String>(
        field: "bundleId",
        rules: [
            Length(3...155),
            Format(message: "use reverse-DNS form such as com.example.app: letters, digits, hyphens and periods, at least two parts") { id in
                let parts = id.split(separator: ".", omittingEmptySubsequences: false)
                return parts.count >= 2
                    && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }
            },
        ])

    /// Apple team id: exactly 10 uppercase ASCII letters or digits, e.g. `ABCDE12345`.
    public static let teamId = FieldValidator<String?>(
        field: "teamId",
        rules: [
            IfPresent(
                Format(message: "must be exactly 10 uppercase letters or digits, as shown in the Apple Developer account") { id in
                    id.count == 10 && id.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
                })
        ])

    /// Store URL: an absolute `https` URL with a host.
    public static let storeURL = FieldValidator<String?>(
        field: "storeURL",
        rules: [
            IfPresent(Length(1...2048)),
            IfPresent(
                Format(message: "must be an absolute https:// URL") { text in
                    guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else { return false }
                    return true
                }),
        ])

    /// Validates a complete app and throws `validation_failed` listing every problem.
    public static func validate(_ app: NewApp) throws(KizunaError) {
        var report = ValidationReport()
        report.check(app.id, with: id)
        report.check(app.name, with: name)
        report.check(app.bundleId, with: bundleId)
        report.check(app.teamId, with: teamId)
        report.check(app.storeURL, with: storeURL)
        if app.platform.isApple, app.teamId == nil {
            report.record(KizunaError.Detail(code: "required", message: "is required for Apple platforms", field: "teamId"))
        }
        try report.throwIfFailed("The app")
    }
}
