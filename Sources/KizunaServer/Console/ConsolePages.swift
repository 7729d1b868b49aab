import Foundation
import KizunaCore

/// The console's pages: server-rendered HTML that works without scripts, in the operator's language, with one
/// stylesheet served by the console itself (`/console/console.css`, so the policy can be `default-src 'self'`).
///
/// Accessibility: a skip link, landmarks (`header`, `nav` with labels, `main`), a label for every field, problems in
/// a `role="alert"` summary and at their field (`aria-describedby`, `aria-invalid`), `aria-current` on the section
/// shown, visible focus, and colours that keep a 4.5:1 contrast in light and dark mode (`prefers-color-scheme`).
enum ConsolePages {
    /// A problem to show: at its field when it names one the form has, else in the summary only.
    struct Problem: Sendable {
        var field: String?
        var message: String
    }

    /// The console's sections, in the navigation's order.
    enum Section: String, CaseIterable {
        case apps, users, health

        var path: String { "/console/\(rawValue)" }

        func title(_ text: ConsoleText) -> String {
            switch self {
            case .apps: text[.appsTitle]
            case .users: text[.usersTitle]
            case .health: text[.healthTitle]
            }
        }
    }

    /// What the signed-in layout needs besides the page itself.
    struct Frame {
        let text: ConsoleText
        /// The CSRF token the page's forms carry (the sign-out form too).
        let csrf: String
        /// The section shown, marked in the navigation.
        let section: Section?
        /// The page's own path, where the language switch comes back to.
        let path: String
    }

    /// A page for a signed-in operator: header, navigation, language switch and sign-out around `body`.
    static func page(_ frame: Frame, title: String, notice: String? = nil, body: String) -> String {
        let text = frame.text
        let sections = Section.allCases.map { section in
            let current = section == frame.section ? #" aria-current="page""# : ""
            return #"<a href="\#(section.path)"\#(current)>\#(escape(section.title(text)))</a>"#
        }.joined()
        let header = """
            <header>
            <a class="brand" href="/console">\(escape(text[.console]))</a>
            <nav aria-label="\(escape(text[.mainNavigation]))">\(sections)</nav>
            \(languageSwitch(text, back: frame.path))
            <form method="post" action="/console/sign-out">\(csrfField(frame.csrf))<button type="submit" class="secondary">\(escape(text[.signOutButton]))</button></form>
            </header>
            """
        return document(text, title: title, header: header, notice: notice, body: body)
    }

    /// A page with no session behind it (signing in): the language switch and nothing else around `body`.
    /// - Parameter refresh: Reload the page after this many seconds (a page showing progress), if given.
    static func publicPage(_ text: ConsoleText, title: String, path: String, notice: String? = nil, refresh: Int? = nil, body: String) -> String {
        let header = """
            <header>
            <span class="brand">\(escape(text[.console]))</span>
            \(languageSwitch(text, back: path))
            </header>
            """
        return document(text, title: title, header: header, notice: notice, refresh: refresh, body: body)
    }

    static func signIn(_ text: ConsoleText, problems: [Problem] = [], notice: String? = nil) -> String {
        publicPage(
            text, title: text[.signInTitle], path: "/console/sign-in", notice: notice,
            body: """
                \(summary(text, problems))
                <form method="post" action="/console/sign-in" class="narrow">
                \(field("token", label: text[.tokenLabel], type: "password", problems: problems, hint: text[.tokenHint], extra: #"autocomplete="off" spellcheck="false" autofocus required"#))
                <button type="submit">\(escape(text[.signInButton]))</button>
                </form>
                """)
    }

    /// A page saying a request was refused (a form from elsewhere, a stale CSRF token).
    static func refused(_ text: ConsoleText, message: String) -> String {
        publicPage(
            text, title: text[.console], path: "/console",
            body: #"<p role="alert" class="problem">\#(escape(message))</p><p><a href="/console">\#(escape(text[.console]))</a></p>"#)
    }

    // MARK: Building blocks

    private static func document(_ text: ConsoleText, title: String, header: String, notice: String?, refresh: Int? = nil, body: String) -> String {
        """
        <!doctype html>
        <html lang="\(text.language)">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">\(refresh.map { #"<meta http-equiv="refresh" content="\#($0)">"# } ?? "")
        <title>\(escape(title)) — \(escape(text[.console]))</title>
        <link rel="stylesheet" href="/console/console.css">
        </head>
        <body>
        <a class="skip" href="#main">\(escape(text[.skipToContent]))</a>
        \(header)
        <main id="main" tabindex="-1">
        <h1>\(escape(title))</h1>
        \(notice.map { #"<p role="status" class="notice">\#(escape($0))</p>"# } ?? "")
        \(body)
        </main>
        </body>
        </html>

        """
    }

    private static func languageSwitch(_ text: ConsoleText, back: String) -> String {
        let links = ConsoleText.languages.map { language in
            let href =
                "/console/language?to=\(language.code)&amp;back=\(escape(back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/console"))"
            let current = language.code == text.language ? #" aria-current="true""# : ""
            return #"<a href="\#(href)" lang="\#(language.code)" hreflang="\#(language.code)"\#(current)>\#(escape(language.name))</a>"#
        }.joined(separator: " ")
        return #"<nav class="languages" aria-label="\#(escape(text[.language]))">\#(links)</nav>"#
    }

    /// The hidden field carrying the session's CSRF token.
    static func csrfField(_ token: String) -> String {
        #"<input type="hidden" name="csrf" value="\#(escape(token))">"#
    }

    /// A labelled input with its hint and its problems.
    static func field(
        _ name: String, label: String, type: String = "text", value: String = "", problems: [Problem], hint: String? = nil, extra: String = ""
    ) -> String {
        let (describedBy, invalid, notes) = annotations(name, problems: problems, hint: hint)
        let valueAttribute = value.isEmpty ? "" : #" value="\#(escape(value))""#
        return """
            <div class="field">
            <label for="\(name)">\(escape(label))</label>
            <input id="\(name)" name="\(name)" type="\(type)"\(valueAttribute)\(describedBy)\(invalid) \(extra)>
            \(notes)
            </div>
            """
    }

    /// A labelled text area with its hint and its problems.
    static func textArea(
        _ name: String, label: String, value: String, problems: [Problem], hint: String? = nil, rows: Int, extra: String = ""
    ) -> String {
        let (describedBy, invalid, notes) = annotations(name, problems: problems, hint: hint)
        return """
            <div class="field">
            <label for="\(name)">\(escape(label))</label>
            <textarea id="\(name)" name="\(name)" rows="\(rows)"\(describedBy)\(invalid) \(extra)>\(escape(value))</textarea>
            \(notes)
            </div>
            """
    }

    /// A labelled `select` of `options` (value and shown text) with `selected` chosen.
    static func select(_ name: String, label: String, options: [(value: String, text: String)], selected: String, problems: [Problem]) -> String {
        let (describedBy, invalid, notes) = annotations(name, problems: problems, hint: nil)
        let items = options.map { option in
            #"<option value="\#(escape(option.value))"\#(option.value == selected ? " selected" : "")>\#(escape(option.text))</option>"#
        }.joined()
        return """
            <div class="field">
            <label for="\(name)">\(escape(label))</label>
            <select id="\(name)" name="\(name)"\(describedBy)\(invalid)>\(items)</select>
            \(notes)
            </div>
            """
    }

    private static func annotations(_ name: String, problems: [Problem], hint: String?) -> (String, String, String) {
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
        let describedBy = described.isEmpty ? "" : #" aria-describedby="\#(described.joined(separator: " "))""#
        return (describedBy, mine.isEmpty ? "" : #" aria-invalid="true""#, notes)
    }

    /// Every problem, listed at the top of the form; those with a field link to it.
    static func summary(_ text: ConsoleText, _ problems: [Problem]) -> String {
        guard !problems.isEmpty else { return "" }
        let items = problems.map { problem in
            problem.field.map { ##"<li><a href="#\##($0)">\##(escape(problem.message))</a></li>"## } ?? "<li>\(escape(problem.message))</li>"
        }.joined()
        return #"<div class="summary" role="alert"><p>\#(escape(text[.summaryHeading]))</p><ul>\#(items)</ul></div>"#
    }

    /// The problems an admin API refusal describes, each at the form field its JSON path names (`$.bundleId` and
    /// `bundleId` both name `bundleId`), prefixed with that field's label from `label`.
    static func problems(_ error: KizunaError, label: (String) -> String?) -> [Problem] {
        func field(_ path: String?) -> String? {
            guard var path else { return nil }
            if path.hasPrefix("$.") { path.removeFirst(2) }
            return path.isEmpty || path == "$" ? nil : path
        }
        let details =
            error.details.isEmpty ? [KizunaError.Detail(code: error.code.rawValue, message: error.message, field: error.field)] : error.details
        return details.map { detail in
            let name = field(detail.field)
            let message = error.details.isEmpty ? detail.message : name.flatMap(label).map { "\($0): \(detail.message)" } ?? detail.message
            return Problem(field: name, message: message)
        }
    }

    /// HTML-escapes text for element content and quoted attribute values.
    static func escape(_ text: String) -> String {
        WebPages.escape(text)
    }
}
