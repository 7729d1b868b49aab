import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The admin console in a real browser: signing in, a refused app registration shown at its fields, the fix, the
/// language switch, dark mode and signing out, with a screenshot of each step.
extension ChromiumTests {
    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func consoleSignInRegisterAnAppAndSignOut() async throws {
        try await withTestServer(.sqlite) { server in
            let port = try #require(server.client.port)
            let base = "http://127.0.0.1:\(port)"
            try await Self.withPage { page in

                // The console sends a stranger to sign in; the token field has the focus.
                try await page.navigate("\(base)/console")
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/sign-in")
                #expect(try await page.evaluate("document.activeElement.id").stringValue == "token")
                try await Self.save(try await page.screenshot(), "console-sign-in.png")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#token').value = \(Self.quoted(server.adminToken));
                    document.querySelector('form[action="/console/sign-in"]').submit();
                    """)
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/apps")
                // The session is a cookie scripts cannot read; the token is nowhere in the page.
                let cookies = try await page.cookies(for: base)
                let session = try #require(cookies.first { $0["name"]?.stringValue == "kizuna_console" })
                #expect(session["httpOnly"]?.boolValue == true && session["sameSite"]?.stringValue == "Strict")
                #expect(try await page.evaluate("document.cookie").stringValue == "")
                #expect(try await page.evaluate("document.documentElement.outerHTML.includes(\(Self.quoted(server.adminToken)))").boolValue == false)

                // A registration with two mistakes: the summary lists them, each field is marked and says why.
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#id').value = 'Mio App';
                    document.querySelector('#name').value = 'Mio';
                    document.querySelector('#bundleId').value = 'com.example.mio';
                    document.querySelector('form[action="/console/apps"]').submit();
                    """)
                #expect(try await page.evaluate("document.querySelectorAll('.summary li').length") == .number(2))
                #expect(try await page.evaluate("document.querySelector('#id').getAttribute('aria-invalid')").stringValue == "true")
                #expect(try await page.evaluate("document.querySelector('#teamId').getAttribute('aria-invalid')").stringValue == "true")
                let teamIdError = try await page.evaluate(
                    "document.getElementById(document.querySelector('#teamId').getAttribute('aria-describedby').split(' ').pop()).textContent")
                #expect(teamIdError.stringValue?.contains("required for Apple platforms") == true)
                #expect(try await page.evaluate("document.querySelector('#name').value").stringValue == "Mio")
                try await Self.save(try await page.screenshot(), "console-app-refused.png")

                // Fixed, it is registered and listed.
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#id').value = 'mio';
                    document.querySelector('#teamId').value = 'ABCDE12345';
                    document.querySelector('form[action="/console/apps"]').submit();
                    """)
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "App registered.")
                #expect(try await page.evaluate("document.querySelector('tbody a').textContent").stringValue == "mio")
                #expect(try await server.send(.get, "/v1/admin/apps/mio").decode(AppRecord.self).teamId == "ABCDE12345")
                try await Self.save(try await page.screenshot(), "console-apps.png")

                // The language switch: Japanese, remembered on the next page.
                try await page.evaluateAndWaitForLoad("document.querySelector('a[hreflang=ja]').click()")
                #expect(try await page.evaluate("document.documentElement.lang").stringValue == "ja")
                #expect(try await page.evaluate("document.querySelector('h1').textContent").stringValue == "アプリ")
                try await page.navigate("\(base)/console/apps/mio")
                #expect(try await page.evaluate("document.querySelector('label[for=name]').textContent").stringValue == "名前")
                try await Self.save(try await page.screenshot(), "console-app-ja.png")

                // At 800 px the app's ten tabs wrap rather than run off the page, in either language.
                try await page.browser.send(
                    "Emulation.setDeviceMetricsOverride", ["width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false],
                    session: page.session)
                let overflow =
                    "document.documentElement.scrollWidth > innerWidth || document.querySelector('.tabs').scrollWidth > document.querySelector('.tabs').clientWidth"
                #expect(try await page.evaluate(overflow).boolValue == false)
                try await page.evaluateAndWaitForLoad("document.querySelector('a[hreflang=en]').click()")
                #expect(try await page.evaluate("document.documentElement.lang").stringValue == "en")
                #expect(try await page.evaluate("document.querySelectorAll('.tabs a').length") == .number(10))
                #expect(try await page.evaluate(overflow).boolValue == false)
                try await Self.save(try await page.screenshot(), "console-app-800.png")
                try await page.evaluateAndWaitForLoad("document.querySelector('a[hreflang=ja]').click()")

                // Dark mode follows the system's setting.
                try await page.browser.send(
                    "Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": "dark"]]], session: page.session)
                #expect(try await page.evaluate("getComputedStyle(document.body).backgroundColor").stringValue == "rgb(28, 28, 30)")
                try await Self.save(try await page.screenshot(), "console-app-ja-dark.png")

                // Signing out ends the session: the console sends to sign in again.
                try await page.evaluateAndWaitForLoad("document.querySelector('form[action=\"/console/sign-out\"]').submit()")
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/sign-in")
                #expect(try await page.cookies(for: base).contains { $0["name"]?.stringValue == "kizuna_console" } == false)
                try await page.navigate("\(base)/console/apps")
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/sign-in")
            }
        }
    }

    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func consolePublishAConfigDiffRollBackAndSimulate() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let base = "http://127.0.0.1:\(try #require(server.client.port))"
            try await Self.withPage { page in
                try await Self.signIntoConsole(page, base: base, token: server.adminToken)
                try await page.navigate("\(base)/console/apps/shop/config")

                // A template with a mistake: refused by the admin API, said at the editor, the draft kept.
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#document').value = \(Self.quoted(ConsoleConfigTests.mistake));
                    document.querySelector('#message').value = 'First try';
                    document.querySelector('#document').form.submit();
                    """)
                #expect(try await page.evaluate("document.querySelector('#document').getAttribute('aria-invalid')").stringValue == "true")
                let errors = try await page.evaluate("document.querySelector('#document-errors').textContent").stringValue ?? ""
                #expect(errors.contains("$.parameters.welcome.type"))
                #expect(try await page.evaluate("document.querySelector('#document').value").stringValue == ConsoleConfigTests.mistake)
                try await Self.save(try await page.screenshot(), "console-config-refused.png")

                // Fixed and published, then a second version.
                for (document, message) in [(ConsoleConfigTests.welcome, "First"), (Self.second, "Second")] {
                    try await page.evaluateAndWaitForLoad(
                        """
                        document.querySelector('#document').value = \(Self.quoted(document));
                        document.querySelector('#message').value = \(Self.quoted(message));
                        document.querySelector('#document').form.submit();
                        """)
                    #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "Published.")
                }
                #expect(try await page.evaluate("document.querySelectorAll('tbody tr[id^=parameter-]').length") == .number(2))
                try await Self.save(try await page.screenshot(), "console-config.png")

                // The diff of versions 1 and 2, side by side.
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#from').value = '1';
                    document.querySelector('#to').value = '2';
                    document.querySelector('#from').form.submit();
                    """)
                #expect(try await page.evaluate("location.pathname + location.search").stringValue == "/console/apps/shop/config/diff?from=1&to=2")
                #expect(try await page.evaluate("document.querySelectorAll('table.diff tbody tr').length") == .number(3))
                try await Self.save(try await page.screenshot(), "console-config-diff.png")

                // Roll back to version 1: it is live again, as version 3.
                try await page.navigate("\(base)/console/apps/shop/config")
                try await page.evaluateAndWaitForLoad("document.querySelector('input[name=version][value=\"1\"]').form.submit()")
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue?.hasPrefix("Rolled back") == true)
                let live = try await ConsoleConfigTests.live(server)
                #expect(live.version == 3 && live.rollbackOf == 1 && live.document["parameters"]?["limit"] == nil)
                try await Self.save(try await page.screenshot(), "console-config-rolled-back.png")

                // The device simulator, on a template with conditions: what a Japanese pro user gets on a Saturday.
                try await UpdateGateTests.publish(server, "config", ConsoleSimulatorTests.template)
                try await page.navigate("\(base)/console/apps/shop/config/simulate")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#appVersion').value = '3.1';
                    document.querySelector('#locale').value = 'ja-JP';
                    document.querySelector('#attributes').value = 'plan=pro';
                    document.querySelector('#at').value = '2026-11-28T12:00:00+09:00';
                    document.querySelector('#appVersion').form.submit();
                    """)
                let banner = "[...document.querySelectorAll('#simulated-values tr')].find(r => r.cells[0].textContent === 'banner')"
                #expect(try await page.evaluate("\(banner).cells[1].textContent").stringValue == "\"Weekend sale\"")
                #expect(try await page.evaluate("\(banner).cells[2].textContent").stringValue == "weekend")
                #expect(try await page.evaluate("document.querySelectorAll('#condition-outcomes tr.holds').length") == .number(3))
                try await Self.save(try await page.screenshot(), "console-config-simulator.png")

                // The same template as a form: a new condition's rule chosen from the list and typed, then published.
                try await page.navigate("\(base)/console/apps/shop/config/form")
                let row = "[...document.querySelectorAll('input[id^=c][id$=-name]')].find(i => i.value === '').id.split('-')[0]"
                _ = try await page.evaluate(
                    """
                    { const row = \(row);
                    document.getElementById(row + '-name').value = 'jp';
                    document.getElementById(row + '-r0-kind').value = 'country';
                    document.getElementById(row + '-r0-value').value = 'JP';
                    document.querySelector('#message').value = 'Japan';
                    document.getElementById('conditions').scrollIntoView(); }
                    """)
                try await Self.save(try await page.screenshot(), "console-config-form.png")
                try await page.evaluateAndWaitForLoad("document.querySelector('#message').form.submit()")
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "Published.")
                let conditions = try await ConsoleConfigTests.live(server).document["conditions"]?.arrayValue ?? []
                #expect(conditions.last == ["name": "jp", "when": ["country": ["JP"]]])
            }
        }
    }

    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func consoleSetAGateAndSimulateABlockedVersion() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let base = "http://127.0.0.1:\(try #require(server.client.port))"
            try await Self.withPage { page in
                try await Self.signIntoConsole(page, base: base, token: server.adminToken)
                try await page.navigate("\(base)/console/apps/shop/gate")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#document').value = \(Self.quoted(ConsoleGateTests.policy));
                    document.querySelector('#message').value = 'Block 3.5.1';
                    document.querySelector('#document').form.submit();
                    """)
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "Published.")
                try await Self.save(try await page.screenshot(), "console-gate.png")

                try await page.evaluateAndWaitForLoad("document.querySelector('a[href=\"/console/apps/shop/gate/simulate\"]').click()")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#appVersion').value = '3.5.1';
                    document.querySelector('#platform').value = 'ios';
                    document.querySelector('#appVersion').form.submit();
                    """)
                let action = "[...document.querySelectorAll('#gate-decision tr')].find(r => r.cells[0].textContent === 'action').cells[1].textContent"
                #expect(try await page.evaluate(action).stringValue == "\"require\"")
                try await Self.save(try await page.screenshot(), "console-gate-simulator.png")

                // The policy's form: a new OS required only at weekends, with a window ticked and typed, and an advisory.
                try await page.navigate("\(base)/console/apps/shop/gate/form")
                _ = try await page.evaluate(
                    """
                    document.querySelector('#osVersion').value = '17.0';
                    document.querySelector('input[name="osw0-sat"]').click();
                    document.querySelector('input[name="osw0-sun"]').click();
                    document.querySelector('#osw0-from').value = '02:00';
                    document.querySelector('#osw0-until').value = '05:00';
                    document.querySelector('#osw0-timeZone').value = 'Asia/Tokyo';
                    document.querySelector('#osa0-versions').value = '>= 26.0 < 26.0.1';
                    document.querySelector('#osa0-action').value = 'require';
                    document.querySelector('#message').value = 'OS at weekends';
                    document.querySelector('#osVersion').scrollIntoView();
                    """)
                try await Self.save(try await page.screenshot(), "console-gate-form.png")
                try await page.evaluateAndWaitForLoad("document.querySelector('#message').form.submit()")
                #expect(try await page.evaluate("document.querySelector('[role=status]').textContent").stringValue == "Published.")
                let policy = try await ConsoleGateFormTests.live(server).document
                #expect(
                    policy["minimumOSVersion"]
                        == ["version": "17.0", "windows": [["days": ["sat", "sun"], "from": "02:00", "until": "05:00", "timeZone": "Asia/Tokyo"]]])
                #expect(policy["osAdvisories"] == [["osVersion": [">=": "26.0", "<": "26.0.1"], "action": "require"]])
            }
        }
    }

    static let second = #"{"parameters":{"welcome":{"type":"string","default":"Hi"},"limit":{"type":"number","default":3}}}"#

    /// Runs `body` with a page of a fresh headless Chromium (and the screenshot folder made), quitting the browser
    /// however `body` ends.
    static func withPage(_ body: (ChromiumPage) async throws -> Void) async throws {
        let browser = try Chromium()
        do {
            try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
            try await body(try await ChromiumPage.open(in: browser))
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }

    /// Signs `page` into the console at `base` with the admin token, through the form.
    static func signIntoConsole(_ page: ChromiumPage, base: String, token: String) async throws {
        try await page.navigate("\(base)/console/sign-in")
        try await page.evaluateAndWaitForLoad(
            """
            document.querySelector('#token').value = \(Self.quoted(token));
            document.querySelector('form[action="/console/sign-in"]').submit();
            """)
        try #require(try await page.evaluate("location.pathname").stringValue == "/console/apps")
    }

    /// `text` as a JavaScript string literal.
    static func quoted(_ text: String) throws -> String {
        String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
    }
}
