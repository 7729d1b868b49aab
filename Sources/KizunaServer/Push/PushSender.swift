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
    var settings: PushSettings { client.settings }
    let readiness: Readiness?
    let logger: Logger
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let watchers = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])

    init(jobs: PushJobStore, credentials: PushCredentialStore, client: APNsClient, readiness: Readiness?, logger: Logger) {
        self.jobs = jobs
        self.credentials = credentials
        self.client = client
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
                    // Abandoned (cancelled) at shutdown rather than awaited: see untilGracefulShutdown. A claimed
                    // delivery left unanswered is sent again once its lease runs out.
                    let failure = await untilGracefulShutdown { () -> (any Error)? in
                        do {
                            try await self.drain()
                            return nil
                        } catch {
                            return error
                        }
                    }
                    if case .some(.some(let error)) = failure {
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
        try await jobs.finish(try await jobs.stranded(), now: settings.now())
        while !Task.isShuttingDownGracefully {
            let started = ContinuousClock.now
            let claimed = try await jobs.claim(limit: settings.batchSize, lease: Int64(settings.lease / .milliseconds(1)), now: settings.now())
            if claimed.isEmpty { return }
            let sending = ContinuousClock.now
            try await send(claimed)
            logger.debug(
                "Sent a batch of pushes",
                metadata: ["count": "\(claimed.count)", "claim": "\(sending - started)", "send": "\(ContinuousClock.now - sending)"])
        }
    }

    private func send(_ claimed: [PushJobStore.Claimed]) async throws {
        var credentialsByApp: [String: APNsCredentials?] = [:]
        var messages: [String: PushMessage] = [:]
        for delivery in claimed {
            if credentialsByApp[delivery.app] == nil { credentialsByApp[delivery.app] = .some(try await credentials.credentials(app: delivery.app)) }
            if messages[delivery.jobId] == nil, let message = try await jobs.message(job: delivery.jobId) { messages[delivery.jobId] = message }
        }
        let now = settings.now()
        // Outcomes are recorded as they come, a few hundred at a time: an instance killed mid-batch re-sends only the
        // deliveries whose answers it had not recorded.
        var outcomes: [(PushJobStore.Claimed, PushJobStore.Outcome)] = []
        var payloads: [String: APNsPayload] = [:]
        var retire: [(app: String, token: String, at: Int64)] = []
        // Recorded in the background, one write after another, while sending goes on.
        var recording: Task<Void, any Error>?
        var sentCount = 0
        func flush() {
            guard !outcomes.isEmpty else { return }
            Self.sent.increment(by: Int64(sentCount))  // counted by the batch: one update, not one per notification
            sentCount = 0
            let (batch, retired, previous, jobs, now) = (outcomes, retire, recording, jobs, settings.now)
            outcomes.removeAll(keepingCapacity: true)
            retire.removeAll(keepingCapacity: true)
            recording = Task {
                try await previous?.value
                try await jobs.record(batch, retire: retired, now: now())
            }
        }
        func collect(_ done: (PushJobStore.Claimed, PushJobStore.Outcome, Int64?)) {
            outcomes.append((done.0, done.1))
            if let at = done.2 { retire.append((done.0.app, done.0.token, at)) }
            if case .sent = done.1 { sentCount += 1 } else { Self.count(done.1) }
            if outcomes.count >= 256 { flush() }
        }
        // Answers come as events, one per notification, and a tick every 100 ms records what has come in even while
        // slow answers are awaited.
        // Answers pile up here as they come (on the connections' event loops); the loop below is woken once for
        // however many arrived meanwhile, and every 100 ms besides, to record what came in while slow answers wait.
        let arrived = Mutex<[(PushJobStore.Claimed, Result<APNsOutcome, any Error>)]>([])
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                wake.yield()
            }
        }
        defer { ticker.cancel() }
        var iterator = wakes.makeAsyncIterator()
        var inFlight = 0
        func take() {
            for (delivery, answer) in arrived.withLock({ arrived in
                defer { arrived.removeAll(keepingCapacity: true) }; return arrived
            }) {
                inFlight -= 1
                switch answer {
                case .success(.accepted(let apnsId)): collect((delivery, .sent(apnsId: apnsId), nil))
                case .success(.refused(let status, let reason, let timestamp)):
                    collect(self.handle(delivery, status: status, reason: reason, timestamp: timestamp, now: now))
                case .failure(let error):
                    logger.debug("An APNs request failed; retrying", metadata: ["error": "\(error)"])
                    collect((delivery, backoff(delivery, reason: "ConnectionFailed", now: now), nil))
                }
            }
        }
        var flushed = ContinuousClock.now
        func waitForAnswers() async {
            if await iterator.next() != nil { take() }
            if ContinuousClock.now - flushed >= .milliseconds(100) {
                flush()
                flushed = ContinuousClock.now
            }
        }
        // Sent 64 at a time per app and environment, each group in one turn of the connection's event loop.
        let groups = Dictionary(grouping: claimed) { "\($0.app)/\($0.environment.rawValue)" }.values
        for chunk in groups.flatMap({ $0.chunked(by: 64) }) {
            while inFlight >= settings.concurrency { await waitForAnswers() }
            let first = chunk[chunk.startIndex]
            let credentials = credentialsByApp[first.app] ?? nil
            var sending: [(delivery: PushJobStore.Claimed, payload: APNsPayload)] = []
            for delivery in chunk {
                // Built once per job and language, not once per device.
                let key = "\(delivery.jobId)\u{0}\(delivery.locale ?? "")"
                if payloads[key] == nil, let message = messages[delivery.jobId] { payloads[key] = APNsPayload(message, locale: delivery.locale) }
                if !delivery.registered {
                    collect((delivery, .skipped(reason: "TokenRetired"), nil))
                } else if payloads[key] == nil {
                    collect((delivery, .skipped(reason: "Cancelled"), nil))
                } else if credentials == nil {
                    collect((delivery, .failed(reason: "NoCredentials"), nil))
                } else if let only = credentials?.environment, only != delivery.environment {
                    collect((delivery, .skipped(reason: "EnvironmentNotConfigured"), nil))
                } else if let payload = payloads[key] {
                    sending.append((delivery, payload))
                }
            }
            guard let credentials, !sending.isEmpty else { continue }
            inFlight += sending.count
            let deliveries = sending.map(\.delivery)
            await client.send(
                sending.map { ($0.payload, $0.delivery.token) }, environment: first.environment, app: first.app, credentials: credentials
            ) { index, outcome in
                arrived.withLock { $0.append((deliveries[index], outcome)) }
                wake.yield()
            }
        }
        while inFlight > 0 { await waitForAnswers() }
        flush()
        try await recording?.value
        try await jobs.finish(Set(claimed.map(\.jobId)), now: settings.now())
    }

    /// Yields after each pass over the due work (tests await the sends they caused).
    func passes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        watchers.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: key) } }
        return stream
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

    /// Counters by name and reason, made once (a counter made per event costs a registry lookup each time).
    private static let counters = Mutex<[String: Counter]>([:])
    private static let sent = Counter(label: "kizuna_push_sent_total")

    private static func count(_ outcome: PushJobStore.Outcome) {
        let (label, reason): (String, String) =
            switch outcome {
            case .sent: ("", "")
            case .failed(let reason), .skipped(let reason): ("kizuna_push_failures_total", reason)
            case .retry(_, let reason): ("kizuna_push_retries_total", reason)
            }
        if label.isEmpty { return sent.increment() }
        let counter = counters.withLock { counters in
            if let counter = counters[label + "/" + reason] { return counter }
            let counter = Counter(label: label, dimensions: [("reason", reason)])
            counters[label + "/" + reason] = counter
            return counter
        }
        counter.increment()
    }
}
