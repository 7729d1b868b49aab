import Foundation
import KizunaCore

extension ConsolePushPages {
    /// The credentials' status, the composer, and the latest jobs.
    static func composer(
        _ frame: ConsolePages.Frame, app: AppRecord, credentials: PushCredentialsInfo?, jobs: [PushJobStatus], form: Form, problems: [Problem]
    ) -> String {
        let text = frame.text
        let base = ConsoleAppPages.Tab.push.path(app)
        let status: String
        if let credentials {
            let facts = [
                (text[.keyIdLabel], credentials.keyId), (text[.teamID], credentials.teamId), (text[.topicLabel], credentials.topic),
                (text[.environmentLabel], credentials.environment?.rawValue ?? text[.eachDevicesOwn]),
                (text[.keyFingerprintLabel], credentials.keyFingerprint),
            ].map { #"<tr><th scope="row">\#(escape($0.0))</th><td class="mono">\#(escape($0.1))</td></tr>"# }.joined()
            status =
                #"<table class="facts">\#(facts)<tr><th scope="row">\#(escape(text[.updatedAt]))</th><td>\#(time(credentials.updatedAt))</td></tr></table>"#
        } else {
            status = #"<p class="problem">\#(escape(text[.noCredentials]))</p>"#
        }
        let kinds = ["install", "user", "condition", "all"].map { kind in
            let word: ConsoleWord =
                kind == "install" ? .targetInstall : kind == "user" ? .targetUser : kind == "condition" ? .targetCondition : .targetAll
            return (value: kind, text: text[word])
        }
        let noSpell = #"autocapitalize="none" spellcheck="false""#
        let rows = jobs.map { job in
            """
            <tr><td class="mono"><a href="\(base)/jobs/\(ConsoleController.escapedSegment(job.id))">\(escape(job.id))</a></td>\
            <td>\(escape(job.message.title?.defaultText ?? job.message.body?.defaultText ?? ""))</td><td>\(escape(job.state.rawValue))</td>\
            <td>\(time(job.sendAt))</td><td>\(job.totals.sent) / \(job.totals.devices)</td><td>\(job.totals.failed)</td><td>\(job.totals.skipped)</td></tr>
            """
        }.joined(separator: "\n")
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .push))
            <h2>\(escape(text[.credentialsTitle]))</h2>
            \(status)
            <h2 id="compose">\(escape(text[.composeTitle]))</h2>
            <form method="post" action="\(base)" class="panel" aria-labelledby="compose">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.field("title", label: text[.pushTitleLabel], value: form.title ?? "", problems: problems))
            \(ConsolePages.textArea("body", label: text[.pushBodyLabel], value: form.body ?? "", problems: problems, rows: 3))
            \(ConsolePages.textArea("translations", label: text[.translationsLabel], value: form.translations ?? "", problems: problems, hint: text[.translationsHint], rows: 3))
            <div class="row">
            \(ConsolePages.field("badge", label: text[.badgeLabel], type: "number", value: form.badge ?? "", problems: problems, extra: #"min="0""#))
            \(ConsolePages.field("sound", label: text[.soundLabel], value: form.sound ?? "", problems: problems, extra: noSpell))
            </div>
            \(ConsolePages.select("targetKind", label: text[.targetKindLabel], options: kinds, selected: form.targetKind ?? "install", problems: problems))
            \(ConsolePages.textArea("target", label: text[.targetLabel], value: form.target ?? "", problems: problems, hint: text[.targetHint], rows: 2, extra: noSpell))
            \(ConsolePages.field("sendAt", label: text[.sendAtLabel], type: "datetime-local", value: form.sendAt ?? "", problems: problems, hint: text[.sendAtHint]))
            <div class="field"><label><input type="checkbox" name="localTime" value="on"\(form.localTime == "on" ? " checked" : "")> \
            \(escape(text[.localTimeLabel]))</label></div>
            \(ConsolePages.field("fallbackTimeZone", label: text[.fallbackTimeZoneLabel], value: form.fallbackTimeZone ?? "", problems: problems, hint: text[.fallbackTimeZoneHint], extra: noSpell))
            <button type="submit">\(escape(text[.sendButton]))</button>
            </form>
            <h2>\(escape(text[.pushJobsTitle]))</h2>
            \(jobs.isEmpty ? "<p>\(escape(text[.noPushJobs]))</p>" : """
                <table><thead><tr><th scope="col">ID</th><th scope="col">\(escape(text[.pushTitleLabel]))</th><th scope="col">\(escape(text[.statusColumn]))</th>\
                <th scope="col">\(escape(text[.sendAtLabel]))</th><th scope="col">\(escape(text[.sentColumn]))</th>\
                <th scope="col">\(escape(text[.failedColumn]))</th><th scope="col">\(escape(text[.skippedColumn]))</th></tr></thead>
                <tbody>
                \(rows)
                </tbody></table>
                """)
            """
        return ConsolePages.page(frame, title: "\(text[.pushTitle]): \(app.name)", body: body)
    }

    /// A job's report: what was sent to whom, the totals, failures and skips by reason, each device's outcome.
    static func report(_ frame: ConsolePages.Frame, app: AppRecord, job: PushJobStatus, deliveries: PushDeliveryList, notice: String?) -> String {
        let text = frame.text
        let base = ConsoleAppPages.Tab.push.path(app)
        func texts(_ value: PushText?) -> String {
            guard let value else { return "—" }
            return
                ([escape(value.defaultText)]
                + value.localized.sorted { $0.key < $1.key }.map { "<span lang=\"\(escape($0.key))\">\(escape($0.key)): \(escape($0.value))</span>" })
                .joined(separator: "<br>")
        }
        let facts: [(ConsoleWord, String)] = [
            (.statusColumn, escape(job.state.rawValue)), (.targetLabel, escape(describe(job.target, text))),
            (.pushTitleLabel, texts(job.message.title)), (.pushBodyLabel, texts(job.message.body)),
            (.sendAtLabel, time(job.sendAt) + (job.localTime.map { " (\(escape(text[.localTimeLabel])): \(escape($0)))" } ?? "")),
            (.createdColumn, time(job.createdAt)), (.finishedColumn, job.finishedAt.map(time) ?? "—"),
        ]
        let totals = [
            (text[.devicesTitle], job.totals.devices), (text[.pendingColumn], job.totals.pending), (text[.sentColumn], job.totals.sent),
            (text[.failedColumn], job.totals.failed), (text[.skippedColumn], job.totals.skipped),
        ].map { #"<tr><th scope="row">\#(escape($0.0))</th><td>\#($0.1)</td></tr>"# }.joined()
        let reasons = job.reasons.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
            #"<tr><td class="mono">\#(escape($0.key))</td><td>\#($0.value)</td></tr>"#
        }
        let devices = deliveries.deliveries.map { delivery in
            """
            <tr><td class="mono">\(escape(delivery.installId))</td><td>\(escape(delivery.state.rawValue))</td><td class="mono">\(escape(delivery.reason ?? ""))</td>\
            <td>\(delivery.attempts)</td><td class="mono">\(escape(delivery.apnsId ?? ""))</td></tr>
            """
        }.joined(separator: "\n")
        let cancel =
            job.state == .scheduled || job.state == .sending
            ? """
            <form method="post" action="\(base)/jobs/\(ConsoleController.escapedSegment(job.id))/cancel">\(ConsolePages.csrfField(frame.csrf))\
            <button type="submit" class="danger">\(escape(text[.cancelJobButton]))</button></form>
            """ : ""
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .push))
            <p><a href="\(base)">\(escape(text[.pushTitle]))</a></p>
            <table class="facts">\(facts.map { #"<tr><th scope="row">\#(escape(text[$0.0]))</th><td>\#($0.1)</td></tr>"# }.joined())</table>
            \(cancel)
            <h2>\(escape(text[.totalsTitle]))</h2>
            <table class="facts" id="totals">\(totals)</table>
            <h2>\(escape(text[.reasonsTitle]))</h2>
            \(reasons.isEmpty ? "<p>\(escape(text[.noReasons]))</p>" : #"<table id="reasons"><thead><tr><th scope="col">\#(escape(text[.reasonColumn]))</th><th scope="col">\#(escape(text[.countColumn]))</th></tr></thead><tbody>\#(reasons.joined())</tbody></table>"#)
            <h2>\(escape(text[.deliveriesTitle]))</h2>
            <table><thead><tr><th scope="col">\(escape(text[.installIdLabel]))</th><th scope="col">\(escape(text[.statusColumn]))</th>\
            <th scope="col">\(escape(text[.reasonColumn]))</th><th scope="col">\(escape(text[.attemptsColumn]))</th><th scope="col">apns-id</th></tr></thead>
            <tbody>
            \(devices)
            </tbody></table>
            """
        return ConsolePages.page(frame, title: "\(text[.pushReportTitle]): \(job.id)", notice: notice, body: body)
    }
}
