import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// What Safari's password manager needs, checked in a real browser's DOM on every page the site serves.
extension ChromiumTests {
    /// The site's pages: every GET under `/account` that openapi.yaml describes (OpenAPICoverageTests keeps it equal to
    /// the router's routes), so a page added later is checked without anyone listing it here.
    static func accountPages() throws -> [String] {
        let document = String(decoding: try OpenAPIDocument.bytes(), as: UTF8.self)
        return OpenAPICoverageTests.operations(in: document).compactMap { operation in
            operation.hasPrefix("get /account") ? String(operation.dropFirst("get ".count)) : nil
        }.sorted()
    }

    /// Per form with a password field: its action, the values of its username fields, its password fields'
    /// autocomplete tokens; and whether any password field sits outside a form.
    static let passwordForms = """
        ({
          lang: document.documentElement.lang,
          orphans: [...document.querySelectorAll('input[type=password]')].filter(i => !i.form).length,
          forms: [...document.forms].filter(f => f.querySelector('input[type=password]')).map(f => ({
            action: f.getAttribute('action'),
            usernames: [...f.querySelectorAll('input[autocomplete~="username"]')].map(i => i.value),
            passwords: [...f.querySelectorAll('input[type=password]')].map(i => i.getAttribute('autocomplete'))
          }))
        })
        """

    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func everyPasswordFormHasAUsernameField() async throws {
        try await AccountsTests.withServer { server in
            let port = try #require(server.client.port)
            let base = "http://127.0.0.1:\(port)"
            _ = try await AccountsTests.signUp(server, "mio@example.com")
            let reset = try await server.send(.post, "/v1/admin/users/mio@example.com/password-reset").decode(PasswordResetGrant.self)
            // The query a page needs to show its form.
            let queries = ["/account/reset-password": "?token=\(reset.token)"]
            let pages = try Self.accountPages()
            #expect(pages.contains("/account/reset-password") && pages.contains("/account/change-password"))

            let browser = try Chromium()
            do {
                let page = try await ChromiumPage.open(in: browser)
                var withPasswords: Set<String> = []
                // Signed out, then signed in: some pages show their form only to one of the two.
                for signedIn in [false, true] {
                    if signedIn {
                        try await page.navigate("\(base)/account/sign-in")
                        try await page.evaluateAndWaitForLoad(
                            """
                            document.querySelector('#identifier').value = 'mio@example.com';
                            document.querySelector('#password').value = '\(AccountsTests.password)';
                            document.querySelector('form').submit();
                            """)
                        #expect(try await page.evaluate("location.pathname").stringValue == "/account")
                    }
                    for path in pages {
                        try await page.navigate(base + path + (queries[path] ?? ""))
                        let shown = try #require(try await page.evaluate("location.pathname").stringValue)
                        let report = try await page.evaluate(Self.passwordForms)
                        #expect(report["lang"]?.stringValue == "en" && report["orphans"]?.numberValue == 0, "\(shown)")
                        for form in report["forms"]?.arrayValue ?? [] {
                            withPasswords.insert(shown)
                            let usernames = form["usernames"]?.arrayValue?.compactMap(\.stringValue) ?? []
                            let passwords = form["passwords"]?.arrayValue?.compactMap(\.stringValue) ?? []
                            #expect(usernames.count == 1, "\(shown): a form with a password field needs one autocomplete=username field")
                            #expect(!passwords.isEmpty && passwords.allSatisfy { ["current-password", "new-password"].contains($0) }, "\(shown)")
                            // Where the account is known, the username is filled in for the password manager to save under.
                            if ["/account/change-password", "/account/reset-password"].contains(shown) {
                                #expect(usernames == ["mio@example.com"], "\(shown)")
                            }
                        }
                    }
                }
                // Exactly the password pages: a page that lost its form (or gained one unnoticed) fails here.
                #expect(withPasswords == ["/account/sign-in", "/account/sign-up", "/account/change-password", "/account/reset-password"])

                // The reset form shown again after a refusal keeps its username field.
                try await page.navigate("\(base)/account/reset-password?token=\(reset.token)")
                try await Self.save(try await page.screenshot(), "reset-password.png")
                try await page.evaluateAndWaitForLoad(
                    "document.querySelector('#newPassword').value = 'short'; document.querySelector('form').submit();")
                let refused = try await page.evaluate(Self.passwordForms)
                #expect(refused["forms"]?.arrayValue?.first?["usernames"]?.arrayValue == [.string("mio@example.com")])
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    @Test(.enabled(if: Chromium.shouldRun, "chromium is not installed (apt-get install chromium); CI installs it"))
    func pagesSpeakTheBrowsersLanguage() async throws {
        try await AccountsTests.withServer { server in
            let port = try #require(server.client.port)
            let base = "http://127.0.0.1:\(port)"
            let browser = try Chromium()
            do {
                let page = try await ChromiumPage.open(in: browser)
                try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
                try await browser.send(
                    "Network.setExtraHTTPHeaders", ["headers": ["Accept-Language": "ja-JP,ja;q=0.9,en;q=0.5"]], session: page.session)
                try await page.navigate("\(base)/account/sign-up")
                #expect(try await page.evaluate("document.documentElement.lang").stringValue == "ja")
                #expect(try await page.evaluate("document.title").stringValue == "アカウントを作成")
                #expect(try await page.evaluate("document.querySelector('label[for=password]').textContent").stringValue == "パスワード")
                #expect(try await page.evaluate("document.querySelector('button').textContent").stringValue == "アカウントを作成")
                #expect(try await page.evaluate("document.querySelector('#password-hint').textContent").stringValue?.hasPrefix("10文字以上。") == true)
                try await page.evaluateAndWaitForLoad(
                    """
                    document.querySelector('#identifier').value = 'mio';
                    document.querySelector('#password').value = 'aaa';
                    document.querySelector('form').submit();
                    """)
                let alert = try await page.evaluate("document.querySelector('[role=alert]').textContent").stringValue ?? ""
                #expect(alert.contains("次の点を直してください") && alert.contains("パスワード: 10文字以上にしてください"))
                try await Self.save(try await page.screenshot(), "sign-up-ja.png")

                // The browser's own default (headless Chromium asks for en-US): English.
                try await browser.send("Network.setExtraHTTPHeaders", ["headers": [:]], session: page.session)
                try await page.navigate("\(base)/account/sign-up")
                #expect(try await page.evaluate("document.documentElement.lang").stringValue == "en")
                #expect(try await page.evaluate("document.querySelector('label[for=password]').textContent").stringValue == "Password")
                #expect(try await page.evaluate("document.querySelector('button').textContent").stringValue == "Create account")
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }
}
