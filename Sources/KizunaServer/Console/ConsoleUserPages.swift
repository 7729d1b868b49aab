import Foundation
import KizunaCore

/// The Users section's pages.
enum ConsoleUserPages {
    typealias Problem = ConsolePages.Problem

    /// A search form and one page of accounts, with a link to the next.
    static func list(_ frame: ConsolePages.Frame, page: UserList, search: String, problems: [Problem] = [], notice: String? = nil) -> String {
        let text = frame.text
        let table: String
        if page.users.isEmpty {
            table = #"<p>\#(escape(search.isEmpty ? text[.usersEmpty] : text[.usersNoMatch]))</p>"#
        } else {
            let rows = page.users.map { user in
                """
                <tr><td><a href="\(ConsoleController.consoleUserPath(user.id))">\(escape(user.identifier))</a></td>\
                <td>\(escape(kind(text, user.kind)))</td><td>\(status(text, user))</td><td>\(ConsoleAppPages.time(user.createdAt))</td>\
                <td>\(user.lastSignInAt.map(ConsoleAppPages.time) ?? escape(text[.never]))</td><td>\(user.activeSessions)</td></tr>
                """
            }.joined(separator: "\n")
            table = """
                <table>
                <thead><tr><th scope="col">\(escape(text[.identifierColumn]))</th><th scope="col">\(escape(text[.kindColumn]))</th>\
                <th scope="col">\(escape(text[.statusColumn]))</th><th scope="col">\(escape(text[.createdColumn]))</th>\
                <th scope="col">\(escape(text[.lastSignInColumn]))</th><th scope="col">\(escape(text[.sessionsColumn]))</th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                """
        }
        var links: [String] = []
        let searchQuery = search.isEmpty ? "" : "search=\(ConsoleController.escapedSegment(search))"
        if let next = page.next {
            let query = ConsoleController.query(
                [URLQueryItem(name: "after", value: next)] + (search.isEmpty ? [] : [URLQueryItem(name: "search", value: search)]))
            links.append(#"<a href="/console/users?\#(escape(query))" rel="next">\#(escape(text[.nextPage]))</a>"#)
        }
        links.append(#"<a href="/console/users\#(searchQuery.isEmpty ? "" : "?" + escape(searchQuery))">\#(escape(text[.firstPage]))</a>"#)
        let body = """
            <form method="get" action="/console/users" class="row" role="search">
            <label for="search">\(escape(text[.searchLabel]))</label>
            <input id="search" name="search" type="search" value="\(escape(search))" autocapitalize="none" spellcheck="false">
            <button type="submit">\(escape(text[.searchButton]))</button>
            </form>
            \(ConsolePages.summary(text, problems))
            \(table)
            <nav class="row" aria-label="\(escape(text[.pagesNavigation]))">\(links.joined())</nav>
            """
        return ConsolePages.page(frame, title: text[.usersTitle], notice: notice, body: body)
    }

    /// One account: its facts, sessions, devices and groups, and what can be done to it.
    static func detail(
        _ frame: ConsolePages.Frame, user: UserRecord, sessions: [SessionInfo], groups: [String], problems: [Problem], typedGroup: String,
        notice: String?
    ) -> String {
        let text = frame.text
        let path = ConsoleController.consoleUserPath(user.id)
        let csrf = ConsolePages.csrfField(frame.csrf)
        let facts = [
            (text[.accountID], #"<code>\#(escape(user.id))</code>"#),
            (text[.kindColumn], escape(kind(text, user.kind))),
            (text[.statusColumn], status(text, user)),
            (text[.createdColumn], ConsoleAppPages.time(user.createdAt)),
            (text[.passwordChangedColumn], ConsoleAppPages.time(user.passwordChangedAt)),
            (text[.lastSignInColumn], user.lastSignInAt.map(ConsoleAppPages.time) ?? escape(text[.never])),
            (text[.sessionsColumn], "\(user.activeSessions)"),
        ].map { #"<tr><th scope="row">\#(escape($0.0))</th><td>\#($0.1)</td></tr>"# }.joined()
        let devices: String
        if user.devices.isEmpty {
            devices = #"<p>\#(escape(text[.noDevices]))</p>"#
        } else {
            let rows = user.devices.map { device in
                """
                <tr><td class="mono">\(escape(device.appId))</td><td class="mono">\(escape(device.installId))</td>\
                <td>\(escape(device.name ?? ""))</td><td>\(ConsoleAppPages.time(device.createdAt))</td><td>\(ConsoleAppPages.time(device.lastSeenAt))</td></tr>
                """
            }.joined(separator: "\n")
            devices = """
                <table>
                <thead><tr><th scope="col">\(escape(text[.appID]))</th><th scope="col">\(escape(text[.installIdLabel]))</th>\
                <th scope="col">\(escape(text[.deviceNameColumn]))</th><th scope="col">\(escape(text[.createdColumn]))</th>\
                <th scope="col">\(escape(text[.lastSeenColumn]))</th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                """
        }
        let groupRows =
            groups.isEmpty
            ? #"<p>\#(escape(text[.noGroups]))</p>"#
            : "<ul>"
                + groups.map { group in
                    """
                    <li class="row"><code>\(escape(group))</code><form method="post" action="\(path)/groups/remove">\(csrf)\
                    <input type="hidden" name="group" value="\(escape(group))">\
                    <button type="submit" class="secondary" aria-label="\(escape(text[.removeButton])): \(escape(group))">\(escape(text[.removeButton]))</button></form></li>
                    """
                }.joined() + "</ul>"
        let statusForm = """
            <form method="post" action="\(path)/status" class="panel">
            \(csrf)<input type="hidden" name="disabled" value="\(user.disabled ? "false" : "true")">
            <p class="hint">\(escape(text[user.disabled ? .enableHint : .disableHint]))</p>
            <button type="submit"\(user.disabled ? "" : #" class="danger""#)>\(escape(text[user.disabled ? .enableButton : .disableButton]))</button>
            </form>
            """
        let body = """
            \(ConsolePages.summary(text, problems))
            <table class="facts">\(facts)</table>
            \(statusForm)
            <h2 id="sessions">\(escape(text[.userSessionsTitle]))</h2>
            <p class="hint">\(escape(text[.userSessionsHint]))</p>
            \(sessionTable(text, sessions, path: path, csrf: csrf))
            <h2>\(escape(text[.devicesTitle]))</h2>
            \(devices)
            <h2 id="groups">\(escape(text[.groupsTitle]))</h2>
            <p class="hint">\(escape(text[.groupsHint]))</p>
            \(groupRows)
            <form method="post" action="\(path)/groups" class="panel" aria-labelledby="groups">
            \(csrf)
            \(ConsolePages.field("group", label: text[.groupLabel], value: typedGroup, problems: problems, extra: #"autocapitalize="none" spellcheck="false" required"#))
            <button type="submit">\(escape(text[.addGroupButton]))</button>
            </form>
            <h2>\(escape(text[.resetTitle]))</h2>
            <form method="post" action="\(path)/password-reset" class="panel">
            \(csrf)<p class="hint">\(escape(text[.resetHint]))</p>
            <button type="submit" class="secondary">\(escape(text[.resetButton]))</button>
            </form>
            <p><a href="\(path)/delete">\(escape(text[.deleteUserTitle]))</a> · <a href="/console/users">\(escape(text[.usersTitle]))</a></p>
            """
        return ConsolePages.page(frame, title: user.identifier, notice: notice, body: body)
    }

    /// The account's sessions, newest first, each with a button that signs it out.
    private static func sessionTable(_ text: ConsoleText, _ sessions: [SessionInfo], path: String, csrf: String) -> String {
        guard !sessions.isEmpty else { return #"<p>\#(escape(text[.noUserSessions]))</p>"# }
        let rows = sessions.map { session in
            let kind = text[session.kind == .app ? .appSessionKind : .webSessionKind]
            let place = [session.appId, session.name].compactMap { $0 }.joined(separator: " · ")
            return """
                <tr><td>\(escape(kind))</td><td class="mono">\(escape(session.appId ?? ""))</td><td>\(escape(session.name ?? ""))</td><td>\(ConsoleAppPages.time(session.createdAt))</td>\
                <td>\(ConsoleAppPages.time(session.lastUsedAt))</td><td>\(ConsoleAppPages.time(session.expiresAt))</td>\
                <td><form method="post" action="\(path)/sessions/\(ConsoleController.escapedSegment(session.id))/end">\(csrf)\
                <button type="submit" class="secondary" aria-label="\(escape(text[.endSessionButton])): \(escape(kind)) \(escape(place))">\
                \(escape(text[.endSessionButton]))</button></form></td></tr>
                """
        }.joined(separator: "\n")
        return """
            <table aria-labelledby="sessions">
            <thead><tr><th scope="col">\(escape(text[.kindColumn]))</th><th scope="col">\(escape(text[.appID]))</th>\
            <th scope="col">\(escape(text[.deviceNameColumn]))</th>\
            <th scope="col">\(escape(text[.createdColumn]))</th><th scope="col">\(escape(text[.lastUsedColumn]))</th>\
            <th scope="col">\(escape(text[.expiresColumn]))</th><th scope="col">\(escape(text[.actions]))</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            """
    }

    /// The reset link, shown once: the operator hands it to the account's owner.
    static func resetLink(_ frame: ConsolePages.Frame, user: UserRecord, grant: PasswordResetGrant) -> String {
        let text = frame.text
        let body = """
            <p>\(escape(text[.resetLinkHint]))</p>
            <div class="field"><label for="link">\(escape(text[.resetTitle]))</label>\
            <input id="link" type="text" readonly value="\(escape(grant.url))" aria-describedby="link-expires"></div>
            <p class="hint" id="link-expires">\(escape(text[.expiresColumn])): \(ConsoleAppPages.time(grant.expiresAt))</p>
            <p><a href="\(ConsoleController.consoleUserPath(user.id))">\(escape(user.identifier))</a></p>
            """
        return ConsolePages.page(frame, title: "\(text[.resetTitle]): \(user.identifier)", body: body)
    }

    /// The confirmation before an account is deleted: its identifier must be typed.
    static func delete(_ frame: ConsolePages.Frame, user: UserRecord, typed: String = "", problems: [Problem] = []) -> String {
        let text = frame.text
        let path = ConsoleController.consoleUserPath(user.id)
        let body = """
            <p class="problem">\(escape(text[.deleteUserWarning]))</p>
            <form method="post" action="\(path)/delete" class="panel narrow">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.field("confirm", label: "\(text[.deleteConfirmLabel]): \(user.identifier)", value: typed, problems: problems, extra: #"autocomplete="off" spellcheck="false" required"#))
            <div class="row"><button type="submit" class="danger">\(escape(text[.deleteButton]))</button><a href="\(path)">\(escape(text[.cancel]))</a></div>
            </form>
            """
        return ConsolePages.page(frame, title: "\(text[.deleteUserTitle]): \(user.identifier)", body: body)
    }

    private static func kind(_ text: ConsoleText, _ kind: AccountIdentifier.Kind) -> String {
        kind == .email ? text[.emailKind] : text[.usernameKind]
    }

    private static func status(_ text: ConsoleText, _ user: UserRecord) -> String {
        user.disabled ? #"<strong class="bad">\#(escape(text[.disabledStatus]))</strong>"# : escape(text[.activeStatus])
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
