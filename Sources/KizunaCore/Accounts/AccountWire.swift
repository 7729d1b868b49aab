import Foundation

// The accounts API's bodies, shared by the server, the SDK and the CLI.

/// The install a session is created from, so it shows up among the account's devices and can be removed with it.
public struct DeviceRegistration: Sendable, Hashable, Codable {
    /// The app the SDK belongs to.
    public var appId: String
    /// The SDK's install id.
    public var installId: String
    /// A label for the account's session list ("iPhone", "Mio's iPad"), at most 100 characters.
    public var name: String?

    public init(appId: String, installId: String, name: String? = nil) {
        self.appId = appId
        self.installId = installId
        self.name = name
    }
}

/// `POST /v1/auth/sign-up` and `POST /v1/auth/sign-in`.
public struct Credentials: Sendable, Hashable, Codable {
    /// An email address or a username; compared after ``AccountIdentifier`` normalisation.
    public var identifier: String
    public var password: String
    public var device: DeviceRegistration?
    /// The ``SessionGrant/trustToken`` an earlier sign-in of this account on this device returned: sign-ins that
    /// carry it are throttled on their own, so guesses from a shared address or at the identifier from elsewhere
    /// cannot lock the account's owner out (OWASP's device cookies).
    public var trustToken: String?

    public init(identifier: String, password: String, device: DeviceRegistration? = nil, trustToken: String? = nil) {
        self.identifier = identifier
        self.password = password
        self.device = device
        self.trustToken = trustToken
    }
}

/// An account as its owner sees it.
public struct AccountInfo: Sendable, Hashable, Codable {
    public var id: String
    /// The identifier, normalised.
    public var identifier: String
    public var createdAt: Date

    public init(id: String, identifier: String, createdAt: Date) {
        self.id = id
        self.identifier = identifier
        self.createdAt = createdAt
    }
}

/// The secrets of a session, returned once when it is created or refreshed; the server keeps only their hashes.
public struct SessionTokens: Sendable, Hashable, Codable {
    /// The session's id (not a secret): name it to sign that session out.
    public var sessionId: String
    /// Sent as `Authorization: Bearer <accessToken>`.
    public var accessToken: String
    public var expiresAt: Date
    /// Exchanged at `POST /v1/auth/refresh` for new tokens; each refresh token works once.
    public var refreshToken: String
    public var refreshExpiresAt: Date

    public init(sessionId: String, accessToken: String, expiresAt: Date, refreshToken: String, refreshExpiresAt: Date) {
        self.sessionId = sessionId
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.refreshExpiresAt = refreshExpiresAt
    }
}

/// The answer of sign-up, sign-in and refresh.
public struct SessionGrant: Sendable, Hashable, Codable {
    public var account: AccountInfo
    public var session: SessionTokens
    /// A device token (`kzd_…`) for this account on this device, when the sign-in did not present a valid one: keep
    /// it past sign-out (the SDK keeps it in its secure store) and send it as ``Credentials/trustToken``.
    public var trustToken: String?

    public init(account: AccountInfo, session: SessionTokens, trustToken: String? = nil) {
        self.account = account
        self.session = session
        self.trustToken = trustToken
    }
}

/// `POST /v1/auth/refresh`.
///
/// `installId` names the install asking. A retry of a refresh whose answer was lost (a phone on a train) presents the
/// token that was just exchanged; from the same install within the server's grace period it gets the same new pair
/// back instead of being treated as a stolen copy.
public struct RefreshRequest: Sendable, Hashable, Codable {
    public var refreshToken: String
    public var installId: String?
    public init(refreshToken: String, installId: String? = nil) {
        self.refreshToken = refreshToken
        self.installId = installId
    }
}

/// `POST /v1/auth/sign-out`: this session, or with `everywhere` every session of the account.
public struct SignOutRequest: Sendable, Hashable, Codable {
    public var everywhere: Bool
    public init(everywhere: Bool = false) { self.everywhere = everywhere }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        everywhere = try container.decodeIfPresent(Bool.self, forKey: .everywhere) ?? false
    }
}

/// `POST /v1/me/password`. Other sessions are signed out; the calling one stays.
public struct ChangePasswordRequest: Sendable, Hashable, Codable {
    public var currentPassword: String
    public var newPassword: String

    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// `DELETE /v1/me`: the password again, so a borrowed unlocked phone cannot delete the account.
public struct DeleteAccountRequest: Sendable, Hashable, Codable {
    public var password: String
    public init(password: String) { self.password = password }
}

/// `POST /v1/auth/reset-password`: a reset token from an operator, and the new password.
public struct ResetPasswordRequest: Sendable, Hashable, Codable {
    public var token: String
    public var newPassword: String

    public init(token: String, newPassword: String) {
        self.token = token
        self.newPassword = newPassword
    }
}

/// A one-time code that gives a web view the app's account as a cookie session.
public struct HandoffCode: Sendable, Hashable, Codable {
    public var code: String
    public var expiresAt: Date
    /// Where to open the web view: `/v1/session/handoff?code=…`. The server answers an absolute URL when it knows its
    /// public URL (`--public-url`) and a path otherwise; the SDK's `Auth.handoff(next:)` always hands the app an
    /// absolute URL, resolved against the server it talks to.
    public var url: String

    public init(code: String, expiresAt: Date, url: String) {
        self.code = code
        self.expiresAt = expiresAt
        self.url = url
    }
}

/// `POST /v1/me/handoff`: the same-origin path the web view lands on (default `/account`).
public struct HandoffRequest: Sendable, Hashable, Codable {
    public var next: String?
    public init(next: String? = nil) { self.next = next }
}

/// One session of an account.
public struct SessionInfo: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Bearer tokens with a refresh token.
        case app
        /// A browser's cookie.
        case web
    }

    public var id: String
    public var kind: Kind
    public var appId: String?
    public var installId: String?
    public var name: String?
    public var createdAt: Date
    public var lastUsedAt: Date
    /// When the session ends unless refreshed (for app sessions: when its refresh token expires).
    public var expiresAt: Date
    /// Whether this is the session making the request.
    public var current: Bool

    public init(
        id: String, kind: Kind, appId: String?, installId: String?, name: String?, createdAt: Date, lastUsedAt: Date, expiresAt: Date,
        current: Bool
    ) {
        self.id = id
        self.kind = kind
        self.appId = appId
        self.installId = installId
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.current = current
    }
}

/// `GET /v1/me/sessions`.
public struct SessionList: Sendable, Hashable, Codable {
    public var sessions: [SessionInfo]
    public init(sessions: [SessionInfo]) { self.sessions = sessions }
}

/// An install an account signed in from.
public struct AccountDevice: Sendable, Hashable, Codable {
    public var appId: String
    public var installId: String
    public var name: String?
    public var createdAt: Date
    public var lastSeenAt: Date

    public init(appId: String, installId: String, name: String?, createdAt: Date, lastSeenAt: Date) {
        self.appId = appId
        self.installId = installId
        self.name = name
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
    }
}

/// An account as an operator sees it (`/v1/admin/users`). Never carries the password hash.
public struct UserRecord: Sendable, Hashable, Codable {
    public var id: String
    public var identifier: String
    public var kind: AccountIdentifier.Kind
    public var disabled: Bool
    public var createdAt: Date
    public var updatedAt: Date
    public var passwordChangedAt: Date
    public var lastSignInAt: Date?
    /// Sessions that have not expired.
    public var activeSessions: Int
    public var devices: [AccountDevice]

    public init(
        id: String, identifier: String, kind: AccountIdentifier.Kind, disabled: Bool, createdAt: Date, updatedAt: Date, passwordChangedAt: Date,
        lastSignInAt: Date?, activeSessions: Int, devices: [AccountDevice]
    ) {
        self.id = id
        self.identifier = identifier
        self.kind = kind
        self.disabled = disabled
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.passwordChangedAt = passwordChangedAt
        self.lastSignInAt = lastSignInAt
        self.activeSessions = activeSessions
        self.devices = devices
    }
}

/// A page of `GET /v1/admin/users`, ordered by identifier; pass `next` as `after` for the following page.
public struct UserList: Sendable, Hashable, Codable {
    public var users: [UserRecord]
    public var next: String?

    public init(users: [UserRecord], next: String?) {
        self.users = users
        self.next = next
    }
}

/// `PATCH /v1/admin/users/{user}`. Disabling signs every session out.
public struct UserPatch: Sendable, Hashable, Codable {
    public var disabled: Bool?
    public init(disabled: Bool? = nil) { self.disabled = disabled }
}

/// `POST /v1/admin/users/{user}/password-reset`: a single-use token to hand to the account's owner (Kizuna sends no
/// mail).
public struct PasswordResetGrant: Sendable, Hashable, Codable {
    public var token: String
    public var expiresAt: Date
    /// The reset page with the token filled in, absolute when the server knows its public URL.
    public var url: String

    public init(token: String, expiresAt: Date, url: String) {
        self.token = token
        self.expiresAt = expiresAt
        self.url = url
    }
}

extension KizunaError.Code {
    /// The identifier or password is wrong (401). Deliberately does not say which.
    public static let invalidCredentials: Self = "invalid_credentials"
    /// The session token is unknown, expired or signed out (401); sign in again, or refresh an app session.
    public static let sessionExpired: Self = "session_expired"
    /// An operator disabled the account (403).
    public static let accountDisabled: Self = "account_disabled"
}
