import Foundation
import KizunaCore

/// The update gate's policy form page, in fieldsets: versions, maintenance, the OS, the prompts.
enum ConsoleGateFormPages {
    static func page(
        _ frame: ConsolePages.Frame, app: AppRecord, live: PublishedDocument, form: GatePolicyForm, problems: [ConsolePages.Problem] = [],
        conflict: ConsoleConfigPages.Conflict? = nil
    ) -> String {
        let text = frame.text
        let base = ConsoleConfigPages.path(.gate, app: app)
        let noSpell = Controls.noSpell
        let controls = Controls(form: form, text: text, problems: problems)
        func fieldset(_ legend: String, _ content: [String]) -> String {
            "<fieldset><legend>\(escape(legend))</legend>\n\(content.joined(separator: "\n"))\n</fieldset>"
        }
        let notices = GatePolicyForm.noticeKinds.map { kind in
            fieldset(
                "\(text[.noticesTitle]): \(kind)",
                [
                    ConsolePages.field(
                        "notice-\(kind)-url", label: text[.noticeURLLabel], type: "url", value: form["notice-\(kind)-url"], problems: problems,
                        extra: noSpell),
                    ConsolePages.textArea(
                        "notice-\(kind)-texts", label: text[.noticeTextsLabel], value: form["notice-\(kind)-texts"], problems: problems,
                        hint: text[.noticeLineHint], rows: 2),
                ])
        }.joined(separator: "\n")
        let active = form["maintenanceActive"] == "on" ? " checked" : ""
        var body = ConsoleAppPages.tabs(text, app: app, current: .gate)
        body += #"<p>\#(escape(ConsoleConfigPages.versionLine(text, live))) · <a href="\#(base)">\#(escape(text[.editAsJSON]))</a></p>"#
        if let conflict { body += ConsoleConfigPages.conflictSummary(text, conflict) }
        body += """
            <form method="post" action="\(base)/form" class="panel">
            \(ConsolePages.csrfField(frame.csrf))<input type="hidden" name="base" value="\(form.base)">
            \(ConsolePages.summary(text, problems))
            \(fieldset(text[.versionsTitle], [controls.field("minimumVersion"), controls.field("recommendedVersion"), controls.field("nagIntervalSeconds", type: "number"), controls.area("blockedVersions", hint: .blockedVersionsHint)]))
            \(fieldset(text[.maintenanceTitle], [
                #"<div class="field"><label><input type="checkbox" name="maintenanceActive" value="on"\#(active)> \#(escape(text[.maintenanceActiveLabel]))</label></div>"#,
                controls.field("maintenanceFrom", hint: .windowHint), controls.field("maintenanceUntil"), controls.field("maintenanceTimeZone"), controls.area("maintenanceTesters", hint: .testersHint),
            ]))
            \(fieldset(text[.osTitle], [controls.field("osVersion"), controls.field("osDeadline", hint: .osDeadlineHint), controls.field("osTimeZone")] + osRows(form, text, problems)))
            \(notices)
            \(controls.field("defaultLanguage"))
            \(ConsolePages.field("message", label: text[.publishMessageLabel], value: form.message, problems: problems))
            <button type="submit">\(escape(text[.publishButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: "\(text[.gateTitle]): \(app.name)", body: body)
    }

    /// The OS requirement's windows and the OS advisories: a fieldset per row, or the JSON where rows cannot show it.
    private static func osRows(_ form: GatePolicyForm, _ text: ConsoleText, _ problems: [ConsolePages.Problem]) -> [String] {
        let controls = Controls(form: form, text: text, problems: problems)
        let dayWords: [String: ConsoleWord] = [
            "mon": .mondayShort, "tue": .tuesdayShort, "wed": .wednesdayShort, "thu": .thursdayShort, "fri": .fridayShort, "sat": .saturdayShort,
            "sun": .sundayShort,
        ]
        var parts: [String] = []
        if form.fields["osWindows"] != nil {
            parts.append(controls.area("osWindows", hint: .osWindowsHint))
        } else {
            parts.append(#"<p class="hint">\#(escape(text[.osWindowRowsHint]))</p>"#)
            for j in form.rowIndices("osw") {
                let name = "osw\(j)-days"
                let mine = problems.filter { $0.field == name }
                let boxes = GatePolicyForm.weekdays.map { day in
                    let checked = form["osw\(j)-\(day)"] == "on" ? " checked" : ""
                    return #"<label><input type="checkbox" name="osw\#(j)-\#(day)" value="on"\#(checked)> \#(escape(text[dayWords[day]!]))</label>"#
                }.joined()
                let errors =
                    mine.isEmpty
                    ? "" : #"<ul class="errors" id="\#(name)-errors">"# + mine.map { "<li>\(escape($0.message))</li>" }.joined() + "</ul>"
                let described = mine.isEmpty ? "" : #" aria-describedby="\#(name)-errors""#
                parts.append(
                    """
                    <fieldset><legend>\(escape("\(text[.osWindowRow]) \(j + 1)"))</legend>
                    <fieldset id="\(name)" class="row days"\(described)><legend>\(escape(text[.daysLabel]))</legend>\(boxes)</fieldset>\(errors)
                    \(controls.field("osw\(j)-from", hint: .windowTimeHint))\(controls.field("osw\(j)-until"))\(controls.field("osw\(j)-timeZone"))
                    </fieldset>
                    """)
            }
        }
        if form.fields["osAdvisories"] != nil {
            parts.append(controls.area("osAdvisories", hint: .osAdvisoriesHint))
        } else {
            parts.append(#"<p class="hint">\#(escape(text[.osAdvisoryRowsHint]))</p>"#)
            for j in form.rowIndices("osa") {
                let action = form["osa\(j)-action"].isEmpty ? "recommend" : form["osa\(j)-action"]
                let select = ConsolePages.select(
                    "osa\(j)-action", label: GatePolicyForm.cellLabel("osa\(j)-action", text),
                    options: [("recommend", text[.recommendAction]), ("require", text[.requireAction])], selected: action, problems: problems)
                parts.append(
                    """
                    <fieldset><legend>\(escape("\(text[.osAdvisoryRow]) \(j + 1)"))</legend>
                    \(controls.field("osa\(j)-versions", hint: .comparisonHint))\(controls.field("osa\(j)-platforms", hint: .listHint))\(select)
                    \(controls.field("osa\(j)-url", type: "url"))\(controls.area("osa\(j)-texts", hint: .noticeLineHint))
                    </fieldset>
                    """)
            }
        }
        return parts
    }

    /// The form's inputs and text areas, each labelled (inside a row's fieldset, by its cell alone), with its hint and
    /// its problems beside it.
    private struct Controls {
        static let noSpell = #"autocapitalize="none" spellcheck="false""#
        let form: GatePolicyForm
        let text: ConsoleText
        let problems: [ConsolePages.Problem]

        func field(_ name: String, type: String = "text", hint: ConsoleWord? = nil) -> String {
            ConsolePages.field(
                name, label: GatePolicyForm.cellLabel(name, text), type: type, value: form[name], problems: problems, hint: hint.map { text[$0] },
                extra: Self.noSpell)
        }

        func area(_ name: String, hint: ConsoleWord? = nil) -> String {
            ConsolePages.textArea(
                name, label: GatePolicyForm.cellLabel(name, text), value: form[name], problems: problems, hint: hint.map { text[$0] }, rows: 3,
                extra: Self.noSpell)
        }
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
