import Foundation
import KizunaCore
import SQLKit

/// Push jobs and their deliveries (`push_jobs`, `push_deliveries`, migration 9): created by the admin API, expanded to
/// the devices they reach when due, and claimed, sent and recorded by ``PushSender`` on any instance.
struct PushJobStore: Sendable {
    let database: KizunaDatabase

    /// A delivery claimed for sending.
    struct Claimed: Sendable {
        let jobId: String
        let installId: String
        let app: String
        let token: String
        let environment: APNsEnvironment
        let locale: String?
        let attempts: Int
        /// Whether the registry still holds the token, working: not unregistered, moved away or retired since the job
        /// was expanded.
        let registered: Bool
    }

    /// Stores a new job, due at `sendAt` (epoch milliseconds; for a local-time send, the first moment its wall-clock
    /// time is reached anywhere).
    func create(app: String, _ request: PushSendRequest, plan: PushSchedule, now: Int64) async throws -> PushJobStatus {
        let id = "push_" + hex(randomBytes(12))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let target = String(decoding: try encoder.encode(request.target), as: UTF8.self)
        let message = String(decoding: try encoder.encode(request.message), as: UTF8.self)
        try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO push_jobs (id, app_id, target, message, send_at, local_time, fallback_time_zone, state, created_at)
                VALUES (\(bind: id), \(bind: app), \(bind: target), \(bind: message), \(bind: plan.expandAt), \(bind: plan.localTime), \
                \(bind: plan.fallbackTimeZone), 'scheduled', \(bind: now))
                """
            ).run()
        }
        return PushJobStatus(
            id: id, app: app, state: .scheduled, target: request.target, message: request.message, sendAt: plan.expandAt, localTime: plan.localTime,
            createdAt: now, finishedAt: nil, totals: .init(), reasons: [:])
    }

    // MARK: Expanding

    /// Takes one scheduled job that is due (no other instance can take it meanwhile), writes a delivery for every
    /// device its target reaches, and marks it `sending` — all in one transaction, so a job is expanded once.
    /// - Returns: Whether a job was expanded (call again until none is).
    func expandOneDue(now: Int64) async throws -> Bool {
        // Looked for first without the write lock: an idle server only reads.
        guard
            try await database.raw("SELECT id FROM push_jobs WHERE state = 'scheduled' AND send_at <= \(bind: now) LIMIT 1").first() != nil
        else { return false }
        return try await database.transaction { db in
            let locking: SQLQueryString = db.dialect.name == "postgresql" ? " FOR UPDATE SKIP LOCKED" : ""
            guard
                let row = try await db.raw(
                    """
                    SELECT id, app_id, target, send_at, local_time, fallback_time_zone FROM push_jobs
                    WHERE state = 'scheduled' AND send_at <= \(bind: now) ORDER BY send_at LIMIT 1\(locking)
                    """
                ).first()
            else { return false }
            let id = try row.decode(column: "id", as: String.self)
            let app = try row.decode(column: "app_id", as: String.self)
            let target = try JSONDecoder().decode(PushTarget.self, from: Data(try row.decode(column: "target", as: String.self).utf8))
            let schedule = PushSchedule(
                expandAt: try row.decode(column: "send_at", as: Int64.self), localTime: try row.decode(column: "local_time", as: String?.self),
                fallbackTimeZone: try row.decode(column: "fallback_time_zone", as: String?.self))
            let sending: Bool
            if let selection = PushTargeting.selection(of: target), schedule.localTime == nil {
                // Every device due at once, chosen by SQL alone: copied in one statement, nothing decoded.
                try await db.raw(
                    """
                    INSERT INTO push_deliveries (job_id, install_id, app_id, token, environment, locale, due_at, state, reason, attempts, updated_at)
                    SELECT \(bind: id), install_id, app_id, token, environment, locale, \(bind: max(schedule.expandAt, now)),
                        CASE WHEN retired_at IS NULL THEN 'pending' ELSE 'skipped' END,
                        CASE WHEN retired_at IS NULL THEN NULL ELSE 'TokenRetired' END, 0, \(bind: now)
                    FROM push_devices WHERE app_id = \(bind: app)\(selection)
                    """
                ).run()
                sending =
                    try await db.raw("SELECT install_id FROM push_deliveries WHERE job_id = \(bind: id) AND state = 'pending' LIMIT 1").first() != nil
            } else {
                let devices = try await PushTargeting.devices(of: target, app: app, now: now, on: db)
                for chunk in devices.chunked(by: 200) {
                    let rows = chunk.map { device -> SQLQueryString in
                        let due = schedule.due(for: device, now: now)
                        let (state, reason): (String, String?) =
                            device.retiredAt != nil ? ("skipped", "TokenRetired") : due == nil ? ("skipped", "LocalTimePassed") : ("pending", nil)
                        return """
                            (\(bind: id), \(bind: device.installId), \(bind: app), \(bind: device.token), \(bind: device.environment.rawValue), \
                            \(bind: device.locale), \(bind: due ?? now), \(bind: state), \(bind: reason), 0, \(bind: now))
                            """
                    }
                    try await db.raw(
                        """
                        INSERT INTO push_deliveries (job_id, install_id, app_id, token, environment, locale, due_at, state, reason, attempts, updated_at)
                        VALUES \(rows.joined(separator: ", "))
                        """
                    ).run()
                }
                sending = devices.contains { $0.retiredAt == nil && schedule.due(for: $0, now: now) != nil }
            }
            // A job that reaches no device to send to (none matched, or every one was skipped) is done at once.
            try await db.raw(
                """
                UPDATE push_jobs SET state = \(bind: sending ? "sending" : "done"), expanded_at = \(bind: now), \
                finished_at = \(bind: sending ? nil : now) WHERE id = \(bind: id)
                """
            ).run()
            return true
        }
    }

    // MARK: Sending

    /// Claims up to `limit` pending deliveries that are due and not held by a live lease, holding them for `lease`
    /// milliseconds. Two instances never claim the same row at once (PostgreSQL skips rows another claim holds; an
    /// SQLite store has one server).
    func claim(limit: Int, lease: Int64, now: Int64) async throws -> [Claimed] {
        guard
            try await database.raw(
                """
                SELECT install_id FROM push_deliveries
                WHERE state = 'pending' AND due_at <= \(bind: now) AND (lease_until IS NULL OR lease_until <= \(bind: now)) LIMIT 1
                """
            ).first() != nil
        else { return [] }
        return try await database.transaction { db in
            let locking: SQLQueryString = db.dialect.name == "postgresql" ? " FOR UPDATE SKIP LOCKED" : ""
            let rows = try await db.raw(
                """
                SELECT job_id, install_id, app_id, token, environment, locale, attempts,
                    (SELECT COALESCE(p.retired_at, 0) FROM push_devices p WHERE p.app_id = d.app_id AND p.token = d.token
                        AND p.install_id = d.install_id) AS registry
                FROM push_deliveries d
                WHERE state = 'pending' AND due_at <= \(bind: now) AND (lease_until IS NULL OR lease_until <= \(bind: now))
                ORDER BY due_at LIMIT \(unsafeRaw: String(limit))\(locking)
                """
            ).all()
            let claimed = try rows.map { row in
                Claimed(
                    jobId: try row.decode(column: "job_id", as: String.self), installId: try row.decode(column: "install_id", as: String.self),
                    app: try row.decode(column: "app_id", as: String.self), token: try row.decode(column: "token", as: String.self),
                    environment: APNsEnvironment(rawValue: try row.decode(column: "environment", as: String.self)) ?? .production,
                    locale: try row.decode(column: "locale", as: String?.self), attempts: try row.decode(column: "attempts", as: Int.self) + 1,
                    registered: try row.decode(column: "registry", as: Int64?.self) == 0)
            }
            for job in Dictionary(grouping: claimed, by: \.jobId) {
                try await db.raw(
                    """
                    UPDATE push_deliveries SET lease_until = \(bind: now + lease), attempts = attempts + 1, updated_at = \(bind: now)
                    WHERE job_id = \(bind: job.key) AND install_id IN (\(binds: job.value.map(\.installId)))
                    """
                ).run()
            }
            return claimed
        }
    }

    /// Frees every leased delivery for sending again (an SQLite store's server starting: whoever held them died).
    func releaseLeases() async throws {
        try await database.transaction { db in
            try await db.raw("UPDATE push_deliveries SET lease_until = NULL WHERE state = 'pending' AND lease_until IS NOT NULL").run()
        }
    }

    /// What became of one claimed delivery.
    enum Outcome: Sendable {
        case sent(apnsId: String?)
        case failed(reason: String)
        case skipped(reason: String)
        /// Tried again at `at` (epoch milliseconds).
        case retry(at: Int64, reason: String)
    }

    /// Records outcomes, in one transaction; a token APNs retired (`retire`, with APNs' timestamp) is marked in the
    /// registry unless it was registered again since. ``finish(_:now:)`` ends the jobs afterwards.
    func record(_ outcomes: [(Claimed, Outcome)], retire: [(app: String, token: String, at: Int64)], now: Int64) async throws {
        try await database.transaction { db in
            // One statement per 200 outcomes, not one per delivery.
            for chunk in outcomes.chunked(by: 200) {
                let rows = chunk.map { delivery, outcome -> SQLQueryString in
                    let (state, reason, apnsId, due): (String, String?, String?, Int64?) =
                        switch outcome {
                        case .sent(let apnsId): ("sent", nil, apnsId, nil)
                        case .failed(let reason): ("failed", reason, nil, nil)
                        case .skipped(let reason): ("skipped", reason, nil, nil)
                        case .retry(let at, let reason): ("pending", reason, nil, at)
                        }
                    return """
                        (\(bind: delivery.jobId), \(bind: delivery.installId), \(bind: state), CAST(\(bind: reason) AS TEXT), \
                        CAST(\(bind: apnsId) AS TEXT), CAST(\(bind: due) AS BIGINT))
                        """
                }
                try await db.raw(
                    """
                    WITH v (job_id, install_id, state, reason, apns_id, due_at) AS (VALUES \(rows.joined(separator: ", ")))
                    UPDATE push_deliveries SET state = v.state, reason = v.reason, apns_id = v.apns_id, lease_until = NULL, \
                    updated_at = \(bind: now), due_at = COALESCE(v.due_at, push_deliveries.due_at)
                    FROM v WHERE push_deliveries.job_id = v.job_id AND push_deliveries.install_id = v.install_id
                    """
                ).run()
            }
            for retired in retire {
                try await db.raw(
                    """
                    UPDATE push_devices SET retired_at = \(bind: retired.at)
                    WHERE app_id = \(bind: retired.app) AND token = \(bind: retired.token) AND registered_at <= \(bind: retired.at)
                    """
                ).run()
            }
        }
    }

    /// Jobs still `sending` with nothing left pending: an instance recorded their last outcomes and stopped before
    /// finishing them (a kill between the two). Read only, so an idle sender stays a reader.
    func stranded() async throws -> Set<String> {
        let rows = try await database.raw(
            """
            SELECT id FROM push_jobs WHERE state = 'sending'
            AND NOT EXISTS (SELECT 1 FROM push_deliveries d WHERE d.job_id = push_jobs.id AND d.state = 'pending') LIMIT 100
            """
        ).all()
        return Set(try rows.map { try $0.decode(column: "id", as: String.self) })
    }

    /// Marks done those of `ids` with nothing left pending. Its own transaction, run after the sender's outcomes are
    /// committed: inside the recording transaction, two instances finishing a job's last deliveries at once each saw
    /// the other's as still pending (PostgreSQL's read committed), and the job stayed `sending` for good. Whichever
    /// instance commits last sees both here.
    func finish(_ ids: Set<String>, now: Int64) async throws {
        guard !ids.isEmpty else { return }
        try await database.transaction { db in
            try await db.raw(
                """
                UPDATE push_jobs SET state = 'done', finished_at = \(bind: now)
                WHERE id IN (\(binds: Array(ids))) AND state = 'sending'
                AND NOT EXISTS (SELECT 1 FROM push_deliveries d WHERE d.job_id = push_jobs.id AND d.state = 'pending')
                """
            ).run()
        }
    }

    // MARK: Reading

    /// A job with its totals and reasons.
    func status(id: String) async throws -> PushJobStatus? {
        guard let row = try await database.raw("SELECT * FROM push_jobs WHERE id = \(bind: id)").first() else { return nil }
        var totals = PushJobStatus.Totals()
        var reasons: [String: Int] = [:]
        for count in try await database.raw(
            "SELECT state, reason, COUNT(*) AS n FROM push_deliveries WHERE job_id = \(bind: id) GROUP BY state, reason"
        ).all() {
            let n = try count.decode(column: "n", as: Int.self)
            let reason = try count.decode(column: "reason", as: String?.self)
            totals.devices += n
            switch try count.decode(column: "state", as: String.self) {
            case "pending": totals.pending += n
            case "sent": totals.sent += n
            case "failed": totals.failed += n
            default: totals.skipped += n
            }
            if let reason, try count.decode(column: "state", as: String.self) != "pending" { reasons[reason, default: 0] += n }
        }
        let decoder = JSONDecoder()
        return PushJobStatus(
            id: id, app: try row.decode(column: "app_id", as: String.self),
            state: PushJobStatus.State(rawValue: try row.decode(column: "state", as: String.self)) ?? .scheduled,
            target: try decoder.decode(PushTarget.self, from: Data(try row.decode(column: "target", as: String.self).utf8)),
            message: try decoder.decode(PushMessage.self, from: Data(try row.decode(column: "message", as: String.self).utf8)),
            sendAt: try row.decode(column: "send_at", as: Int64.self), localTime: try row.decode(column: "local_time", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self), finishedAt: try row.decode(column: "finished_at", as: Int64?.self),
            totals: totals, reasons: reasons)
    }

    /// A job's message, for the sender.
    func message(job id: String) async throws -> PushMessage? {
        guard let row = try await database.raw("SELECT message FROM push_jobs WHERE id = \(bind: id)").first() else { return nil }
        return try JSONDecoder().decode(PushMessage.self, from: Data(try row.decode(column: "message", as: String.self).utf8))
    }

    /// `app`'s latest jobs, newest first.
    func jobs(app: String, limit: Int) async throws -> [PushJobStatus] {
        let ids = try await database.raw(
            "SELECT id FROM push_jobs WHERE app_id = \(bind: app) ORDER BY created_at DESC, id DESC LIMIT \(unsafeRaw: String(limit))"
        ).all().map { try $0.decode(column: "id", as: String.self) }
        var jobs: [PushJobStatus] = []
        for id in ids { if let job = try await status(id: id) { jobs.append(job) } }
        return jobs
    }

    /// A job's deliveries in install id order, after `after`.
    func deliveries(job: String, after: String?, limit: Int) async throws -> [PushDeliveryStatus] {
        let rows = try await database.raw(
            """
            SELECT install_id, state, reason, attempts, apns_id, due_at, updated_at FROM push_deliveries
            WHERE job_id = \(bind: job) AND install_id > \(bind: after ?? "") ORDER BY install_id LIMIT \(unsafeRaw: String(limit))
            """
        ).all()
        return try rows.map { row in
            PushDeliveryStatus(
                installId: try row.decode(column: "install_id", as: String.self),
                state: PushDeliveryStatus.State(rawValue: try row.decode(column: "state", as: String.self)) ?? .pending,
                reason: try row.decode(column: "reason", as: String?.self), attempts: try row.decode(column: "attempts", as: Int.self),
                apnsId: try row.decode(column: "apns_id", as: String?.self), dueAt: try row.decode(column: "due_at", as: Int64.self),
                updatedAt: try row.decode(column: "updated_at", as: Int64.self))
        }
    }

    /// Cancels a job that has not finished: its pending deliveries are skipped as `Cancelled`.
    /// - Returns: Whether the job was there and not finished.
    func cancel(id: String, now: Int64) async throws -> Bool {
        try await database.transaction { db in
            let cancelled = try await db.raw(
                """
                UPDATE push_jobs SET state = 'cancelled', finished_at = \(bind: now)
                WHERE id = \(bind: id) AND state IN ('scheduled', 'sending') RETURNING id
                """
            ).all()
            guard !cancelled.isEmpty else { return false }
            try await db.raw(
                """
                UPDATE push_deliveries SET state = 'skipped', reason = 'Cancelled', updated_at = \(bind: now)
                WHERE job_id = \(bind: id) AND state = 'pending'
                """
            ).run()
            return true
        }
    }
}

extension Array {
    /// The array in consecutive slices of at most `size`.
    func chunked(by size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
