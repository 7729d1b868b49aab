import Foundation
import KizunaCore

/// The website's account pages: plain HTML forms with a little CSS, no script, built for password managers.
///
/// - Fields carry `autocomplete="username"`, `current-password` and `new-password`, so Safari's password manager and
///   Password AutoFill (with the served apple-app-site-association's `webcredentials`) fill and save them, and
///   offer the same credentials in the app.
/// - Every field has a `<label>`; problems are listed in a `role="alert"` summary and tied to their field with
///   `aria-describedby` and `aria-invalid`.
enum WebPages {
    /// A problem to show: one per failing rule, with the field it belongs to.
    struct Problem {
        var field: String?
        var message: String
    }

    static func signIn(identifier: String = "", next: String?, problems: [Problem] = []) -> String {
        page(
            title: "Sign in",
            body: """
                \(summary(problems))
                <form method="post" action="/account/sign-in">
                \(next.map { #"<input type="hidden" name="next" value="\#(escape($0))">"# } ?? "")
                \(field("identifier", label: "Email or username", type: "text", autocomplete: "username", value: identifier, problems: problems, extra: #"autocapitalize="none" spellcheck="false" autofocus"#))
                \(field("password", label: "Password", type: "password", autocomplete: "current-password", problems: problems))
                <button type="submit">Sign in</button>
                </form>
                <p>New here? <a href="/account/sign-up">Create an account</a></p>
                """)
    }

    static func signUp(identifier: String = "", problems: [Problem] = []) -> String {
        page(
            title: "Create an account",
            body: """
                \(summary(problems))
                <form method="post" action="/account/sign-up">
                \(field("identifier", label: "Email or username", type: "text", autocomplete: "username", value: identifier, problems: problems, extra: #"autocapitalize="none" spellcheck="false" autofocus"#))
                \(field("password", label: "Password", type: "password", autocomplete: "new-password", problems: problems, hint: "At least 10 characters. Not a common password, and not your email address or username.", extra: #"minlength="10" passwordrules="minlength: 10;""#))
                <button type="submit">Create account</button>
                </form>
                <p>Already have an account? <a href="/account/sign-in">Sign in</a></p>
                """)
    }

    static func changePassword(identifier: String, problems: [Problem] = [], done: Bool = false) -> String {
        page(
            title: "Change password",
            body: """
                \(done ? #"<p role="status" class="done">Your password has been changed. Other devices have been signed out.</p>"# : summary(problems))
                <form method="post" action="/account/change-password">
                <input type="text" name="username" autocomplete="username" value="\(escape(identifier))" hidden>
                \(field("currentPassword", label: "Current password", type: "password", autocomplete: "current-password", problems: problems))
                \(field("newPassword", label: "New password", type: "password", autocomplete: "new-password", problems: problems, hint: "At least 10 characters.", extra: #"minlength="10" passwordrules="minlength: 10;""#))
                <button type="submit">Change password</button>
                </form>
                <p><a href="/account">Back to your account</a></p>
                """)
    }

    static func resetPassword(token: String, problems: [Problem] = [], done: Bool = false) -> String {
        page(
            title: "Choose a new password",
            body: done
                ? #"<p role="status" class="done">Your password has been reset. <a href="/account/sign-in">Sign in</a> with it.</p>"#
                : """
                \(summary(problems))
                <form method="post" action="/account/reset-password">
                <input type="hidden" name="token" value="\(escape(token))">
                \(field("newPassword", label: "New password", type: "password", autocomplete: "new-password", problems: problems, hint: "At least 10 characters.", extra: #"minlength="10" passwordrules="minlength: 10;""#))
                <button type="submit">Set password</button>
                </form>
                """)
    }

    static func account(identifier: String) -> String {
        page(
            title: "Your account",
            body: """
                <p>Signed in as <strong id="signed-in-as">\(escape(identifier))</strong>.</p>
                <p><a href="/account/change-password">Change password</a></p>
                <form method="post" action="/account/sign-out"><button type="submit">Sign out</button></form>
                """)
    }

    static func message(title: String, text: String, code: String) -> String {
        page(title: title, body: #"<p role="alert" data-code="\#(escape(code))">\#(escape(text))</p><p><a href="/account/sign-in">Sign in</a></p>"#)
    }

    // MARK: Building blocks

    private static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
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

    private static func summary(_ problems: [Problem]) -> String {
        guard !problems.isEmpty else { return "" }
        let items = problems.map { "<li>\(escape($0.message))</li>" }.joined()
        return #"<div class="summary" role="alert"><p>Please fix the following:</p><ul>\#(items)</ul></div>"#
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
