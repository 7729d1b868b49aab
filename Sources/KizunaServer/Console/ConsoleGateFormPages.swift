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
        let noSpell = #"autocapitalize="none" spellcheck="false""#
        func field(_ name: String, type: String = "text", hint: ConsoleWord? = nil) -> String {
            ConsolePages.field(
                name, label: GatePolicyForm.label(name, text), type: type, value: form[name], problems: problems, hint: hint.map { text[$0] },
                extra: noSpell)
        }
        func area(_ name: String, hint: ConsoleWord? = nil) -> String {
            ConsolePages.textArea(
                name, label: GatePolicyForm.label(name, text), value: form[name], problems: problems, hint: hint.map { text[$0] }, rows: 3,
                extra: noSpell)
        }
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
            \(fieldset(text[.versionsTitle], [field("minimumVersion"), field("recommendedVersion"), field("nagIntervalSeconds", type: "number"), area("blockedVersions", hint: .blockedVersionsHint)]))
            \(fieldset(text[.maintenanceTitle], [
                #"<div class="field"><label><input type="checkbox" name="maintenanceActive" value="on"\#(active)> \#(escape(text[.maintenanceActiveLabel]))</label></div>"#,
                field("maintenanceFrom", hint: .windowHint), field("maintenanceUntil"), field("maintenanceTimeZone"), area("maintenanceTesters", hint: .testersHint),
            ]))
            \(fieldset(text[.osTitle], [field("osVersion"), field("osDeadline", hint: .osDeadlineHint), field("osTimeZone"), area("osWindows", hint: .osWindowsHint), area("osAdvisories", hint: .osAdvisoriesHint)]))
            \(notices)
            \(field("defaultLanguage"))
            \(ConsolePages.field("message", label: text[.publishMessageLabel], value: form.message, problems: problems))
            <button type="submit">\(escape(text[.publishButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: "\(text[.gateTitle]): \(app.name)", body: body)
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
