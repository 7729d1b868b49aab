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
            let browser = try Chromium()
            do {
                let page = try await ChromiumPage.open(in: browser)
                try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)

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

                // Dark mode follows the system's setting.
                try await browser.send(
                    "Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": "dark"]]], session: page.session)
                #expect(try await page.evaluate("getComputedStyle(document.body).backgroundColor").stringValue == "rgb(28, 28, 30)")
                try await Self.save(try await page.screenshot(), "console-app-ja-dark.png")

                // Signing out ends the session: the console sends to sign in again.
                try await page.evaluateAndWaitForLoad("document.querySelector('form[action=\"/console/sign-out\"]').submit()")
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/sign-in")
                #expect(try await page.cookies(for: base).contains { $0["name"]?.stringValue == "kizuna_console" } == false)
                try await page.navigate("\(base)/console/apps")
                #expect(try await page.evaluate("location.pathname").stringValue == "/console/sign-in")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    /// `text` as a JavaScript string literal.
    static func quoted(_ text: String) throws -> String {
        String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
    }
}
