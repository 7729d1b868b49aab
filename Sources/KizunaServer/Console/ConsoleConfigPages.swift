import Foundation
import KizunaCore

/// The pages of a published document — the remote config's template or the update gate's policy: the live version
/// (a template as tables, a policy as it is), an editor to publish a new version, the history with rollback, and a
/// diff of any two versions.
enum ConsoleConfigPages {
    typealias Problem = ConsolePages.Problem

    /// What the editor shows: the draft (the live template, or what was posted) and the version it was based on.
    struct Draft {
        var text: String
        var message: String
        /// The version the draft changes: what the publish's `If-Match` names.
        var base: Int64
    }

    /// A conflict to explain: someone published `current` while the draft was based on an older version.
    struct Conflict {
        let current: DocumentVersionInfo
        let changes: [JSONChange]
    }

    /// The section's title, tab and editor words for `kind` (a config template or a gate policy).
    static func title(_ kind: DocumentKind, _ text: ConsoleText) -> String {
        kind == .gate ? text[.gateTitle] : text[.configTitle]
    }

    static func tab(_ kind: DocumentKind) -> ConsoleAppPages.Tab {
        kind == .gate ? .gate : .config
    }

    static func path(_ kind: DocumentKind, app: AppRecord) -> String {
        "/console/apps/\(ConsoleController.escapedSegment(app.id))/\(kind.rawValue)"
    }

    static func page(
        _ frame: ConsolePages.Frame, kind: DocumentKind = .config, app: AppRecord, live: PublishedDocument, history: [DocumentVersionInfo],
        draft: Draft, problems: [Problem] = [], conflict: Conflict? = nil, notice: String? = nil
    ) -> String {
        let text = frame.text
        let base = path(kind, app: app)
        var body = ConsoleAppPages.tabs(text, app: app, current: tab(kind))
        let formLink = #" · <a href="\#(base)/form">\#(escape(text[.editAsForm]))</a>"#
        body += #"<p>\#(escape(versionLine(text, live)))\#(formLink)</p>"#
        if kind == .gate {
            body += #"<h2 id="policy">\#(escape(text[.livePolicyTitle]))</h2>"#
            body += #"<pre class="panel mono" aria-labelledby="policy" tabindex="0">\#(escape(Self.text(of: live.document, pretty: true)))</pre>"#
        } else {
            body += #"<h2 id="parameters">\#(escape(text[.parametersTitle]))</h2>"# + parameterTable(text, live.document)
            body += #"<h2 id="conditions">\#(escape(text[.conditionsTitle]))</h2>"# + conditionTable(text, live.document)
        }
        let (label, hint) = kind == .gate ? (text[.policyLabel], text[.policyHint]) : (text[.templateLabel], text[.templateHint])
        if let conflict { body += conflictSummary(text, conflict) }
        body += """
            <h2 id="edit">\(escape(text[.editTemplateTitle]))</h2>
            <form method="post" action="\(base)" class="panel" aria-labelledby="edit">
            \(ConsolePages.csrfField(frame.csrf))
            <input type="hidden" name="base" value="\(draft.base)">
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.textArea("document", label: label, value: draft.text, problems: problems, hint: hint, rows: 24, extra: #"spellcheck="false" class="mono""#))
            \(ConsolePages.field("message", label: text[.publishMessageLabel], value: draft.message, problems: problems, extra: #"maxlength="500""#))
            <button type="submit">\(escape(text[.publishButton]))</button>
            </form>
            """
        body += #"<h2 id="history">\#(escape(text[.historyTitle]))</h2>"# + historyTable(frame, base: base, live: live, history: history)
        return ConsolePages.page(frame, title: "\(title(kind, text)): \(app.name)", notice: notice, body: body)
    }

    /// The changes from one version to another, side by side.
    static func diff(_ frame: ConsolePages.Frame, kind: DocumentKind = .config, app: AppRecord, diff: DocumentDiff) -> String {
        let text = frame.text
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: tab(kind)))
            <p>\(escape(text[.diffFrom])) \(diff.from) → \(escape(text[.diffTo])) \(diff.to)</p>
            \(diffTable(text, diff.changes))
            <p><a href="\(path(kind, app: app))">\(escape(title(kind, text)))</a></p>
            """
        return ConsolePages.page(frame, title: "\(text[.diffTitle]): \(app.name)", body: body)
    }

    // MARK: Parts

    static func versionLine(_ text: ConsoleText, _ live: PublishedDocument) -> String {
        guard live.version > 0 else { return text[.neverPublished] }
        return "\(text[.liveVersion]) \(live.version) · \(live.author) · \(ConsoleAppPages.plainTime(live.publishedAt))"
            + (live.message.map { " · \($0)" } ?? "")
    }

    private static func parameterTable(_ text: ConsoleText, _ document: JSONValue) -> String {
        guard case .object(let parameters)? = document["parameters"], !parameters.isEmpty else {
            return #"<p>\#(escape(text[.noParameters]))</p>"#
        }
        func group(_ value: JSONValue) -> String { value["group"]?.stringValue ?? "" }
        let rows = parameters.sorted { (group($0.value), $0.key) < (group($1.value), $1.key) }.map { name, parameter in
            let conditional: String
            if case .object(let values)? = parameter["conditionalValues"], !values.isEmpty {
                conditional =
                    "<ul>"
                    + values.sorted { $0.key < $1.key }.map { #"<li><span class="mono">\#(escape($0.key))</span> → \#(json($0.value))</li>"# }
                    .joined() + "</ul>"
            } else {
                conditional = ""
            }
            return """
                <tr id="parameter-\(escape(name))"><th scope="row" class="mono">\(escape(name))</th><td>\(escape(parameter["type"]?.stringValue ?? ""))</td>\
                <td>\(parameter["default"].map(json) ?? "")</td><td>\(conditional)</td><td>\(escape(group(parameter)))</td>\
                <td>\(escape(parameter["description"]?.stringValue ?? ""))</td></tr>
                """
        }.joined(separator: "\n")
        return """
            <table>
            <thead><tr><th scope="col">\(escape(text[.parameterName]))</th><th scope="col">\(escape(text[.parameterType]))</th>\
            <th scope="col">\(escape(text[.defaultValue]))</th><th scope="col">\(escape(text[.conditionalValues]))</th>\
            <th scope="col">\(escape(text[.group]))</th><th scope="col">\(escape(text[.description]))</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            """
    }

    private static func conditionTable(_ text: ConsoleText, _ document: JSONValue) -> String {
        guard case .array(let conditions)? = document["conditions"], !conditions.isEmpty else {
            return #"<p>\#(escape(text[.noConditions]))</p>"#
        }
        let rows = conditions.enumerated().map { index, condition in
            """
            <tr><td>\(index + 1)</td><th scope="row" class="mono">\(escape(condition["name"]?.stringValue ?? ""))</th>\
            <td>\(condition["when"].map(json) ?? "")</td><td>\(escape(condition["description"]?.stringValue ?? ""))</td></tr>
            """
        }.joined(separator: "\n")
        return """
            <p class="hint">\(escape(text[.conditionsHint]))</p>
            <table>
            <thead><tr><th scope="col">#</th><th scope="col">\(escape(text[.conditionName]))</th><th scope="col">\(escape(text[.conditionWhen]))</th>\
            <th scope="col">\(escape(text[.description]))</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            """
    }

    private static func historyTable(_ frame: ConsolePages.Frame, base: String, live: PublishedDocument, history: [DocumentVersionInfo]) -> String {
        let text = frame.text
        guard !history.isEmpty else { return #"<p>\#(escape(text[.neverPublished]))</p>"# }
        let options = history.map { #"<option value="\#($0.version)">\#($0.version)</option>"# }.joined()
        let compare = """
            <form method="get" action="\(base)/diff" class="row">
            <label for="from">\(escape(text[.diffFrom]))</label><select id="from" name="from">\(options)</select>
            <label for="to">\(escape(text[.diffTo]))</label><select id="to" name="to">\(options)</select>
            <button type="submit" class="secondary">\(escape(text[.compareButton]))</button>
            </form>
            """
        let rows = history.map { version in
            let rollback =
                version.version == live.version
                ? escape(text[.liveMarker])
                : """
                <form method="post" action="\(base)/rollback">\(ConsolePages.csrfField(frame.csrf))\
                <input type="hidden" name="version" value="\(version.version)"><input type="hidden" name="base" value="\(live.version)">\
                <button type="submit" class="secondary">\(escape(text[.rollbackButton])) \(version.version)</button></form>
                """
            let note = version.rollbackOf.map { " (\(text[.rollbackOf]) \($0))" } ?? ""
            return """
                <tr><td>\(version.version)</td><td>\(escape(version.author))</td><td>\(escape((version.message ?? "") + note))</td>\
                <td>\(ConsoleAppPages.plainTime(version.publishedAt))</td><td class="actions">\(rollback)</td></tr>
                """
        }.joined(separator: "\n")
        return """
            \(compare)
            <table>
            <thead><tr><th scope="col">\(escape(text[.versionColumn]))</th><th scope="col">\(escape(text[.authorColumn]))</th>\
            <th scope="col">\(escape(text[.messageColumn]))</th><th scope="col">\(escape(text[.updatedAt]))</th>\
            <th scope="col">\(escape(text[.actions]))</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            """
    }

    /// A publish refused because `conflict.current` was published meanwhile: who published it, and its changes.
    static func conflictSummary(_ text: ConsoleText, _ conflict: Conflict) -> String {
        let by = "\(conflict.current.version) · \(conflict.current.author)\(conflict.current.message.map { " · \($0)" } ?? "")"
        return #"<div class="summary" role="alert"><p>\#(escape(text[.publishConflict])) \#(escape(by))</p>"#
            + #"<p>\#(escape(text[.publishConflictHelp]))</p>\#(diffTable(text, conflict.changes))</div>"#
    }

    static func diffTable(_ text: ConsoleText, _ changes: [JSONChange]) -> String {
        guard !changes.isEmpty else { return #"<p>\#(escape(text[.noChanges]))</p>"# }
        let rows = changes.map { change in
            """
            <tr class="\(change.kind.rawValue)"><th scope="row" class="mono">\(escape(change.path))</th><td>\(escape(text.changeKind(change.kind)))</td>\
            <td>\(change.before.map(json) ?? "")</td><td>\(change.after.map(json) ?? "")</td></tr>
            """
        }.joined(separator: "\n")
        return """
            <table class="diff">
            <thead><tr><th scope="col">\(escape(text[.pathColumn]))</th><th scope="col">\(escape(text[.changeColumn]))</th>\
            <th scope="col">\(escape(text[.beforeColumn]))</th><th scope="col">\(escape(text[.afterColumn]))</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            """
    }

    /// A value as compact JSON in a `<code>`.
    static func json(_ value: JSONValue) -> String {
        "<code>\(escape(ConsoleConfigPages.text(of: value, pretty: false)))</code>"
    }

    /// `value` as JSON text with sorted keys, indented when `pretty`.
    static func text(of value: JSONValue, pretty: Bool) -> String {
        String(decoding: pretty ? value.prettyJSONBytes : value.jsonBytes, as: UTF8.self)
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
