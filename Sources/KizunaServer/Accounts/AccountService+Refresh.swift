import Foundation
import KizunaCore
import Logging

extension AccountService {
    /// Exchanges a refresh token for new tokens; the old refresh token stops working.
    ///
    /// Every refresh token a session has exchanged is remembered. One presented again means two parties hold it — a
    /// stolen copy, most likely — so the session is signed out and both must sign in again; the one exception is the
    /// token exchanged last, presented again from the session's own install within ``SessionPolicy/refreshReuseGrace``:
    /// that is a client whose answer was lost, and it gets the same new pair again, once.
    func refresh(_ request: RefreshRequest) async throws -> (AccountInfo, IssuedSession) {
        guard let secret = SessionSecret(request.refreshToken, purpose: .refresh) else { throw Self.sessionExpired }
        let now = EpochMillis.now
        let policy = sessions
        let rotation = RefreshRotation(
            presented: secret, access: SessionSecret.generate(.access), refresh: SessionSecret.generate(.refresh),
            expiresAt: now + policy.accessLifetime.milliseconds, refreshExpiresAt: now + policy.refreshLifetime.milliseconds, now: now,
            forgetRetiredBefore: now - policy.refreshLifetime.milliseconds)
        let installId = request.installId
        let outcome = try await repository.exchangeRefresh(rotation) { reused in
            Self.retryAnswer(reused, presented: secret, installId: installId, now: now, grace: policy.refreshReuseGrace)
        }
        switch outcome {
        case .rotated(let account, let issued):
            return (account, issued)
        case .retried(let account, let issued):
            logger.info("A refresh was retried within the grace period; the same tokens were sent again", metadata: ["session": "\(issued.id)"])
            return (account, issued)
        case .expired, .unknown:
            throw Self.sessionExpired
        case .disabled:
            throw Self.accountDisabled
        case .signedOut(let reused):
            logger.warning(
                "A refresh token was used after it had been exchanged; its session is signed out",
                metadata: [
                    "session": "\(reused.sessionId)", "last": "\(reused.isLast)",
                    "sameInstall": "\(reused.installId != nil && reused.installId == installId)",
                ])
            throw Self.sessionExpired
        }
    }

    /// The answer a token exchanged before gets again: the pair its last exchange sealed, when it is the token the
    /// session exchanged last, presented within `grace` from the session's own install while the account is enabled.
    /// `nil`: a copy is in other hands, and the session must end.
    static func retryAnswer(_ reused: ReusedRefresh, presented: SessionSecret, installId: String?, now: Int64, grace: Duration) -> IssuedSession? {
        guard reused.isLast, now - reused.rotatedAt <= grace.milliseconds, let sessionInstall = reused.installId, sessionInstall == installId,
            !reused.disabled, let sealed = reused.sealedAnswer
        else { return nil }
        return RefreshGrace.open(sealed, with: presented, session: reused.sessionId)
    }
}
