import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The account pages over HTTP (the browser run is in kizunaTests' ChromiumTests).
@Suite("Website account pages")
struct WebPagesTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    @Test func pagesCarryTheAutofillAttributes() async throws {
        try await AccountsTests.withServer { server in
            let signIn = try await server.send(.get, "/account/sign-in", authorized: false)
            #expect(signIn.status == .ok && signIn.headers[.contentType] == "text/html; charset=utf-8")
            #expect(signIn.text.contains(#"autocomplete="username""#) && signIn.text.contains(#"autocomplete="current-password""#))
            #expect(signIn.text.contains(#"<label for="identifier">"#) && signIn.text.contains(#"<html lang="en">"#))
            let signUp = try await server.send(.get, "/account/sign-up", authorized: false)
            #expect(signUp.text.contains(#"autocomplete="new-password""#) && signUp.text.contains(#"autocomplete="username""#))

            let wellKnown = try await server.send(.get, "/.well-known/change-password", authorized: false)
            #expect(wellKnown.status == .found && wellKnown.headers[.location] == "/account/change-password")
            let signedOut = try await server.send(.get, "/account/change-password", authorized: false)
            #expect(signedOut.status == .seeOther && signedOut.headers[.location] == "/account/sign-in?next=/account/change-password")
        }
    }

    @Test func formsSignUpSignInChangePasswordAndSignOut() async throws {
        try await AccountsTests.withServer { server in
            let weak = try await server.send(
                .post, "/account/sign-up", json: nil, headers: Self.form, authorized: false, body: "identifier=mio&password=aaa")
            #expect(weak.status == .badRequest && weak.text.contains(#"aria-invalid="true""#) && weak.text.contains(#"role="alert""#))
            #expect(weak.text.contains("at least 10 characters") && weak.text.contains(#"value="mio""#))

            let created = try await server.send(
                .post, "/account/sign-up", headers: Self.form, authorized: false, body: "identifier=mio&password=correct+horse+battery")
            #expect(created.status == .seeOther && created.headers[.location] == "/account")
            let cookie = try #require(created.headers[values: .setCookie].first)
            let (name, value, attributes) = AccountsTests.parseCookie(cookie)
            // The test server listens on loopback, so the development cookie applies: no Secure, no __Host- prefix.
            #expect(name == "kizuna_session" && attributes["secure"] == nil && attributes["httponly"] == "" && attributes["samesite"] == "Lax")
            let session: HTTPFields = [.cookie: "\(name)=\(value)"]

            let account = try await server.send(.get, "/account", headers: session, authorized: false)
            #expect(account.text.contains(#"<strong id="signed-in-as">mio</strong>"#))

            // A cross-site form post is refused, even with the cookie.
            var crossSite = session
            crossSite[.origin] = "https://evil.example"
            crossSite[.contentType] = "application/x-www-form-urlencoded"
            let forged = try await server.send(
                .post, "/account/change-password", headers: crossSite, authorized: false,
                body: "currentPassword=correct+horse+battery&newPassword=owned+by+someone+else")
            #expect(forged.status == .forbidden)

            var sameSite = session
            sameSite[.contentType] = "application/x-www-form-urlencoded"
            let changed = try await server.send(
                .post, "/account/change-password", headers: sameSite, authorized: false,
                body: "currentPassword=correct+horse+battery&newPassword=a+fresh+passphrase")
            #expect(changed.status == .ok && changed.text.contains("Your password has been changed"))

            let wrong = try await server.send(
                .post, "/account/sign-in", headers: Self.form, authorized: false, body: "identifier=mio&password=nope+nope+nope")
            #expect(wrong.status == .unauthorized && wrong.text.contains("The identifier or the password is wrong."))
            let signedIn = try await server.send(
                .post, "/account/sign-in", headers: Self.form, authorized: false,
                body: "identifier=MIO&password=a+fresh+passphrase&next=%2Faccount%2Fchange-password")
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/account/change-password")
            let offsite = try await server.send(
                .post, "/account/sign-in", headers: Self.form, authorized: false,
                body: "identifier=mio&password=a+fresh+passphrase&next=%2F%2Fevil.example")
            #expect(offsite.headers[.location] == "/account")

            let out = try await server.send(.post, "/account/sign-out", headers: sameSite, authorized: false)
            #expect(out.status == .seeOther && out.headers[values: .setCookie].first?.contains("Max-Age=0") == true)
            #expect(try await server.send(.get, "/v1/me", headers: session, authorized: false).status == .unauthorized)
        }
    }
}
