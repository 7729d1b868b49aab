import Foundation
import KizunaCore

/// An app's Releases page.
enum ConsoleReleasePages {
    /// The releases, newest first, with their artifacts and a block or unblock button for each version.
    /// - Parameters:
    ///   - gateVersion: The live gate policy's version, which a block form publishes over.
    ///   - gateChange: The gate policy version a block just published, linked to its diff.
    static func list(
        _ frame: ConsolePages.Frame, app: AppRecord, releases: [ReleaseRecord], gateVersion: Int64, problems: [ConsolePages.Problem],
        notice: String?, gateChange: Int64?
    ) -> String {
        let text = frame.text
        let base = ConsoleAppPages.Tab.releases.path(app)
        let gatePath = ConsoleAppPages.Tab.gate.path(app)
        let table: String
        if releases.isEmpty {
            table = #"<p>\#(escape(text[.noReleases]))</p>"#
        } else {
            let rows = releases.map { release in
                let artifacts =
                    release.artifacts.isEmpty
                    ? "—"
                    : "<ul>"
                        + release.artifacts.map { artifact in
                            let href =
                                "\(base)/\(ConsoleController.escapedSegment(release.id))/artifacts/\(ConsoleController.escapedSegment(artifact.name))"
                            return
                                #"<li><a href="\#(href)" download>\#(escape(artifact.name))</a> <span class="hint">\#(size(artifact.size))</span></li>"#
                        }.joined() + "</ul>"
                let source = [release.tag, release.commit.map { String($0.prefix(12)) }, release.branch].compactMap { $0 }.map(escape)
                let gate = """
                    <form method="post" action="\(base)/block">\(ConsolePages.csrfField(frame.csrf))\
                    <input type="hidden" name="version" value="\(escape(release.version))">\
                    <input type="hidden" name="block" value="\(release.blocked ? "false" : "true")">\
                    <input type="hidden" name="base" value="\(gateVersion)">\
                    <button type="submit" class="\(release.blocked ? "secondary" : "danger")" \
                    aria-label="\(escape(text[release.blocked ? .unblockButton : .blockButton])) \(escape(release.version))">\
                    \(escape(text[release.blocked ? .unblockButton : .blockButton]))</button></form>
                    """
                return """
                    <tr><th scope="row">\(escape(release.version)) <span class="hint">(\(escape(release.build)))</span></th>\
                    <td>\(escape(release.channel.rawValue))</td><td>\(ConsoleAppPages.time(release.createdAt))<br>\
                    <span class="hint">\(escape(release.createdBy))</span></td><td class="mono">\(source.joined(separator: "<br>"))</td>\
                    <td>\(artifacts)</td><td>\(release.blocked ? #"<strong class="bad">\#(escape(text[.blockedStatus]))</strong>"# : "—")</td>\
                    <td>\(gate)</td></tr>
                    """
            }.joined(separator: "\n")
            table = """
                <table>
                <thead><tr><th scope="col">\(escape(text[.versionColumn]))</th><th scope="col">\(escape(text[.channelColumn]))</th>\
                <th scope="col">\(escape(text[.createdColumn]))</th><th scope="col">\(escape(text[.sourceColumn]))</th>\
                <th scope="col">\(escape(text[.artifactsColumn]))</th><th scope="col">\(escape(text[.gateTitle]))</th>\
                <th scope="col">\(escape(text[.actions]))</th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                """
        }
        let change = gateChange.map { version in
            let diff = "\(gatePath)/diff?from=\(max(version - 1, 0))&to=\(version)"
            return #"<p><a href="\#(diff)">\#(escape(text[.gateChangeLink])) \#(version)</a></p>"#
        }
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .releases))
            \(change ?? "")
            \(ConsolePages.summary(text, problems))
            <p class="hint">\(escape(text[.releasesHint])) <a href="\(gatePath)">\(escape(text[.gateTitle]))</a></p>
            \(table)
            """
        return ConsolePages.page(frame, title: "\(text[.releasesTitle]): \(app.name)", notice: notice, body: body)
    }

    /// A byte count as `12.3 MB`.
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
