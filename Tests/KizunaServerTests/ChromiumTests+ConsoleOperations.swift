import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import Testing

@testable import KizunaServer

/// The console's operating sections in a real browser: a user disabled from the keyboard alone, a data record edited
/// through a conflict, a release blocked, and the Health page; a screenshot of each.
extension ChromiumTests {
    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func consoleDisableAUserEditARecordAndBlockARelease() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let account = try await AccountsTests.signUp(server, "mio@example.com").account
            #expect(try await DataSchemaPublishingTests.publish(server, ConsoleDataTests.schema).status == .ok)
            let task = try await ConsoleDataTests.create(server, "write the docs", points: 3)
            let release = try await server.send(.post, "/v1/admin/apps/shop/releases", json: #"{"version":"2.0.1","build":"7","channel":"appstore"}"#)
            #expect(release.status == .created)
            let base = "http://127.0.0.1:\(try #require(server.client.port))"
            try await Self.withPage { page in
                try await Self.signIntoConsole(page, base: base, token: server.adminToken)

                // Keyboard: the first Tab reaches the skip link, which leads to the content.
                try await page.navigate("\(base)/console/users")
                try await page.press("Tab")
                #expect(try await page.evaluate("document.activeElement.className").stringValue == "skip")
                #expect(try await page.evaluate("getComputedStyle(document.activeElement).outlineStyle").stringValue == "solid", "focus is visible")
                #expect(try await page.evaluate("document.querySelector('tbody a').textContent").stringValue == "mio@example.com")
                try await Self.save(try await page.screenshot(), "console-users.png")

                // The account disabled with the keyboard alone: its button focused, Enter.
                try await page.navigate("\(base)/console/users/\(account.id)")
                try await page.evaluate("document.querySelector('form[action$=\"/status\"] button').focus()")
                try await page.pressAndWaitForLoad("Enter")
                #expect(
                    try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue
                        == "Disabled: every session was signed out.")
                #expect(try await server.send(.get, "/v1/admin/users/\(account.id)").decode(UserRecord.self).disabled)
                try await Self.save(try await page.screenshot(), "console-user-disabled.png")

                // A record opened, changed by someone else meanwhile, saved: both versions shown, the draft kept.
                try await page.navigate("\(base)/console/apps/shop/data/Task")
                try await Self.save(try await page.screenshot(), "console-data-browser.png")
                try await page.evaluateAndWaitForLoad("document.querySelector('tbody a').click()")
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/apps/shop/data/Task/\(task)")
                let (_, meanwhile) = try await OperatorQueryTests.query(
                    server, #"mutation { updateTask(input: { id: "\#(task)", _version: 1, title: "theirs" }) { _version } }"#)
                #expect(meanwhile["data"]?["updateTask"]?["_version"] == .number(2))
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#field-title').value = 'mine';
                    document.querySelector('#field-title').form.submit();
                    """)
                #expect(
                    try await page.evaluate("document.querySelector('.summary p').textContent").stringValue?.hasPrefix("This record changed") == true)
                #expect(try await page.evaluate("document.querySelector('tr.changed td:nth-of-type(2)').textContent").stringValue == "theirs")
                #expect(try await page.evaluate("document.querySelector('#field-title').value").stringValue == "mine")
                try await Self.save(try await page.screenshot(), "console-data-conflict.png")
                try await page.evaluateAndWaitForLoad("document.querySelector('#field-title').form.submit()")
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "Changes saved.")
                #expect(try await page.evaluate("document.querySelector('#field-title').value").stringValue == "mine")

                // A release blocked: the gate now blocks it, and the page links to that change.
                try await page.navigate("\(base)/console/apps/shop/releases")
                try await page.evaluateAndWaitForLoad("document.querySelector('button[aria-label=\"Block 2.0.1\"]').click()")
                #expect(try await page.evaluate("document.querySelector('strong.bad').textContent").stringValue == "Blocked")
                #expect(try await page.evaluate("document.querySelector('a[href*=\"/gate/diff\"]') !== null").boolValue == true)
                let gate = try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self)
                #expect(gate.document["blockedVersions"] == .array([.string("2.0.1")]))
                try await Self.save(try await page.screenshot(), "console-release-blocked.png")

                try await page.navigate("\(base)/console/health")
                #expect(try await page.evaluate("document.querySelector('table.facts td').textContent").stringValue?.hasPrefix("Ready") == true)
                try await Self.save(try await page.screenshot(), "console-health.png")
            }
        }
    }
}

extension ChromiumTests {
    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func consoleComposeAPushAndReadTheReport() async throws {
        let push = try await PushFixture.start()
        try await withTestServer(.sqlite, configure: push.configure) { server in
            try await push.prepare(server)
            try await PushFixture.register(server, 1, extra: #","locale":"ja-JP""#)
            try await PushFixture.register(server, 2)
            push.apns.script(PushFixture.token(2), [.reject(status: 410, reason: "Unregistered", timestamp: EpochMillis.now)])
            let base = "http://127.0.0.1:\(try #require(server.client.port))"
            try await Self.withPage { page in
                try await Self.signIntoConsole(page, base: base, token: server.adminToken)
                try await page.navigate("\(base)/console/apps/shop/push")
                #expect(try await page.evaluate("document.body.textContent.includes(\(Self.quoted(PushFixture.keyId)))").boolValue == true)
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#title').value = 'Sale';
                    document.querySelector('#body').value = 'Today only';
                    document.querySelector('#translations').value = 'ja = セール | 本日限り';
                    document.querySelector('#targetKind').value = 'all';
                    document.querySelector('#title').form.submit();
                    """)
                let path = try #require(try await page.evaluate("location.pathname").stringValue)
                let id = try #require(path.split(separator: "/").last.map(String.init))
                _ = try await push.finish(id, on: server, senders: [try #require(server.pushSender)])
                try await page.navigate("\(base)\(path)")
                #expect(try await page.evaluate("document.querySelector('#reasons td').textContent").stringValue == "Unregistered")
                let sent =
                    "[...document.querySelectorAll('#totals tr')].find(r => r.querySelector('th').textContent === 'Sent').querySelector('td').textContent"
                #expect(try await page.evaluate(sent).stringValue == "1")
                try await Self.save(try await page.screenshot(), "console-push-report.png")
            }
        }
        await push.apns.stop()
    }
}

extension ChromiumTests {
    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func consoleConfigFormShowsAMistakeAtItsCell() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let base = "http://127.0.0.1:\(try #require(server.client.port))"
            try await Self.withPage { page in
                try await Self.signIntoConsole(page, base: base, token: server.adminToken)
                try await page.navigate("\(base)/console/apps/shop/config/form")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#p0-name').value = 'limit';
                    document.querySelector('#p0-type').value = 'number';
                    document.querySelector('#p0-default').value = 'three';
                    document.querySelector('#p0-name').form.submit();
                    """)
                #expect(try await page.evaluate("document.querySelector('#p0-default').getAttribute('aria-invalid')").stringValue == "true")
                let error = "document.getElementById(document.querySelector('#p0-default').getAttribute('aria-describedby')).textContent"
                #expect(try await page.evaluate(error).stringValue?.contains("is not a number") == true)
                try await Self.save(try await page.screenshot(), "console-config-form-refused.png")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#p0-default').value = '3';
                    document.querySelector('#p0-name').form.submit();
                    """)
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "Published.")
                #expect(try await ConsoleConfigTests.live(server).document["parameters"]?["limit"] == ["type": "number", "default": 3])
            }
        }
    }
}
