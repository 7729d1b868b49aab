import Foundation
import KizunaCore

/// One row of `data_jobs`: work a data schema publish left for ``DataJobRunner``, with where it stands.
package struct DataJob: Sendable, Equatable {
    /// What a job does.
    package enum Work: Sendable, Equatable {
        /// Build the SQL index `name` on `columns`; `index` is its name in the schema.
        case index(index: String, name: String, columns: [String])
        /// Fill the NULLs of `field`'s column with `value`, the field's default as its column stores it.
        case backfill(field: String, value: StoredValue)

        /// `index` or `backfill`.
        package var kind: String {
            switch self {
            case .index: "index"
            case .backfill: "backfill"
            }
        }

        /// The index or field the job is for: a later publish that drops or changes it cancels the job.
        package var target: String {
            switch self {
            case .index(let index, _, _): index
            case .backfill(let field, _): field
            }
        }
    }

    /// Where a job stands.
    package enum State: String, Sendable {
        case pending, running, done, failed, cancelled
    }

    package var id: Int64
    package var app: String
    package var schemaVersion: Int64
    package var model: String
    package var table: String
    package var work: Work
    package var state: State
    /// Rows filled so far (backfills).
    package var done: Int64
    /// Rows in the table when the job started; 0 before.
    package var total: Int64
    /// The last id a backfill filled, committed with its batch; `nil` before the first batch.
    package var checkpoint: String?
    package var attempts: Int
    package var error: String?
    package var createdAt: Int64
    package var startedAt: Int64?
    package var updatedAt: Int64
    package var finishedAt: Int64?
    /// When the job may run (again).
    package var runAfter: Int64

    /// The job as the admin API lists it.
    package var info: DataJobInfo {
        DataJobInfo(
            id: id, schemaVersion: schemaVersion, kind: work.kind, model: model, target: work.target, state: state.rawValue, done: done,
            total: total, attempts: attempts, error: error, createdAt: EpochMillis.date(createdAt), startedAt: startedAt.map(EpochMillis.date),
            updatedAt: EpochMillis.date(updatedAt), finishedAt: finishedAt.map(EpochMillis.date),
            nextAttemptAt: state == .failed ? EpochMillis.date(runAfter) : nil)
    }
}

extension DataJob.Work {
    /// The work as the `payload` column holds it: JSON, with a backfill's value tagged with its stored form.
    var payload: String {
        let object: JSONValue
        switch self {
        case .index(let index, let name, let columns):
            object = .object(["index": .string(index), "name": .string(name), "columns": .array(columns.map(JSONValue.string))])
        case .backfill(let field, let value):
            let (form, json): (String, JSONValue) =
                switch value {
                case .text(let text): ("text", .string(text))
                case .integer(let number): ("integer", .string(String(number)))  // as text: no 2^53 limit
                case .real(let number): ("real", .number(number))
                case .bool(let flag): ("bool", .bool(flag))
                case .json(let text): ("json", .string(text))
                }
            object = .object(["field": .string(field), "form": .string(form), "value": json])
        }
        return StoredValue.jsonText(object)
    }

    /// The work a `kind` row's `payload` describes, or `nil` when it does not read (a newer Kizuna wrote it).
    init?(kind: String, payload: String) {
        guard let object = try? JSONValue(parsing: payload) else { return nil }
        switch kind {
        case "index":
            guard let index = object["index"]?.stringValue, let name = object["name"]?.stringValue,
                let columns = object["columns"]?.arrayValue?.compactMap(\.stringValue), !columns.isEmpty
            else { return nil }
            self = .index(index: index, name: name, columns: columns)
        case "backfill":
            guard let field = object["field"]?.stringValue, let form = object["form"]?.stringValue, let json = object["value"] else { return nil }
            let value: StoredValue
            switch (form, json) {
            case ("text", .string(let text)): value = .text(text)
            case ("integer", .string(let text)):
                guard let number = Int64(text) else { return nil }
                value = .integer(number)
            case ("real", .number(let number)): value = .real(number)
            case ("bool", .bool(let flag)): value = .bool(flag)
            case ("json", .string(let text)): value = .json(text)
            default: return nil
            }
            self = .backfill(field: field, value: value)
        default:
            return nil
        }
    }
}
