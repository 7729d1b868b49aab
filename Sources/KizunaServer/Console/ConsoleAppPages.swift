import Foundation
import KizunaCore

/// The Apps section's pages.
enum ConsoleAppPages {
    typealias Problem = ConsolePages.Problem

    /// The registry, and the form to register an app (filled again with what was posted, when it was refused).
    static func list(
        _ frame: ConsolePages.Frame, apps: [AppRecord], form: ConsoleController.AppForm?, problems: [Problem], notice: String?
    ) -> String {
        let text = frame.text
        let table: String
        if apps.isEmpty {
            table = #"<p>\#(escape(text[.appsEmpty]))</p>"#
        } else {
            let rows = apps.map { app in
                let path = "/console/apps/\(ConsoleController.escapedSegment(app.id))"
                return """
                    <tr><td><a class="mono" href="\(path)">\(escape(app.id))</a></td><td>\(escape(app.name))</td><td>\(escape(app.platform.displayName))</td>\
                    <td class="mono">\(escape(app.bundleId))</td><td>\(time(app.updatedAt))</td>\
                    <td class="actions"><a href="\(path)/config">\(escape(text[.configTitle]))</a><a href="\(path)">\(escape(text[.edit]))</a><a href="\(path)/delete">\(escape(text[.delete]))</a></td></tr>
                    """
            }.joined(separator: "\n")
            table = """
                <table>
                <thead><tr><th scope="col">\(escape(text[.appID]))</th><th scope="col">\(escape(text[.appName]))</th>\
                <th scope="col">\(escape(text[.platform]))</th><th scope="col">\(escape(text[.bundleID]))</th>\
                <th scope="col">\(escape(text[.updatedAt]))</th><th scope="col">\(escape(text[.actions]))</th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                """
        }
        let body = """
            \(table)
            <h2 id="new-app">\(escape(text[.newAppTitle]))</h2>
            <form method="post" action="/console/apps" class="panel" aria-labelledby="new-app">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(fields(text, form: form, problems: problems, creating: true))
            <button type="submit">\(escape(text[.createButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: text[.appsTitle], notice: notice, body: body)
    }

    /// One app's form, its id fixed.
    static func edit(
        _ frame: ConsolePages.Frame, app: AppRecord, form: ConsoleController.AppForm, problems: [Problem] = [], notice: String? = nil
    ) -> String {
        let text = frame.text
        let path = "/console/apps/\(ConsoleController.escapedSegment(app.id))"
        let body = """
            \(tabs(text, app: app, current: .settings))
            <p>\(escape(text[.appID])): <code>\(escape(app.id))</code></p>
            <form method="post" action="\(path)" class="panel">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(fields(text, form: form, problems: problems, creating: false))
            <button type="submit">\(escape(text[.saveButton]))</button>
            </form>
            <p><a href="\(path)/delete">\(escape(text[.deleteAppTitle]))</a> · <a href="/console/apps">\(escape(text[.appsTitle]))</a></p>
            """
        return ConsolePages.page(frame, title: "\(text[.editAppTitle]): \(app.name)", notice: notice, body: body)
    }

    /// The confirmation before an app is deleted: its id must be typed.
    static func delete(_ frame: ConsolePages.Frame, app: AppRecord, typed: String = "", problems: [Problem] = []) -> String {
        let text = frame.text
        let path = "/console/apps/\(ConsoleController.escapedSegment(app.id))"
        let body = """
            <p class="problem">\(escape(text[.deleteAppWarning]))</p>
            <form method="post" action="\(path)/delete" class="panel narrow">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.field("confirm", label: "\(text[.deleteConfirmLabel]): \(app.id)", value: typed, problems: problems, extra: #"autocomplete="off" spellcheck="false" required"#))
            <div class="row"><button type="submit" class="danger">\(escape(text[.deleteButton]))</button><a href="\(path)">\(escape(text[.cancel]))</a></div>
            </form>
            """
        return ConsolePages.page(frame, title: "\(text[.deleteAppTitle]): \(app.name)", body: body)
    }

    private static func fields(_ text: ConsoleText, form: ConsoleController.AppForm?, problems: [Problem], creating: Bool) -> String {
        let platforms = Platform.allCases.map { (value: $0.rawValue, text: $0.displayName) }
        let noSpell = #"autocapitalize="none" spellcheck="false""#
        return [
            creating
                ? ConsolePages.field(
                    "id", label: text[.appID], value: form?.id ?? "", problems: problems, hint: text[.appIDHint], extra: "\(noSpell) required") : "",
            ConsolePages.field("name", label: text[.appName], value: form?.name ?? "", problems: problems, extra: "required"),
            ConsolePages.select("platform", label: text[.platform], options: platforms, selected: form?.platform ?? "ios", problems: problems),
            ConsolePages.field("bundleId", label: text[.bundleID], value: form?.bundleId ?? "", problems: problems, extra: "\(noSpell) required"),
            ConsolePages.field(
                "teamId", label: text[.teamID], value: form?.teamId ?? "", problems: problems, hint: text[.teamIDHint], extra: noSpell),
            ConsolePages.field(
                "storeURL", label: text[.storeURL], type: "url", value: form?.storeURL ?? "", problems: problems, hint: text[.storeURLHint],
                extra: noSpell),
        ].filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// A time as `2026-11-27 04:10 UTC`, in a `<time>` element with the exact instant.
    static func time(_ date: Date) -> String {
        #"<time datetime="\#(date.formatted(.iso8601))">\#(plainTime(date))</time>"#
    }

    /// A time as `2026-11-27 04:10 UTC`.
    static func plainTime(_ date: Date) -> String {
        let exact = date.formatted(.iso8601)  // 2026-11-27T04:10:00Z
        return "\(exact.prefix(10)) \(exact.dropFirst(11).prefix(5)) UTC"
    }

    /// An app's pages.
    enum Tab: CaseIterable {
        case settings, config, simulator, gate, gateSimulator, data, apiKeys, push, releases, domains

        func path(_ app: AppRecord) -> String {
            let base = "/console/apps/\(ConsoleController.escapedSegment(app.id))"
            switch self {
            case .settings: return base
            case .config: return "\(base)/config"
            case .simulator: return "\(base)/config/simulate"
            case .gate: return "\(base)/gate"
            case .gateSimulator: return "\(base)/gate/simulate"
            case .data: return "\(base)/data"
            case .apiKeys: return "\(base)/api-keys"
            case .push: return "\(base)/push"
            case .releases: return "\(base)/releases"
            case .domains: return "\(base)/associated-domains"
            }
        }

        func title(_ text: ConsoleText) -> String {
            switch self {
            case .settings: text[.settingsTab]
            case .config: text[.configTitle]
            case .simulator: text[.simulatorTitle]
            case .gate: text[.gateTitle]
            case .gateSimulator: text[.gateSimulatorTitle]
            case .data: text[.dataTitle]
            case .apiKeys: text[.apiKeysTitle]
            case .push: text[.pushTitle]
            case .releases: text[.releasesTitle]
            case .domains: text[.domainsTitle]
            }
        }
    }

    /// The links between an app's pages, `current` marked.
    static func tabs(_ text: ConsoleText, app: AppRecord, current: Tab) -> String {
        let links = Tab.allCases.map { tab in
            #"<a href="\#(tab.path(app))"\#(tab == current ? #" aria-current="page""# : "")>\#(escape(tab.title(text)))</a>"#
        }.joined()
        return #"<nav class="tabs" aria-label="\#(escape(app.name))">\#(links)</nav>"#
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}

extension Platform {
    /// The platform's name as Apple and Google write it.
    var displayName: String {
        switch self {
        case .ios: "iOS"
        case .macos: "macOS"
        case .tvos: "tvOS"
        case .watchos: "watchOS"
        case .visionos: "visionOS"
        case .android: "Android"
        }
    }
}
