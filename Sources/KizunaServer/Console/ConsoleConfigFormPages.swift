import Foundation
import KizunaCore

/// The remote config template's form page: a row of inputs per parameter and per condition, each labelled, its
/// problems beside it.
enum ConsoleConfigFormPages {
    typealias Problem = ConsolePages.Problem

    static func page(
        _ frame: ConsolePages.Frame, app: AppRecord, live: PublishedDocument, form: ConfigTemplateForm, problems: [Problem] = [],
        conflict: ConsoleConfigPages.Conflict? = nil
    ) -> String {
        let text = frame.text
        let base = ConsoleConfigPages.path(.config, app: app)
        let types = RemoteConfigTemplate.ValueType.allCases.map(\.rawValue)
        let parameterRows = form.parameters.enumerated().map { i, row in
            let label = row.name.isEmpty ? text[.newRow] : row.name
            return """
                <tr>\
                <td>\(input("p\(i)-name", row.name, label: "\(label): \(text[.parameterName])", problems))</td>\
                <td>\(choice("p\(i)-type", types, selected: row.type, label: "\(label): \(text[.parameterType])"))</td>\
                <td>\(input("p\(i)-default", row.defaultValue, label: "\(label): \(text[.defaultValue])", problems))</td>\
                <td>\(area("p\(i)-conditional", row.conditional, label: "\(label): \(text[.conditionalValues])", problems))</td>\
                <td>\(input("p\(i)-group", row.group, label: "\(label): \(text[.group])", problems))</td>\
                <td>\(input("p\(i)-description", row.description, label: "\(label): \(text[.description])", problems))</td>\
                <td>\(remove("p\(i)-delete", row.delete, label: "\(label): \(text[.removeButton])"))</td></tr>
                """
        }.joined(separator: "\n")
        let conditionRows = form.conditions.enumerated().map { i, row in
            let label = row.name.isEmpty ? text[.newRow] : row.name
            return """
                <tr>\
                <td>\(input("c\(i)-name", row.name, label: "\(label): \(text[.conditionName])", problems))</td>\
                <td>\(whenCell(i, row, label: label, text, problems))</td>\
                <td>\(input("c\(i)-description", row.description, label: "\(label): \(text[.description])", problems))</td>\
                <td>\(remove("c\(i)-delete", row.delete, label: "\(label): \(text[.removeButton])"))</td></tr>
                """
        }.joined(separator: "\n")
        var body = ConsoleAppPages.tabs(text, app: app, current: .config)
        body += #"<p>\#(escape(ConsoleConfigPages.versionLine(text, live))) · <a href="\#(base)">\#(escape(text[.editAsJSON]))</a></p>"#
        if let conflict { body += ConsoleConfigPages.conflictSummary(text, conflict) }
        body += """
            <form method="post" action="\(base)/form" class="panel">
            \(ConsolePages.csrfField(frame.csrf))<input type="hidden" name="base" value="\(form.base)">
            \(ConsolePages.summary(text, problems))
            <h2 id="parameters">\(escape(text[.parametersTitle]))</h2>
            <p class="hint">\(escape(text[.conditionalLineHint])) \(escape(text[.formRowsHint]))</p>
            <table class="form" aria-labelledby="parameters"><thead><tr><th scope="col">\(escape(text[.parameterName]))</th>\
            <th scope="col">\(escape(text[.parameterType]))</th><th scope="col">\(escape(text[.defaultValue]))</th>\
            <th scope="col">\(escape(text[.conditionalValues]))</th><th scope="col">\(escape(text[.group]))</th>\
            <th scope="col">\(escape(text[.description]))</th><th scope="col">\(escape(text[.removeButton]))</th></tr></thead>
            <tbody>
            \(parameterRows)
            </tbody></table>
            <h2 id="conditions">\(escape(text[.conditionsTitle]))</h2>
            <p class="hint">\(escape(text[.conditionsHint])) \(escape(text[.rulesHint]))</p>
            <table class="form" aria-labelledby="conditions"><thead><tr><th scope="col">\(escape(text[.conditionName]))</th>\
            <th scope="col">\(escape(text[.conditionWhen]))</th><th scope="col">\(escape(text[.description]))</th>\
            <th scope="col">\(escape(text[.removeButton]))</th></tr></thead>
            <tbody>
            \(conditionRows)
            </tbody></table>
            \(ConsolePages.field("message", label: text[.publishMessageLabel], value: form.message, problems: problems))
            <button type="submit">\(escape(text[.publishButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: "\(text[.configTitle]): \(app.name)", body: body)
    }

    /// A condition's rules, a kind and a value a row (spare rows below), or its JSON when rules cannot show it.
    private static func whenCell(
        _ i: Int, _ row: ConfigTemplateForm.ConditionRow, label: String, _ text: ConsoleText, _ problems: [Problem]
    ) -> String {
        guard let rules = row.rules else { return area("c\(i)-when", row.when, label: "\(label): \(text[.conditionWhen])", problems) }
        return rules.enumerated().map { j, rule in
            let kinds =
                [#"<option value="">—</option>"#] + ConditionRule.kinds.map { #"<option\#($0 == rule.kind ? " selected" : "")>\#($0)</option>"# }
            let kind =
                #"<select id="c\#(i)-r\#(j)-kind" name="c\#(i)-r\#(j)-kind" aria-label="\#(escape("\(label): \(text[.ruleKindLabel]) \(j + 1)"))">"#
            return #"<div class="rule">\#(kind)\#(kinds.joined())</select>"#
                + input("c\(i)-r\(j)-value", rule.value, label: "\(label): \(text[.ruleValueLabel]) \(j + 1)", problems) + "</div>"
        }.joined()
    }

    /// An input labelled for screen readers (the column's header shows sighted readers), its problems beside it.
    private static func input(_ name: String, _ value: String, label: String, _ problems: [Problem]) -> String {
        let (attributes, notes) = annotations(name, problems)
        return
            #"<input id="\#(name)" name="\#(name)" value="\#(escape(value))" aria-label="\#(escape(label))"\#(attributes) spellcheck="false">\#(notes)"#
    }

    private static func area(_ name: String, _ value: String, label: String, _ problems: [Problem]) -> String {
        let (attributes, notes) = annotations(name, problems)
        return
            #"<textarea id="\#(name)" name="\#(name)" rows="2" aria-label="\#(escape(label))"\#(attributes) spellcheck="false">\#(escape(value))</textarea>\#(notes)"#
    }

    private static func choice(_ name: String, _ options: [String], selected: String, label: String) -> String {
        let items = options.map { #"<option\#($0 == selected ? " selected" : "")>\#(escape($0))</option>"# }.joined()
        return #"<select id="\#(name)" name="\#(name)" aria-label="\#(escape(label))">\#(items)</select>"#
    }

    private static func remove(_ name: String, _ checked: Bool, label: String) -> String {
        #"<input type="checkbox" id="\#(name)" name="\#(name)" value="on" aria-label="\#(escape(label))"\#(checked ? " checked" : "")>"#
    }

    private static func annotations(_ name: String, _ problems: [Problem]) -> (String, String) {
        let mine = problems.filter { $0.field == name }
        guard !mine.isEmpty else { return ("", "") }
        let list = #"<ul class="errors" id="\#(name)-errors">"# + mine.map { "<li>\(escape($0.message))</li>" }.joined() + "</ul>"
        return (#" aria-invalid="true" aria-describedby="\#(name)-errors""#, list)
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
