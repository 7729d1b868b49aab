import Foundation
import KizunaCore

/// The update gate on the device: whether this version may run, should update, or must wait out maintenance.
///
/// Call ``check()`` at launch and whenever the app becomes active, and present what it says when
/// ``Check/shouldPresent`` is true:
/// - Both usually fire together at launch (the first screen loads, the app becomes active): concurrent checks
///   share one request, and only one of them is told to present.
/// - `require` and `maintenance` are presented once per decision while the app stays in the foreground; after the
///   app has been in the background (``appDidEnterBackground()``, called for you on iOS) the next check presents
///   again, and so does a different decision. They are kept on disk and stay in force until a later check clears
///   them, so ``current`` blocks the app at the next launch even before the network answers.
/// - `recommend` is presented at most once per nag interval, counted across launches.
/// - Offline (or throttled, or with the server failing) the gate decides from the last policy it received, with
///   the same decision function the server uses, so a scheduled maintenance window or OS deadline still begins
///   and ends on time. Given ``GateMirrorSettings``, it first reads a signed static copy of the policy from a host
///   that is not the server, so a maintenance published before the server went down still reaches a device that
///   never saw it.
public final class UpdateGate: Sendable {
    /// Where a decision came from.
    public enum Source: String, Sendable, Hashable, Codable {
        /// The server decided just now.
        case server
        /// The server could not be asked; a signed gate mirror's policy decided (see ``GateMirrorSettings``).
        case mirror
        /// The server could not be asked; the last policy it sent decided.
        case cachedPolicy
        /// The server could not be asked and no policy was ever received.
        case noPolicy
    }

    /// The answer of ``check()``.
    public struct Check: Sendable, Hashable {
        /// The decision.
        public var decision: UpdateDecision
        /// Where it came from.
        public var source: Source
        /// Whether to present it now: for `require` and `maintenance` unless this decision was already presented
        /// since the app came to the foreground, for `recommend` when the nag interval has passed since it was
        /// last presented, never for `none`; of concurrent checks, only one is told to present.
        public var shouldPresent: Bool
        /// Why a gate mirror was refused when the server could not be asked — unreachable, altered, or signed by a
        /// key the app does not trust; the decision then came from the policy held. `nil` otherwise.
        public var mirrorProblem: KizunaError?
    }

    struct Stored: Codable, Sendable {
        var policy: JSONValue?
        var policyVersion: Int64 = 0
        var storeURL: String?
        var decision: UpdateDecision?
        var lastRecommendedAt: Date?
    }

    /// This launch's presentation state, kept in memory only: a relaunch presents a blocking decision again.
    struct Session {
        /// The check under way, which concurrent callers join.
        var flight: (id: Int, task: Task<Check, any Error>)?
        var lastFlight = 0
        /// The flight whose answer a caller has already been told to present.
        var claimedFlight: Int?
        /// The blocking decision presented since the app came to the foreground, with its policy version zeroed.
        var presented: UpdateDecision?
    }

    let app: KizunaApp
    let mirror: GateMirrorSettings?
    let now: @Sendable () -> Date
    let state: PersistedState<Stored>
    let session: Locked<Session>
    private let backgroundObserver: Locked<(any NSObjectProtocol)?>

    /// UIKit's `UIApplication.didEnterBackgroundNotification`, by name, so the SDK builds without UIKit.
    static let didEnterBackground = Notification.Name("UIApplicationDidEnterBackgroundNotification")

    static let file = "update-gate.json"
    static let format = 1

    /// Creates the gate, loading the last decision and policy from the app's directory.
    /// - Parameters:
    ///   - app: The app's connection.
    ///   - mirror: Signed static copies of the policy to read when the server cannot be asked.
    ///   - now: The clock (for tests).
    public init(app: KizunaApp, mirror: GateMirrorSettings? = nil, now: @escaping @Sendable () -> Date = Date.init) {
        self.app = app
        self.mirror = mirror
        self.now = now
        state = PersistedState(files: app.files, name: Self.file, format: Self.format, initial: Stored())
        let session = Locked(Session())
        self.session = session
        backgroundObserver = Locked(
            NotificationCenter.default.addObserver(forName: Self.didEnterBackground, object: nil, queue: nil) { _ in
                session.withLock { $0.presented = nil }
            })
    }

    deinit {
        if let observer = backgroundObserver.withLock({ $0 }) { NotificationCenter.default.removeObserver(observer) }
    }

    /// Forgets which blocking decision was presented, so the next ``check()`` presents it again: call it when the
    /// app goes to the background. On iOS the gate does so itself, on UIKit's did-enter-background notification.
    public func appDidEnterBackground() {
        session.withLock { $0.presented = nil }
    }

    /// The last decision, kept across launches: block the app at launch while it is `require` or `maintenance`.
    public var current: UpdateDecision? { state.withLock { $0.decision } }

    /// Asks the server for the decision, or decides from the last policy when the server cannot be asked.
    /// - Throws: Only errors a retry cannot fix: `not_found` (wrong app id), `validation_failed` (the device
    ///   context's versions do not parse), `unauthorized`, `forbidden`, `bad_request`.
    public func check() async throws(KizunaError) -> Check {
        let session = session
        let (id, task) = session.withLock { flights in
            if let flight = flights.flight { return flight }
            flights.lastFlight += 1
            let id = flights.lastFlight
            let task = Task { [self] () async throws -> Check in
                defer { session.withLock { if $0.flight?.id == id { $0.flight = nil } } }
                return try await ask(knownVersion: nil)
            }
            flights.flight = (id, task)
            return (id, task)
        }
        do {
            return claim(try await task.value, flight: id)
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.internalError, "The update gate check failed: \(error)")
        }
    }

    /// A check of its own (not shared), for ``updates()``, which knows a newer version than the cache.
    func check(knownVersion: Int64) async throws(KizunaError) -> Check {
        let id = session.withLock {
            $0.lastFlight += 1
            return $0.lastFlight
        }
        return claim(try await ask(knownVersion: knownVersion), flight: id)
    }

    /// Tells one caller per flight to present, and a blocking decision only once while the app is in front.
    private func claim(_ answer: Check, flight: Int) -> Check {
        var check = answer
        // The same prompt under a new policy version is the same decision.
        var key = answer.decision
        key.policyVersion = 0
        check.shouldPresent = session.withLock { session in
            guard answer.shouldPresent, session.claimedFlight != flight else { return false }
            if answer.decision.isBlocking {
                guard session.presented != key else { return false }
                session.presented = key
            }
            session.claimedFlight = flight
            return true
        }
        if !answer.decision.isBlocking { session.withLock { $0.presented = nil } }
        return check
    }

    /// Asks the server, or decides offline; says whether the decision may be presented (the nag interval).
    private func ask(knownVersion: Int64?) async throws(KizunaError) -> Check {
        let cachedVersion = state.withLock { $0.policyVersion }
        let known = [knownVersion, cachedVersion > 0 ? cachedVersion : nil].compactMap { $0 }.max()
        do {
            let reply = try await app.http.exchange(
                "POST", app.path + "/gate:check", body: DeviceRequest(device: app.device, knownVersion: known))
            let answer = try reply.decode(GateCheck.self, what: "gate:check")
            state.withLock {
                $0.policy = answer.policy
                $0.policyVersion = answer.decision.policyVersion
                $0.storeURL = answer.storeURL
            }
            return try record(answer.decision, source: .server)
        } catch  where Self.canFallBack(error) {
            let mirrors = await consultMirrors()
            let (decision, source) = try offlineDecision()
            var check = try record(decision, source: mirrors.adopted ? .mirror : source)
            check.mirrorProblem = mirrors.problem
            return check
        }
    }

    /// Decides from the cached policy; without one, keeps a blocking decision in force and otherwise lets the
    /// app run.
    private func offlineDecision() throws(KizunaError) -> (UpdateDecision, Source) {
        let (source, version, storeURL, last) = state.withLock { ($0.policy, $0.policyVersion, $0.storeURL, $0.decision) }
        if let source, let policy = try? GatePolicy(parsing: source) {
            let context = try EvaluationContext(device: app.device, appId: app.appId, now: now())
            return (policy.decide(context, policyVersion: version, storeURL: storeURL), .cachedPolicy)
        }
        if let last, last.isBlocking { return (last, .noPolicy) }
        return (UpdateDecision(action: .none, reason: .upToDate, policyVersion: 0), .noPolicy)
    }

    /// Stores the decision and works out whether it may be presented.
    private func record(_ decision: UpdateDecision, source: Source) throws(KizunaError) -> Check {
        let now = now()
        let present = state.withLock { stored -> Bool in
            stored.decision = decision
            switch decision.action {
            case .none: return false
            case .require, .maintenance: return true
            case .recommend:
                let interval = TimeInterval(decision.nagInterval ?? GatePolicy.defaultNagInterval)
                if let last = stored.lastRecommendedAt, now.timeIntervalSince(last) < interval { return false }
                stored.lastRecommendedAt = now
                return true
            }
        }
        try state.persist()
        return Check(decision: decision, source: source, shouldPresent: present, mirrorProblem: nil)
    }

    /// Errors after which the cached policy decides: the server is unreachable, slow, throttling or failing.
    static func canFallBack(_ error: KizunaError) -> Bool {
        [.transport, .timeout, .throttled, .rateLimited, .unavailable, .storeUnavailable, .internalError].contains(error.code)
    }
}

extension UpdateGate {
    /// A fresh ``Check`` each time a new gate policy is published, for as long as this is iterated — so a
    /// `require` or `maintenance` can be presented the moment it is published, not at the next launch.
    public func updates() -> UpdateGateUpdates {
        UpdateGateUpdates(gate: self)
    }
}

/// The sequence behind ``UpdateGate/updates()``.
public struct UpdateGateUpdates: AsyncSequence, Sendable {
    public typealias Element = UpdateGate.Check

    let gate: UpdateGate

    public func makeAsyncIterator() -> Iterator {
        Iterator(gate: gate, events: gate.app.events().makeAsyncIterator())
    }

    /// Iterates ``UpdateGateUpdates``.
    public struct Iterator: AsyncIteratorProtocol {
        let gate: UpdateGate
        var events: AppEvents.Iterator

        public mutating func next() async throws -> UpdateGate.Check? {
            while let event = try await events.next() {
                let version: Int64
                switch event {
                case .snapshot(_, let gate): version = gate
                case .gate(let published): version = published
                case .config: continue
                }
                guard version > gate.state.withLock({ $0.policyVersion }) else { continue }
                return try await gate.check(knownVersion: version)
            }
            return nil
        }
    }
}
