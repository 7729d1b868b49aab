import Foundation
import KizunaCore

/// An app's API keys page.
enum ConsoleAPIKeyPages {
    static func list(
        _ frame: ConsolePages.Frame, app: AppRecord, keys: [APIKeyInfo], created: CreatedAPIKey?, form: (name: String, days: String),
        problems: [ConsolePages.Problem], notice: String?, now: Date = Date()
    ) -> String {
        let text = frame.text
        let base = ConsoleAppPages.Tab.apiKeys.path(app)
        let shown = created.map { created in
            """
            <div class="notice" role="status"><p>\(escape(text[.keyCreatedHint]))</p>
            <div class="field"><label for="new-key">\(escape(created.info.name.isEmpty ? text[.newKeyLabel] : created.info.name))</label>\
            <input id="new-key" type="text" readonly value="\(escape(created.key))" spellcheck="false"></div></div>
            """
        }
        let table: String
        if keys.isEmpty {
            table = #"<p>\#(escape(text[.noKeys]))</p>"#
        } else {
            let rows = keys.map { key in
                let state: String
                let action: String
                if key.revokedAt != nil {
                    (state, action) = (#"<strong class="bad">\#(escape(text[.keyRevokedStatus]))</strong>"#, "")
                } else if key.expiresAt <= now {
                    (state, action) = (#"<strong class="bad">\#(escape(text[.keyExpiredStatus]))</strong>"#, "")
                } else {
                    state = escape(text[.activeStatus])
                    action = """
                        <form method="post" action="\(base)/\(ConsoleController.escapedSegment(key.id))/revoke">\(ConsolePages.csrfField(frame.csrf))\
                        <button type="submit" class="danger" aria-label="\(escape(text[.revokeButton])) \(escape(key.name.isEmpty ? key.id : key.name))">\
                        \(escape(text[.revokeButton]))</button></form>
                        """
                }
                return """
                    <tr><td>\(escape(key.name))</td><td class="mono">\(escape(key.id))</td><td>\(ConsoleAppPages.time(key.createdAt))</td>\
                    <td>\(ConsoleAppPages.time(key.expiresAt))</td><td>\(key.lastUsedAt.map(ConsoleAppPages.time) ?? escape(text[.never]))</td>\
                    <td>\(state)</td><td>\(action)</td></tr>
                    """
            }.joined(separator: "\n")
            table = """
                <table>
                <thead><tr><th scope="col">\(escape(text[.keyNameLabel]))</th><th scope="col">ID</th><th scope="col">\(escape(text[.createdColumn]))</th>\
                <th scope="col">\(escape(text[.expiresColumn]))</th><th scope="col">\(escape(text[.lastUsedColumn]))</th>\
                <th scope="col">\(escape(text[.statusColumn]))</th><th scope="col">\(escape(text[.actions]))</th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                """
        }
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .apiKeys))
            \(shown ?? "")
            <p class="hint">\(escape(text[.apiKeysHint]))</p>
            \(table)
            <h2 id="new-key-title">\(escape(text[.newKeyLabel]))</h2>
            <form method="post" action="\(base)" class="panel" aria-labelledby="new-key-title">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.field("name", label: text[.keyNameLabel], value: form.name, problems: problems))
            \(ConsolePages.field("expiresInDays", label: text[.expiresInDaysLabel], type: "number", value: form.days, problems: problems, extra: #"min="1" max="365" required"#))
            <button type="submit">\(escape(text[.createKeyButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: "\(text[.apiKeysTitle]): \(app.name)", notice: notice, body: body)
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
