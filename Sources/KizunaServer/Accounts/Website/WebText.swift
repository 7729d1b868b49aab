import Foundation
import KizunaCore

/// The account pages' words in one language: titles, labels, hints, buttons, links and the refusals a page shows.
/// English and Japanese; ``init(languages:)`` picks one from `Accept-Language`.
struct WebText: Sendable {
    /// The language code, for `<html lang>` and the validation messages on the same page.
    var language: String
    var signInTitle, signUpTitle, changePasswordTitle, resetPasswordTitle, accountTitle, linkExpiredTitle: String
    var identifierLabel, passwordLabel, currentPasswordLabel, newPasswordLabel: String
    var signUpPasswordHint, newPasswordHint: String
    var signInButton, signUpButton, changePasswordButton, resetPasswordButton, signOutButton: String
    var newHere, createAccountLink, haveAccount, signInLink, backToAccount, changePasswordLink: String
    var summaryHeading: String
    var passwordChanged, passwordReset, signInWithIt: String
    /// "Signed in as …" around the identifier's (already escaped) HTML.
    var signedInAs: @Sendable (String) -> String
    /// A refusal's message (wrong password, lock, expired link…) in this language; `nil` keeps the error's English.
    var refusal: @Sendable (KizunaError) -> String?
}

// In an extension, so the memberwise initializer the tables below use stays.
extension WebText {
    /// The texts in the first of `languages` (most preferred first, from `Accept-Language`) there are texts for, else
    /// English: the choice the validation messages make too (``LocaleTag/negotiate(_:available:fallback:)``).
    init(languages: [String]) {
        let language = LocaleTag.negotiate(languages, available: Set(Self.all.map(\.language)))
        self = Self.all.first { $0.language == language } ?? Self.english
    }

    /// The visible label of a form field, to prefix its problems in the summary; `nil` for a field no page shows.
    func label(of field: String) -> String? {
        switch field {
        case "identifier", "username": identifierLabel
        case "password": passwordLabel
        case "currentPassword": currentPasswordLabel
        case "newPassword": newPasswordLabel
        default: nil
        }
    }

    /// The message of a refusal in this language.
    func message(for error: KizunaError) -> String {
        refusal(error) ?? error.message
    }

    static let all = [english, japanese]

    static let english = WebText(
        language: "en",
        signInTitle: "Sign in", signUpTitle: "Create an account", changePasswordTitle: "Change password",
        resetPasswordTitle: "Choose a new password", accountTitle: "Your account", linkExpiredTitle: "Link expired",
        identifierLabel: "Email or username", passwordLabel: "Password", currentPasswordLabel: "Current password",
        newPasswordLabel: "New password",
        signUpPasswordHint: "At least 10 characters. Not a common password, and not your email address or username.",
        newPasswordHint: "At least 10 characters.",
        signInButton: "Sign in", signUpButton: "Create account", changePasswordButton: "Change password", resetPasswordButton: "Set password",
        signOutButton: "Sign out",
        newHere: "New here?", createAccountLink: "Create an account", haveAccount: "Already have an account?", signInLink: "Sign in",
        backToAccount: "Back to your account", changePasswordLink: "Change password",
        summaryHeading: "Please fix the following:",
        passwordChanged: "Your password has been changed. Other devices have been signed out.",
        passwordReset: "Your password has been reset.", signInWithIt: "Sign in with it",
        signedInAs: { "Signed in as \($0)." },
        refusal: { _ in nil })

    static let japanese = WebText(
        language: "ja",
        signInTitle: "サインイン", signUpTitle: "アカウントを作成", changePasswordTitle: "パスワードを変更",
        resetPasswordTitle: "新しいパスワードを設定", accountTitle: "アカウント", linkExpiredTitle: "リンクの期限切れ",
        identifierLabel: "メールアドレスまたはユーザー名", passwordLabel: "パスワード", currentPasswordLabel: "現在のパスワード",
        newPasswordLabel: "新しいパスワード",
        signUpPasswordHint: "10文字以上。よく使われるパスワードや、メールアドレス・ユーザー名を含むものは使えません。",
        newPasswordHint: "10文字以上。",
        signInButton: "サインイン", signUpButton: "アカウントを作成", changePasswordButton: "パスワードを変更", resetPasswordButton: "パスワードを設定",
        signOutButton: "サインアウト",
        newHere: "はじめての方は", createAccountLink: "アカウントを作成", haveAccount: "アカウントをお持ちの方は", signInLink: "サインイン",
        backToAccount: "アカウントに戻る", changePasswordLink: "パスワードを変更",
        summaryHeading: "次の点を直してください：",
        passwordChanged: "パスワードを変更しました。ほかのデバイスはサインアウトしました。",
        passwordReset: "パスワードを再設定しました。", signInWithIt: "新しいパスワードでサインイン",
        signedInAs: { "\($0) でサインインしています。" },
        refusal: japaneseRefusal)

    private static func japaneseRefusal(_ error: KizunaError) -> String? {
        switch (error.code, error.field) {
        case (.invalidCredentials, "currentPassword"?): "現在のパスワードが違います。"
        case (.invalidCredentials, _): "メールアドレス（ユーザー名）またはパスワードが違います。"
        case (.throttled, _): "失敗が続いたため受け付けを止めています。\(error.retryAfter.map { "\($0)秒後に" } ?? "しばらくしてから")もう一度お試しください。"
        case (.accountDisabled, _): "このアカウントは無効になっています。アプリのサポートにお問い合わせください。"
        case (.unavailable, _): "サーバーが混み合っています。少し待ってからもう一度お試しください。"
        case (.conflict, "identifier"?): "このメールアドレスまたはユーザー名のアカウントはすでにあります（大文字と小文字、全角と半角は区別しません）。"
        case (.sessionExpired, "token"?): "このパスワード再設定リンクは期限切れか、すでに使われています。新しいリンクを依頼してください。"
        case (.sessionExpired, "code"?): "このサインインリンクは期限切れか、すでに使われています。アプリからもう一度開いてください。"
        default: nil
        }
    }
}
