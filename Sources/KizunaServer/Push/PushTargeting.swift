import Foundation
import KizunaCore
import SQLKit

/// Which registered devices a ``PushTarget`` reaches.
enum PushTargeting {
    /// The most installs or users a list may name.
    static let maxListed = 10_000

    /// Checks `target` before a job is stored: lists within bounds, a condition that parses.
    static func check(_ target: PushTarget) throws(KizunaError) {
        switch target {
        case .installs(let ids), .users(let ids):
            guard !ids.isEmpty, ids.count <= maxListed, !ids.contains(where: { $0.isEmpty || $0.count > 128 }) else {
                throw KizunaError(.validationFailed, "A target lists 1 to \(maxListed) ids of 1 to 128 characters.", field: "target")
            }
        case .condition(let json): _ = try condition(json)
        case .all: break
        }
    }

    /// The condition a `where` target holds.
    static func condition(_ json: JSONValue) throws(KizunaError) -> Condition {
        var reader = DocumentReader()
        let condition = Condition.parse(json, at: .root["target"]["where"], reader: &reader)
        try reader.throwIfFailed("The push target's condition")
        guard let condition else { throw KizunaError(.validationFailed, "The push target's condition does not read.", field: "target.where") }
        return condition
    }

    /// The SQL that picks `target`'s devices of an app (after `app_id = …`), or `nil` when a condition must be
    /// evaluated device by device.
    static func selection(of target: PushTarget) -> SQLQueryString? {
        switch target {
        case .installs(let ids): " AND install_id IN (\(binds: ids))"
        case .users(let ids): " AND user_id IN (\(binds: ids))"
        case .all: ""
        case .condition: nil
        }
    }

    /// The devices of `app` that `target` reaches, retired tokens included (their deliveries are skipped, and counted).
    static func devices(of target: PushTarget, app: String, now: Int64, on db: any SQLDatabase) async throws -> [PushDevice] {
        let select: SQLQueryString = "SELECT \(PushDeviceRepository.columns) FROM push_devices WHERE app_id = \(bind: app)"
        switch target {
        case .installs(let ids):
            return try await db.raw("\(select) AND install_id IN (\(binds: ids)) ORDER BY install_id").all().map(PushDeviceRepository.device)
        case .users(let ids):
            return try await db.raw("\(select) AND user_id IN (\(binds: ids)) ORDER BY install_id").all().map(PushDeviceRepository.device)
        case .all:
            return try await db.raw("\(select) ORDER BY install_id").all().map(PushDeviceRepository.device)
        case .condition(let json):
            let condition = try condition(json)
            let date = EpochMillis.date(now)
            return try await db.raw("\(select) ORDER BY install_id").all().map(PushDeviceRepository.device).filter { device in
                condition.evaluate(EvaluationContext(registered: device.context, appId: app, now: date))
            }
        }
    }
}
