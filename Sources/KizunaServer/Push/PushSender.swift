import Foundation
import KizunaCore
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// Sends push jobs: expands those that are due to their devices, claims due deliveries in batches (any number of
/// instances share the work; none sends a delivery another holds), sends each to APNs and records what APNs answered.
///
/// A delivery claimed by an instance that dies is claimed again once its lease runs out, so nothing is lost; a
/// device gets a duplicate only when the answer to a send was lost (the job's `apns-collapse-id` keeps the user from
/// seeing two).
final class PushSender: Service, Sendable {
    let jobs: PushJobStore
    let credentials: PushCredentialStore
    let client: APNsClient
    let settings: PushSettings
    let readiness: Readiness?
    let logger: Logger
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let watchers = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])

    init(jobs: PushJobStore, credentials: PushCredentialStore, client: APNsClient, readiness: Readiness?, logger: Logger) {
        self.jobs = jobs
        self.credentials = credentials
        self.client = client
        settings = client.settings
        self.readiness = readiness
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Looks for work now (a job was created).
    func poke() { wake.yield() }

    func run() async throws {
        if let readiness {
            let state = await cancelWhenGracefulShutdown { await readiness.settled() }
            guard state == .ready else {
                try? await gracefulShutdown()
                return
            }
        }
        // On SQLite one server runs at a time: a delivery still leased was claimed by a process that died.
        if jobs.database.engine == .sqlite { try? await jobs.releaseLeases() }
        wake.yield()  // jobs left by an earlier run
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.settings.pollInterval)
                    self.wake.yield()
                }
            }
            group.addTask {
                for await _ in self.wakes.cancelOnGracefulShutdown() {
                    do {
                        try await self.drain()
                    } catch {
                        self.logger.warning("Sending pushes failed; trying again", metadata: ["error": "\(error)"])
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
        await client.shutdown()
    }

    /// Expands due jobs, then sends due deliveries until none is left.
    func drain() async throws {
        defer { for watcher in watchers.withLock({ Array($0.values) }) { watcher.yield() } }
        while try await jobs.expandOneDue(now: settings.now()) {}
        while !Task.isShuttingDownGracefully {
            let claimed = try await jobs.claim(limit: settings.batchSize, lease: Int64(settings.lease / .milliseconds(1)), now: settings.now())
            if claimed.isEmpty { return }
            try await send(claimed)
        }
    }

    private func send(_ claimed: [PushJobStore.Claimed]) async throws {
        var credentialsByApp: [String: APNsCredentials?] = [:]
        var messages: [String: PushMessage] = [:]
        for delivery in claimed {
            if credentialsByApp[delivery.app] == nil { credentialsByApp[delivery.app] = .some(try await credentials.credentials(app: delivery.app)) }
            if messages[delivery.jobId] == nil, let status = try await jobs.status(id: delivery.jobId) { messages[delivery.jobId] = status.message }
        }
        let now = settings.now()
        // Outcomes are recorded as they come, a few dozen at a time: an instance killed mid-batch re-sends only the
        // deliveries whose answers it had not recorded.
        var outcomes: [(PushJobStore.Claimed, PushJobStore.Outcome)] = []
        var retire: [(app: String, token: String, at: Int64)] = []
        func flush() async throws {
            guard !outcomes.isEmpty else { return }
            try await jobs.record(outcomes, retire: retire, now: settings.now())
            outcomes.removeAll(keepingCapacity: true)
            retire.removeAll(keepingCapacity: true)
        }
        func collect(_ done: (PushJobStore.Claimed, PushJobStore.Outcome, Int64?)) async throws {
            outcomes.append((done.0, done.1))
            if let at = done.2 { retire.append((done.0.app, done.0.token, at)) }
            Self.count(done.1)
            if outcomes.count >= 64 { try await flush() }
        }
        // A tick every 100 ms records what has come in even while slow answers are awaited.
        enum Event: Sendable {
            case done(PushJobStore.Claimed, PushJobStore.Outcome, Int64?)
            case tick
        }
        try await withThrowingTaskGroup(of: Event.self) { group in
            var inFlight = 0
            var ticking = false
            func handle(_ event: Event) async throws {
                switch event {
                case .done(let delivery, let outcome, let retired):
                    inFlight -= 1
                    try await collect((delivery, outcome, retired))
                case .tick:
                    ticking = false
                    try await flush()
                }
                if inFlight > 0, !ticking {
                    ticking = true
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(100))
                        return .tick
                    }
                }
            }
            for delivery in claimed {
                while inFlight >= settings.concurrency, let event = try await group.next() { try await handle(event) }
                let credentials = credentialsByApp[delivery.app] ?? nil
                let message = messages[delivery.jobId]
                group.addTask {
                    let (delivery, outcome, retired) = await self.deliver(delivery, message: message, credentials: credentials, now: now)
                    return .done(delivery, outcome, retired)
                }
                inFlight += 1
            }
            while let event = try await group.next() { try await handle(event) }
        }
        try await flush()
    }

    /// Yields after each pass over the due work (tests await the sends they caused).
    func passes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        watchers.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: key) } }
        return stream
    }

    /// Sends one delivery; answers its outcome and, when APNs retired the token, when.
    private func deliver(
        _ delivery: PushJobStore.Claimed, message: PushMessage?, credentials: APNsCredentials?, now: Int64
    ) async -> (
        PushJobStore.Claimed, PushJobStore.Outcome, Int64?
    ) {
        guard delivery.registered else { return (delivery, .skipped(reason: "TokenRetired"), nil) }
        guard let message else { return (delivery, .skipped(reason: "Cancelled"), nil) }
        guard let credentials else { return (delivery, .failed(reason: "NoCredentials"), nil) }
        if let only = credentials.environment, only != delivery.environment {
            return (delivery, .skipped(reason: "EnvironmentNotConfigured"), nil)
        }
        let payload = APNsPayload(message, locale: delivery.locale)
        do {
            let outcome = try await client.send(
                payload, to: delivery.token, environment: delivery.environment, app: delivery.app, credentials: credentials)
            switch outcome {
            case .accepted(let apnsId): return (delivery, .sent(apnsId: apnsId), nil)
            case .refused(let status, let reason, let timestamp):
                return handle(delivery, status: status, reason: reason, timestamp: timestamp, now: now)
            }
        } catch {
            logger.debug("An APNs request failed; retrying", metadata: ["error": "\(error)"])
            return (delivery, backoff(delivery, reason: "ConnectionFailed", now: now), nil)
        }
    }

    /// APNs' refusal, by its reason: a dead token retired, a transient one retried with backoff, the rest failed.
    private func handle(
        _ delivery: PushJobStore.Claimed, status: Int, reason: String, timestamp: Int64?, now: Int64
    ) -> (
        PushJobStore.Claimed, PushJobStore.Outcome, Int64?
    ) {
        switch (status, reason) {
        case (410, _): (delivery, .failed(reason: reason), timestamp ?? now)
        case (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): (delivery, .failed(reason: reason), now)
        case (429, "TooManyProviderTokenUpdates"), (429, _), (500...599, _), (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"):
            (delivery, backoff(delivery, reason: reason, now: now), nil)
        default: (delivery, .failed(reason: reason), nil)
        }
    }

    /// Again after 1, 2, 4 … seconds (at most 10 minutes), with jitter; given up after ``PushSettings/maxAttempts``.
    private func backoff(_ delivery: PushJobStore.Claimed, reason: String, now: Int64) -> PushJobStore.Outcome {
        guard delivery.attempts < settings.maxAttempts else { return .failed(reason: "TooManyAttempts") }
        let base = min(Int64(1000) << Int64(max(delivery.attempts - 1, 0)), 600_000)
        return .retry(at: now + base + Int64.random(in: 0...(base / 4)), reason: reason)
    }

    private static func count(_ outcome: PushJobStore.Outcome) {
        switch outcome {
        case .sent: Counter(label: "kizuna_push_sent_total").increment()
        case .failed(let reason), .skipped(let reason): Counter(label: "kizuna_push_failures_total", dimensions: [("reason", reason)]).increment()
        case .retry(_, let reason): Counter(label: "kizuna_push_retries_total", dimensions: [("reason", reason)]).increment()
        }
    }
}
