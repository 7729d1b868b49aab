import Foundation
import KizunaCore
import SQLKit
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// The SDK's `Auth` against a real `kizuna serve`.
@Suite("Auth against kizuna serve")
struct AuthTests {
    static let password = "correct horse battery"

    static func cheapHashing(_ configuration: inout KizunaConfiguration) {
        configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
    }

    /// An app whose secure store lives in its own directory (the Linux file backend).
    static func app(_ server: LiveServer, directory: URL) throws -> KizunaApp {
        let store = try SecureStore(service: "kizuna.shop", fileOptions: .init(directory: directory.appendingPathComponent("secure")))
        return try KizunaApp(
            server: server.url, appId: "shop", directory: directory, device: DeviceContext(appVersion: "1.0", platform: .ios), secureStore: store,
            deviceName: "Test iPhone")
    }

    @Test func theDeviceTokenOutlivesSignOutAndKeepsTheOwnerInWhenTheAddressIsLocked() async throws {
        try await LiveServer.run(
            configure: {
                Self.cheapHashing(&$0)
                $0.signInThrottle = SignInThrottlePolicy(accountAllowance: 2, addressAllowance: 2)
            }
        ) { server in
            try await server.createShop()
            let directory = LiveServer.temporaryDirectory()
            let app = try Self.app(server, directory: directory)
            try await app.auth.signUp(identifier: "Mio@Example.com", password: Self.password)
            try await app.auth.signOut()
            // Guesses from this address (someone else on the same network) lock it for everyone else…
            let stranger = try Self.app(server, directory: LiveServer.temporaryDirectory())
            for _ in 0..<3 { _ = try? await stranger.auth.signIn(identifier: "aki", password: "guess guess guess") }
            await #expect { try await stranger.auth.signIn(identifier: "mio@example.com", password: Self.password) } throws: {
                ($0 as? KizunaError)?.code == .throttled
            }
            // …but this device kept its token through sign-out (stored apart from the session, never in plain text).
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("secure").path)
            for file in files {
                let bytes = try Data(contentsOf: directory.appendingPathComponent("secure").appendingPathComponent(file))
                #expect(!String(decoding: bytes, as: UTF8.self).contains("kzd_"))
            }
            let account = try await app.auth.signIn(identifier: "mio@example.com", password: Self.password)
            #expect(account.identifier == "mio@example.com")
            let tokens = try await server.parts.database.raw("SELECT COUNT(*) AS n FROM trusted_devices").first()?.decode(column: "n", as: Int.self)
            #expect(tokens == 1)  // the sign-in presented the token from sign-up instead of getting another
        }
    }

    @Test func signUpKeepsTheSessionAcrossLaunchesAndAttachesIt() async throws {
        try await LiveServer.run(configure: Self.cheapHashing) { server in
            try await server.createShop()
            let directory = LiveServer.temporaryDirectory()
            let app = try Self.app(server, directory: directory)
            #expect(await app.auth.isSignedIn == false)
            let account = try await app.auth.signUp(identifier: "Mio@Example.com", password: Self.password)
            #expect(account.identifier == "mio@example.com")

            // Every SDK request carries the session: /v1/me answers through the app's own client.
            let me: AccountInfo = try await app.http.send("GET", "/v1/me")
            #expect(me == account)

            // The session is in the secure store, encrypted: no token in plain text on disk.
            let token = try await app.auth.accessToken()
            let files = try FileManager.default.subpathsOfDirectory(atPath: directory.appendingPathComponent("secure").path)
            for file in files {
                let data = (try? Data(contentsOf: directory.appendingPathComponent("secure").appendingPathComponent(file))) ?? Data()
                #expect(data.range(of: Data(token.utf8)) == nil)
            }

            // A relaunch is still signed in, and the session lists this install under its name.
            let relaunched = try Self.app(server, directory: directory)
            #expect(await relaunched.auth.account == account)
            let sessions = try await relaunched.auth.sessions()
            #expect(sessions.count == 1 && sessions[0].current && sessions[0].name == "Test iPhone" && sessions[0].installId == app.device.installId)

            // The handoff code opens a web view signed in.
            let handoff = try await relaunched.auth.handoff(next: "/account")
            // Absolute, though the server has no public URL: it goes straight into a WKWebView.
            #expect(handoff.code.hasPrefix("kzh_") && handoff.url == server.url.absoluteString + "/v1/session/handoff?code=\(handoff.code)")

            try await relaunched.auth.signOut()
            #expect(await relaunched.auth.isSignedIn == false)
            await #expect(throws: KizunaError.self) {
                let _: AccountInfo = try await KizunaHTTPClient(baseURL: server.url, token: token).send("GET", "/v1/me")
            }
        }
    }

    @Test func everyServerErrorArrivesTyped() async throws {
        try await LiveServer.run(
            configure: {
                Self.cheapHashing(&$0)
                $0.signInThrottle = SignInThrottlePolicy(accountAllowance: 2)
            }
        ) { server in
            try await server.createShop()
            let app = try Self.app(server, directory: LiveServer.temporaryDirectory())
            await #expect { try await app.auth.signUp(identifier: "x", password: "aaaa") } throws: { error in
                let error = error as? KizunaError
                return error?.code == .validationFailed
                    && error?.details.map(\.code) == ["bad_username", "password_too_short", "password_repetitive"]
            }
            // The same rules run in the app before anything is sent.
            var report = ValidationReport()
            report.check(PasswordCandidate(password: "aaaa", identifier: "x"), with: AccountValidation.password)
            #expect(report.problems.map(\.code) == ["password_too_short", "password_repetitive"])

            try await app.auth.signUp(identifier: "mio", password: Self.password)
            await #expect { try await app.auth.signUp(identifier: "MIO", password: Self.password) } throws: {
                ($0 as? KizunaError)?.code == .conflict
            }

            // Disabled by an operator: every session ends, so the next call finds it over and forgets it; signing in
            // again says why.
            _ = try await server.admin.setUserDisabled("mio", true)
            await #expect { try await app.auth.currentAccount() } throws: { ($0 as? KizunaError)?.code == .sessionExpired }
            #expect(await app.auth.isSignedIn == false)
            await #expect { try await app.auth.accessToken() } throws: { ($0 as? KizunaError)?.code == .unauthorized }
            await #expect { try await app.auth.signIn(identifier: "mio", password: Self.password) } throws: {
                ($0 as? KizunaError)?.code == .accountDisabled
            }
            _ = try await server.admin.setUserDisabled("mio", false)

            for _ in 0..<2 {
                await #expect { try await app.auth.signIn(identifier: "mio", password: "wrong wrong wrong") } throws: {
                    ($0 as? KizunaError)?.code == .invalidCredentials
                }
            }
            await #expect { try await app.auth.signIn(identifier: "mio", password: Self.password) } throws: {
                let error = $0 as? KizunaError
                return error?.code == .throttled && (error?.retryAfter ?? 0) > 0
            }
        }
    }

    @Test func refreshesBeforeExpiryOnceForConcurrentCallers() async throws {
        // Access tokens live 30 s, inside the SDK's 60 s margin: every use needs a refresh.
        try await LiveServer.run(
            configure: {
                Self.cheapHashing(&$0)
                $0.sessions = SessionPolicy(accessLifetime: .seconds(30))
            }
        ) { server in
            try await server.createShop()
            let app = try Self.app(server, directory: LiveServer.temporaryDirectory())
            try await app.auth.signUp(identifier: "mio", password: Self.password)
            let first = try await app.auth.accessToken()
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { try await app.auth.accessToken() } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            // Each wave of concurrent callers shares one refresh; a refresh token used twice would have ended the session.
            #expect(!tokens.contains(first))
            #expect(try await app.auth.currentAccount().identifier == "mio")
            #expect(try await app.auth.sessions().count == 1)
        }
    }

    @Test func anExpiredSessionIsForgotten() async throws {
        try await LiveServer.run(configure: Self.cheapHashing) { server in
            try await server.createShop()
            let app = try Self.app(server, directory: LiveServer.temporaryDirectory())
            try await app.auth.signUp(identifier: "mio", password: Self.password)
            try await server.parts.database.raw("UPDATE sessions SET expires_at = 0, refresh_expires_at = 0").run()
            await #expect { try await app.auth.sessions() } throws: { ($0 as? KizunaError)?.code == .sessionExpired }
            #expect(await app.auth.isSignedIn == false)
        }
    }
}
