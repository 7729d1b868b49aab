import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The pages in the reader's language, and the reset page that knows whose password it sets.
extension WebPagesTests {
    @Test func pagesFollowAcceptLanguage() async throws {
        try await AccountsTests.withServer { server in
            func signIn(_ acceptLanguage: String?) async throws -> String {
                let headers: HTTPFields = acceptLanguage.map { [.acceptLanguage: $0] } ?? [:]
                return try await server.send(.get, "/account/sign-in", headers: headers, authorized: false).text
            }
            // No header, a language without texts, or English first: English.
            for english in [nil, "fr", "en-GB, ja;q=0.9"] {
                let page = try await signIn(english)
                #expect(
                    page.contains(#"<html lang="en">"#) && page.contains(#"<label for="identifier">Email or username</label>"#),
                    "\(english ?? "none")")
                #expect(page.contains(#"<button type="submit">Sign in</button>"#) && page.contains("<title>Sign in</title>"))
            }
            // Japanese first, or the first one there are texts for.
            for japanese in ["ja", "ja-JP,en;q=0.5", "fr, ja;q=0.8, en;q=0.1", "en;q=0, ja"] {
                let page = try await signIn(japanese)
                #expect(page.contains(#"<html lang="ja">"#) && page.contains(#"<label for="identifier">メールアドレスまたはユーザー名</label>"#), "\(japanese)")
                #expect(page.contains(#"<button type="submit">サインイン</button>"#) && page.contains("<title>サインイン</title>"))
                #expect(!page.contains("Password"))
            }

            // A refused form answers in the same language: labels, hint, summary and the validation messages.
            var japaneseForm = Self.form
            japaneseForm[.acceptLanguage] = "ja-JP"
            let weak = try await server.send(.post, "/account/sign-up", headers: japaneseForm, authorized: false, body: "identifier=mio&password=aaa")
            #expect(weak.status == .badRequest && weak.text.contains(#"<html lang="ja">"#))
            #expect(weak.text.contains("<p>次の点を直してください：</p>") && weak.text.contains("<li>パスワード: 10文字以上にしてください</li>"))
            #expect(weak.text.contains("10文字以上。よく使われるパスワード") && weak.text.contains(">アカウントを作成</button>"))
            let created = try await server.send(
                .post, "/account/sign-up", headers: japaneseForm, authorized: false, body: "identifier=mio&password=correct+horse+battery")
            #expect(created.status == .seeOther)
            let taken = try await server.send(
                .post, "/account/sign-up", headers: japaneseForm, authorized: false, body: "identifier=MIO&password=correct+horse+battery")
            #expect(taken.status == .conflict && taken.text.contains("このメールアドレスまたはユーザー名のアカウントはすでにあります"))
            let wrong = try await server.send(
                .post, "/account/sign-in", headers: japaneseForm, authorized: false, body: "identifier=mio&password=nope+nope+nope")
            #expect(wrong.status == .unauthorized && wrong.text.contains("メールアドレス（ユーザー名）またはパスワードが違います。"))
            let english = try await server.send(
                .post, "/account/sign-in", headers: Self.form, authorized: false, body: "identifier=mio&password=nope+nope+nope")
            #expect(english.text.contains("The identifier or the password is wrong.") && english.text.contains(#"<html lang="en">"#))

            let cookie = try #require(created.headers[values: .setCookie].first)
            let (name, value, _) = AccountsTests.parseCookie(cookie)
            let account = try await server.send(
                .get, "/account", headers: [.cookie: "\(name)=\(value)", .acceptLanguage: "ja"], authorized: false)
            #expect(account.text.contains(#"<strong id="signed-in-as">mio</strong> でサインインしています。"#))
            #expect(account.text.contains(">サインアウト</button>") && account.text.contains(">パスワードを変更</a>"))
        }
    }

    /// The change-password and reset-password forms, whose words the test above leaves out: title, labels, hint,
    /// button and link in the reader's language, and none of the other language's.
    @Test func passwordFormsFollowAcceptLanguage() async throws {
        try await AccountsTests.withServer { server in
            let created = try await server.send(
                .post, "/account/sign-up", headers: Self.form, authorized: false, body: "identifier=mio%40example.com&password=correct+horse+battery")
            #expect(created.status == .seeOther)
            let (name, value, _) = AccountsTests.parseCookie(try #require(created.headers[values: .setCookie].first))
            let grant = try await server.send(.post, "/v1/admin/users/mio@example.com/password-reset").decode(PasswordResetGrant.self)

            // Fetches both forms under `acceptLanguage`: each must say what `change` and `reset` list, and nothing in `absent`.
            func check(_ acceptLanguage: String, language: String, change: [String], reset: [String], absent: [String]) async throws {
                let changePage = try await server.send(
                    .get, "/account/change-password", headers: [.cookie: "\(name)=\(value)", .acceptLanguage: acceptLanguage], authorized: false)
                let resetPage = try await server.send(.get, grant.url, headers: [.acceptLanguage: acceptLanguage], authorized: false)
                for (form, page, expected) in [("change password", changePage, change), ("reset password", resetPage, reset)] {
                    #expect(page.status == .ok && page.text.contains(#"<html lang="\#(language)">"#), "\(form), \(acceptLanguage)")
                    for text in expected { #expect(page.text.contains(text), "\(form), \(acceptLanguage): \(text)") }
                    for text in absent { #expect(!page.text.contains(text), "\(form), \(acceptLanguage), not: \(text)") }
                }
            }

            try await check(
                "en", language: "en",
                change: [
                    "<title>Change password</title>", #"<label for="currentPassword">Current password</label>"#,
                    #"<label for="newPassword">New password</label>"#, #"<p class="hint" id="newPassword-hint">At least 10 characters.</p>"#,
                    #"<button type="submit">Change password</button>"#, #"<a href="/account">Back to your account</a>"#,
                ],
                reset: [
                    "<title>Choose a new password</title>", #"<label for="username">Email or username</label>"#,
                    #"<label for="newPassword">New password</label>"#, #"<p class="hint" id="newPassword-hint">At least 10 characters.</p>"#,
                    #"<button type="submit">Set password</button>"#,
                ],
                absent: ["パスワード", "10文字以上"])
            try await check(
                "ja-JP,en;q=0.5", language: "ja",
                change: [
                    "<title>パスワードを変更</title>", #"<label for="currentPassword">現在のパスワード</label>"#,
                    #"<label for="newPassword">新しいパスワード</label>"#, #"<p class="hint" id="newPassword-hint">10文字以上。</p>"#,
                    #"<button type="submit">パスワードを変更</button>"#, #"<a href="/account">アカウントに戻る</a>"#,
                ],
                reset: [
                    "<title>新しいパスワードを設定</title>", #"<label for="username">メールアドレスまたはユーザー名</label>"#,
                    #"<label for="newPassword">新しいパスワード</label>"#, #"<p class="hint" id="newPassword-hint">10文字以上。</p>"#,
                    #"<button type="submit">パスワードを設定</button>"#,
                ],
                absent: ["Change password", "Current password", "New password", "At least 10", "Set password", "Back to your account"])
        }
    }

    @Test func resetPageNamesTheAccountForPasswordManagers() async throws {
        try await AccountsTests.withServer { server in
            _ = try await AccountsTests.signUp(server, "mio@example.com")
            let grant = try await server.send(.post, "/v1/admin/users/mio@example.com/password-reset").decode(PasswordResetGrant.self)

            // The form carries the account's username, read-only, beside the new password.
            let page = try await server.send(.get, grant.url, authorized: false)
            #expect(page.status == .ok)
            #expect(
                page.text.contains(
                    #"<input id="username" name="username" type="text" autocomplete="username" required value="mio@example.com" readonly"#))
            #expect(page.text.contains(#"autocomplete="new-password""#))

            // A weak password shows the form again, still with the username; the token is not spent.
            var form = Self.form
            form[.acceptLanguage] = "ja"
            let weak = try await server.send(
                .post, "/account/reset-password", headers: form, authorized: false, body: "token=\(grant.token)&username=x&newPassword=short")
            #expect(weak.status == .badRequest && weak.text.contains(#"value="mio@example.com" readonly"#))
            #expect(weak.text.contains("<li>新しいパスワード: 10文字以上にしてください</li>"))

            let done = try await server.send(
                .post, "/account/reset-password", headers: Self.form, authorized: false,
                body: "token=\(grant.token)&username=mio%40example.com&newPassword=a+brand+new+secret")
            #expect(done.status == .ok && done.text.contains("Your password has been reset."))

            // A spent or unknown token: no form to fill, the expired-link page, in the reader's language.
            let spent = try await server.send(.get, grant.url, authorized: false)
            #expect(spent.status == .unauthorized && spent.text.contains(#"data-code="session_expired""#) && !spent.text.contains("<form"))
            #expect(spent.text.contains("This password-reset link has expired or was already used"))
            let unknown = try await server.send(
                .get, "/account/reset-password?token=kzp_nothing", headers: [.acceptLanguage: "ja"], authorized: false)
            #expect(unknown.status == .unauthorized && unknown.text.contains("このパスワード再設定リンクは期限切れか、すでに使われています。"))
            let again = try await server.send(
                .post, "/account/reset-password", headers: Self.form, authorized: false, body: "token=\(grant.token)&newPassword=yet+another+secret")
            #expect(again.status == .unauthorized && again.text.contains(#"data-code="session_expired""#))
        }
    }
}
