import Foundation
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The account pages in a real browser: headless Chromium signs up, is signed in with the cookie, signs out and
/// signs in again, and a screenshot of each page is kept.
@Suite("Website in headless Chromium")
struct ChromiumTests {
    /// Where screenshots go: `KIZUNA_TEST_ARTIFACTS`, else `.build/test-artifacts`.
    static var artifacts: URL {
        let path = ProcessInfo.processInfo.environment["KIZUNA_TEST_ARTIFACTS"] ?? ".build/test-artifacts"
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func signUpSignOutAndSignInThroughTheForms() async throws {
        try await AccountsTests.withServer { server in
            let port = try #require(server.client.port)
            let base = "http://127.0.0.1:\(port)"
            let browser = try Chromium()
            do {
                let page = try await ChromiumPage.open(in: browser)
                try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)

                // Sign up: the form's fields carry what password managers look for.
                try await page.navigate("\(base)/account/sign-up")
                #expect(try await page.evaluate("document.querySelector('#identifier').autocomplete").stringValue == "username")
                #expect(try await page.evaluate("document.querySelector('#password').autocomplete").stringValue == "new-password")
                #expect(try await page.evaluate("document.querySelector('label[for=password]').textContent").stringValue == "Password")
                try await Self.save(try await page.screenshot(), "sign-up.png")
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#identifier').value = 'mio@example.com';
                    document.querySelector('#password').value = 'correct horse battery';
                    document.querySelector('form').submit();
                    """)
                #expect(try await page.evaluate("location.pathname").stringValue == "/account")
                #expect(try await page.evaluate("document.querySelector('#signed-in-as').textContent").stringValue == "mio@example.com")
                try await Self.save(try await page.screenshot(), "account.png")

                // The cookie: HttpOnly (scripts cannot read it), SameSite=Lax, host-only, path /.
                let cookies = try await page.cookies(for: base)
                let session = try #require(cookies.first { $0["name"]?.stringValue == "kizuna_session" })
                #expect(session["httpOnly"]?.boolValue == true && session["sameSite"]?.stringValue == "Lax" && session["path"]?.stringValue == "/")
                #expect(session["value"]?.stringValue?.hasPrefix("kzs_") == true)
                #expect(try await page.evaluate("document.cookie").stringValue == "")

                // Sign out: the cookie is gone and the account page sends us to sign in.
                try await page.evaluateAndWaitForLoad("document.querySelector('form[action=\"/account/sign-out\"]').submit()")
                #expect(try await page.evaluate("location.pathname").stringValue == "/account/sign-in")
                #expect(try await page.cookies(for: base).contains { $0["name"]?.stringValue == "kizuna_session" } == false)
                #expect(try await page.evaluate("document.querySelector('#password').autocomplete").stringValue == "current-password")

                // A wrong password shows the problem on the page.
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#identifier').value = 'mio@example.com';
                    document.querySelector('#password').value = 'wrong password here';
                    document.querySelector('form').submit();
                    """)
                #expect(try await page.evaluate("document.querySelector('[role=alert]').textContent").stringValue?.contains("wrong") == true)
                try await Self.save(try await page.screenshot(), "sign-in-error.png")

                // Sign in again, then /.well-known/change-password lands on the change-password form.
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#password').value = 'correct horse battery';
                    document.querySelector('form').submit();
                    """)
                #expect(try await page.evaluate("location.pathname").stringValue == "/account")
                try await page.navigate("\(base)/.well-known/change-password")
                #expect(try await page.evaluate("location.pathname").stringValue == "/account/change-password")
                #expect(try await page.evaluate("document.querySelector('#newPassword').autocomplete").stringValue == "new-password")
                #expect(try await page.evaluate("document.querySelector('#currentPassword').autocomplete").stringValue == "current-password")
                try await Self.save(try await page.screenshot(), "change-password.png")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    /// Keeps a screenshot, checking it is a PNG with content.
    static func save(_ png: Data, _ name: String) async throws {
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 1000)
        let url = artifacts.appendingPathComponent(name)
        try png.write(to: url)
        print("screenshot: \(url.path) (\(png.count) bytes)")
    }
}
