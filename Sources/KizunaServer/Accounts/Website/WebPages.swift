import Foundation
import KizunaCore

/// The website's account pages: plain HTML forms with a little CSS, no script, built for password managers.
///
/// - Fields carry `autocomplete="username"`, `current-password` and `new-password`, so Safari's password manager and
///   Password AutoFill (with the served apple-app-site-association's `webcredentials`) fill and save them, and
///   offer the same credentials in the app. Every form with a password field also has a username field (hidden or
///   read-only where the account is already known): without one, Safari does not offer to save the password.
/// - The words come from a ``WebText`` in the reader's language (English or Japanese), `<html lang>` too.
/// - Every field has a `<label>`; problems are listed in a `role="alert"` summary and tied to their field with
///   `aria-describedby` and `aria-invalid`.
enum WebPages {
    /// A problem to show: one per failing rule, with the field it belongs to.
    struct Problem {
        var field: String?
        var message: String
    }

    static func signIn(_ text: WebText, identifier: String = "", next: String?, problems: [Problem] = []) -> String {
        page(
            text, title: text.signInTitle,
            body: """
                \(summary(text, problems))
                <form method="post" action="/account/sign-in">
                \(next.map { #"<input type="hidden" name="next" value="\#(escape($0))">"# } ?? "")
                \(field("identifier", label: text.identifierLabel, type: "text", autocomplete: "username", value: identifier, problems: problems, extra: #"autocapitalize="none" spellcheck="false" autofocus"#))
                \(field("password", label: text.passwordLabel, type: "password", autocomplete: "current-password", problems: problems))
                <button type="submit">\(escape(text.signInButton))</button>
                </form>
                <p>\(escape(text.newHere)) <a href="/account/sign-up">\(escape(text.createAccountLink))</a></p>
                """)
    }

    static func signUp(_ text: WebText, identifier: String = "", problems: [Problem] = []) -> String {
        page(
            text, title: text.signUpTitle,
            body: """
                \(summary(text, problems))
                <form method="post" action="/account/sign-up">
                \(field("identifier", label: text.identifierLabel, type: "text", autocomplete: "username", value: identifier, problems: problems, extra: #"autocapitalize="none" spellcheck="false" autofocus"#))
                \(field("password", label: text.passwordLabel, type: "password", autocomplete: "new-password", problems: problems, hint: text.signUpPasswordHint, extra: #"minlength="10" passwordrules="minlength: 10;""#))
                <button type="submit">\(escape(text.signUpButton))</button>
                </form>
                <p>\(escape(text.haveAccount)) <a href="/account/sign-in">\(escape(text.signInLink))</a></p>
                """)
    }

    /// The signed-in account's identifier rides along hidden: the person knows who they are, and password managers
    /// need it to know which saved password to update.
    static func changePassword(_ text: WebText, identifier: String, problems: [Problem] = [], done: Bool = false) -> String {
        page(
            text, title: text.changePasswordTitle,
            body: """
                \(done ? #"<p role="status" class="done">\#(escape(text.passwordChanged))</p>"# : summary(text, problems))
                <form method="post" action="/account/change-password">
                <input type="text" name="username" autocomplete="username" value="\(escape(identifier))" hidden>
                \(field("currentPassword", label: text.currentPasswordLabel, type: "password", autocomplete: "current-password", problems: problems))
                \(field("newPassword", label: text.newPasswordLabel, type: "password", autocomplete: "new-password", problems: problems, hint: text.newPasswordHint, extra: #"minlength="10" passwordrules="minlength: 10;""#))
                <button type="submit">\(escape(text.changePasswordButton))</button>
                </form>
                <p><a href="/account">\(escape(text.backToAccount))</a></p>
                """)
    }

    /// The account the reset link is for is shown read-only: the person sees whose password they set, and password
    /// managers save the new one under that username.
    static func resetPassword(_ text: WebText, token: String, identifier: String, problems: [Problem] = []) -> String {
        page(
            text, title: text.resetPasswordTitle,
            body: """
                \(summary(text, problems))
                <form method="post" action="/account/reset-password">
                <input type="hidden" name="token" value="\(escape(token))">
                \(field("username", label: text.identifierLabel, type: "text", autocomplete: "username", value: identifier, problems: [], extra: #"readonly autocapitalize="none" spellcheck="false""#))
                \(field("newPassword", label: text.newPasswordLabel, type: "password", autocomplete: "new-password", problems: problems, hint: text.newPasswordHint, extra: #"minlength="10" passwordrules="minlength: 10;" autofocus"#))
                <button type="submit">\(escape(text.resetPasswordButton))</button>
                </form>
                """)
    }

    static func passwordWasReset(_ text: WebText) -> String {
        page(
            text, title: text.resetPasswordTitle,
            body: #"<p role="status" class="done">\#(escape(text.passwordReset)) <a href="/account/sign-in">\#(escape(text.signInWithIt))</a></p>"#)
    }

    static func account(_ text: WebText, identifier: String) -> String {
        page(
            text, title: text.accountTitle,
            body: """
                <p>\(text.signedInAs(#"<strong id="signed-in-as">\#(escape(identifier))</strong>"#))</p>
                <p><a href="/account/change-password">\(escape(text.changePasswordLink))</a></p>
                <form method="post" action="/account/sign-out"><button type="submit">\(escape(text.signOutButton))</button></form>
                """)
    }

    /// A refusal with nothing to fill in (an expired link), and the way back to signing in.
    static func message(_ text: WebText, title: String, error: KizunaError) -> String {
        let alert = #"<p role="alert" data-code="\#(escape(error.code.rawValue))">\#(escape(text.message(for: error)))</p>"#
        return page(text, title: title, body: alert + #"<p><a href="/account/sign-in">\#(escape(text.signInLink))</a></p>"#)
    }

    // MARK: Building blocks

    private static func page(_ text: WebText, title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="\(text.language)">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        <main>
        <h1>\(escape(title))</h1>
        \(body)
        </main>
        </body>
        </html>

        """
    }

    private static func field(
        _ name: String, label: String, type: String, autocomplete: String, value: String = "", problems: [Problem], hint: String? = nil,
        extra: String = ""
    ) -> String {
        let mine = problems.filter { $0.field == name }
        var described: [String] = []
        var notes = ""
        if let hint {
            described.append("\(name)-hint")
            notes += #"<p class="hint" id="\#(name)-hint">\#(escape(hint))</p>"#
        }
        if !mine.isEmpty {
            described.append("\(name)-errors")
            notes += #"<ul class="errors" id="\#(name)-errors">"# + mine.map { "<li>\(escape($0.message))</li>" }.joined() + "</ul>"
        }
        let valueAttribute = value.isEmpty ? "" : #" value="\#(escape(value))""#
        let describedBy = described.isEmpty ? "" : #" aria-describedby="\#(described.joined(separator: " "))""#
        let invalid = mine.isEmpty ? "" : #" aria-invalid="true""#
        return """
            <div class="field">
            <label for="\(name)">\(escape(label))</label>
            <input id="\(name)" name="\(name)" type="\(type)" autocomplete="\(autocomplete)" required\(valueAttribute)\(describedBy)\(invalid) \(extra)>
            \(notes)
            </div>
            """
    }

    private static func summary(_ text: WebText, _ problems: [Problem]) -> String {
        guard !problems.isEmpty else { return "" }
        let items = problems.map { "<li>\(escape($0.message))</li>" }.joined()
        return #"<div class="summary" role="alert"><p>\#(escape(text.summaryHeading))</p><ul>\#(items)</ul></div>"#
    }

    /// HTML-escapes text for element content and quoted attribute values.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    private static let style = """
        body{font:16px/1.5 system-ui,-apple-system,sans-serif;margin:0;background:#f6f6f8;color:#1c1c1e}\
        main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12)}\
        h1{font-size:1.5rem;margin-top:0}.field{margin-bottom:1rem}label{display:block;font-weight:600;margin-bottom:.25rem}\
        input{box-sizing:border-box;width:100%;padding:.6rem;font:inherit;border:1px solid #8e8e93;border-radius:8px}\
        input[aria-invalid=true]{border-color:#c1121f}input:focus,button:focus,a:focus{outline:3px solid #0a66d6;outline-offset:2px}\
        button{width:100%;padding:.7rem;font:inherit;font-weight:600;color:#fff;background:#0a66d6;border:0;border-radius:8px;cursor:pointer}\
        .hint{color:#48484a;font-size:.875rem;margin:.25rem 0}.errors,.summary{color:#c1121f}.errors{margin:.25rem 0;padding-left:1.25rem}\
        .summary{border:1px solid #c1121f;border-radius:8px;padding:.5rem 1rem;margin-bottom:1rem}.done{color:#1b7f3b}a{color:#0a66d6}
        """
}
