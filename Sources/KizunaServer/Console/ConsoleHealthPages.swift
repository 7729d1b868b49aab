import Foundation
import KizunaCore

/// The Health page, for a person: whether this instance is ready, and what `/metrics` says in words and numbers.
enum ConsoleHealthPages {
    /// The page while the store is not ready: what the server is doing, reloaded every few seconds (no script).
    static func starting(_ text: ConsoleText, state: Readiness.State) -> String {
        let body: String
        switch state {
        case .migrating(let progress):
            let percent = progress.total > 0 ? progress.done * 100 / progress.total : 0
            body = """
                <p>\(escape(text[.migratingNow]))</p>
                <table class="facts">
                <tr><th scope="row">\(escape(text[.migrationStep]))</th><td><code>\(escape(progress.step))</code> \
                (\(progress.stepIndex) / \(progress.stepCount))</td></tr>
                <tr><th scope="row">\(escape(text[.migrationProgress]))</th><td><progress max="\(max(progress.total, 1))" \
                value="\(progress.done)" aria-label="\(escape(text[.migrationProgress]))">\(percent)%</progress> \(progress.done) / \(progress.total)</td></tr>
                </table>
                """
        case .failed(let error):
            body = #"<p role="alert" class="problem">\#(escape(text[.startFailed])) \#(escape(error.message))</p>"#
        case .starting, .ready:
            body = "<p>\(escape(text[.startingNow]))</p>"
        }
        return ConsolePages.publicPage(text, title: text[.healthTitle], path: "/console/health", refresh: 5, body: body)
    }

    /// The page once ready: readiness, requests, latency, the store's pool, background work, the busiest routes.
    static func health(_ frame: ConsolePages.Frame, ready: String, summary: MetricsSummary) -> String {
        let text = frame.text
        let readiness =
            ready == "ready" ? escape(text[.instanceReady]) : #"<strong class="bad">\#(escape(text[.instanceNotReady])) (\#(escape(ready)))</strong>"#
        let classes = ["2xx", "3xx", "4xx", "5xx"].map { "\($0): \(count(summary.requestsByClass[$0] ?? 0))" }.joined(separator: " · ")
        let facts: [(ConsoleWord, String)] = [
            (.instanceTitle, readiness),
            (.migrationTitle, escape(text[.migrationsApplied])),
            (.requestsTitle, "\(count(summary.requests)) <span class=\"hint\">(\(classes))</span>"),
            (.serverErrorsTitle, count(summary.requestsByClass["5xx"] ?? 0)),
            (.latencyTitle, latency(text, summary.latency)),
            (.activeRequestsTitle, count(summary.activeRequests)),
            (.poolInUseTitle, count(summary.connectionsInUse)),
            (.poolWaitTitle, latency(text, summary.connectionWait)),
            (.dataJobsTitle, count(summary.dataJobsUnfinished)),
            (.pushSentTitle, count(summary.pushSent)),
        ]
        let rows = facts.map { #"<tr><th scope="row">\#(escape(text[$0.0]))</th><td>\#($0.1)</td></tr>"# }.joined(separator: "\n")
        let routes = summary.routes.prefix(15).map { route in
            """
            <tr><td class="mono">\(escape(route.method)) \(escape(route.route))</td><td>\(count(route.requests))</td>\
            <td>\(count(route.serverErrors))</td><td>\(duration(route.latency.mean))</td><td>\(bound(route.latency.bound(at: 0.95)))</td></tr>
            """
        }.joined(separator: "\n")
        let body = """
            <p class="hint">\(escape(text[.healthHint]))</p>
            <table class="facts">
            \(rows)
            </table>
            <h2>\(escape(text[.busiestRoutesTitle]))</h2>
            <table>
            <thead><tr><th scope="col">\(escape(text[.routeColumn]))</th><th scope="col">\(escape(text[.requestsTitle]))</th>\
            <th scope="col">5xx</th><th scope="col">\(escape(text[.meanColumn]))</th><th scope="col">p95</th></tr></thead>
            <tbody>
            \(routes)
            </tbody>
            </table>
            """
        return ConsolePages.page(frame, title: text[.healthTitle], body: body)
    }

    /// `mean 1.2 ms · p50 ≤ 5 ms · p95 ≤ 25 ms · p99 ≤ 100 ms`.
    private static func latency(_ text: ConsoleText, _ histogram: MetricsSummary.Histogram) -> String {
        guard histogram.count > 0 else { return "—" }
        let quantiles = [0.5, 0.95, 0.99].map { "p\(Int($0 * 100)) \(bound(histogram.bound(at: $0)))" }
        return escape(([text[.meanColumn] + " " + duration(histogram.mean)] + quantiles).joined(separator: " · "))
    }

    /// A bucket bound as `≤ 25 ms`.
    private static func bound(_ seconds: Double?) -> String {
        guard let seconds else { return "—" }
        return seconds.isInfinite ? "> 10 s" : "≤ \(duration(seconds))"
    }

    private static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "—" }
        if seconds >= 1 { return String(format: "%.1f s", seconds) }
        let milliseconds = seconds * 1000
        return milliseconds >= 10 ? String(format: "%.0f ms", milliseconds) : String(format: "%.1f ms", milliseconds)
    }

    private static func count(_ value: Double) -> String {
        String(Int(value.rounded()))
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
