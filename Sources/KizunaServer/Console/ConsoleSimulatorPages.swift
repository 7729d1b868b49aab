import Foundation
import KizunaCore

/// The remote config's device simulator: a device context in, the values that device gets out, each with the
/// condition that decided it, and which conditions hold.
enum ConsoleSimulatorPages {
    typealias Problem = ConsolePages.Problem

    /// The simulator's fields as given (a GET form: a simulation changes nothing and can be bookmarked).
    struct Device {
        var appVersion = ""
        var buildNumber = ""
        var platform = ""
        var osVersion = ""
        var locale = ""
        var country = ""
        var installId = ""
        var attributes = ""
        var at = ""
    }

    /// The simulator of `kind`'s document: the remote config's values, or the update gate's decision (from `gate:check`
    /// itself, at the server's time, so there is no `at`). `result` is the rendered outcome, when there is one.
    static func page(
        _ frame: ConsolePages.Frame, kind: DocumentKind = .config, app: AppRecord, device: Device, result: String?, problems: [Problem] = []
    ) -> String {
        let text = frame.text
        let tab: ConsoleAppPages.Tab = kind == .gate ? .gateSimulator : .simulator
        let noSpell = #"autocapitalize="none" spellcheck="false""#
        let platforms = [(value: "", text: text[.unspecified])] + Platform.allCases.map { (value: $0.rawValue, text: $0.displayName) }
        // The result first: it is what the operator came for, and the form is still filled in below it.
        var body = ConsoleAppPages.tabs(text, app: app, current: tab) + (result ?? "")
        let at =
            kind == .gate
            ? "" : ConsolePages.field("at", label: text[.atLabel], value: device.at, problems: problems, hint: text[.atHint], extra: noSpell)
        body += """
            <form method="get" action="\(tab.path(app))" class="panel">
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.field("appVersion", label: text[.appVersionLabel], value: device.appVersion, problems: problems, extra: "\(noSpell) required"))
            \(ConsolePages.field("buildNumber", label: text[.buildNumberLabel], value: device.buildNumber, problems: problems, extra: noSpell))
            \(ConsolePages.select("platform", label: text[.platform], options: platforms, selected: device.platform, problems: problems))
            \(ConsolePages.field("osVersion", label: text[.osVersionLabel], value: device.osVersion, problems: problems, extra: noSpell))
            \(ConsolePages.field("locale", label: text[.localeLabel], value: device.locale, problems: problems, extra: #"\#(noSpell) placeholder="ja-JP""#))
            \(ConsolePages.field("country", label: text[.countryLabel], value: device.country, problems: problems, extra: #"\#(noSpell) placeholder="JP""#))
            \(ConsolePages.field("installId", label: text[.installIdLabel], value: device.installId, problems: problems, hint: text[.installIdHint], extra: noSpell))
            \(ConsolePages.textArea("attributes", label: text[.attributesLabel], value: device.attributes, problems: problems, hint: text[.attributesHint], rows: 4))
            \(at)
            <button type="submit">\(escape(text[.simulateButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: "\(tab.title(text)): \(app.name)", body: body)
    }

    /// A gate decision, field by field as `gate:check` answered it.
    static func decision(_ text: ConsoleText, _ answer: JSONValue) -> String {
        guard case .object(let fields) = answer else { return "" }
        let rows = fields.sorted { $0.key < $1.key }.map { key, value in
            #"<tr><th scope="row" class="mono">\#(escape(key))</th><td>\#(ConsoleConfigPages.json(value))</td></tr>"#
        }.joined(separator: "\n")
        return """
            <h2 id="decision">\(escape(text[.decisionTitle]))</h2>
            <table aria-labelledby="decision">
            <tbody id="gate-decision">
            \(rows)
            </tbody>
            </table>
            """
    }

    /// The remote config's values with what decided each, and the conditions' outcomes.
    static func results(_ text: ConsoleText, _ result: ConfigSimulation) -> String {
        let values = result.values.sorted { $0.key < $1.key }.map { name, value in
            let decided = value.condition.map { #"<span class="mono">\#(escape($0))</span>"# } ?? escape(text[.defaultDecided])
            return
                #"<tr><th scope="row" class="mono">\#(escape(name))</th><td>\#(ConsoleConfigPages.json(value.value))</td><td>\#(decided)</td></tr>"#
        }.joined(separator: "\n")
        let conditions = result.conditions.enumerated().map { index, condition in
            let outcome = condition.holds ? "✓ \(text[.holds])" : "✗ \(text[.doesNotHold])"
            return
                #"<tr class="\#(condition.holds ? "holds" : "fails")"><td>\#(index + 1)</td><th scope="row" class="mono">\#(escape(condition.name))</th><td>\#(escape(outcome))</td></tr>"#
        }.joined(separator: "\n")
        return """
            <h2 id="result">\(escape(text[.simulatedValues])) (\(escape(text[.liveVersion])) \(result.version))</h2>
            <table aria-labelledby="result">
            <thead><tr><th scope="col">\(escape(text[.parameterName]))</th><th scope="col">\(escape(text[.valueColumn]))</th>\
            <th scope="col">\(escape(text[.decidedBy]))</th></tr></thead>
            <tbody id="simulated-values">
            \(values)
            </tbody>
            </table>
            <h2 id="outcomes">\(escape(text[.conditionsTitle]))</h2>
            <table aria-labelledby="outcomes">
            <thead><tr><th scope="col">#</th><th scope="col">\(escape(text[.conditionName]))</th><th scope="col">\(escape(text[.outcomeColumn]))</th></tr></thead>
            <tbody id="condition-outcomes">
            \(conditions)
            </tbody>
            </table>
            """
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
