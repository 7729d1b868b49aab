import Foundation
import KizunaCore

/// Where the store lives: an embedded SQLite file or a PostgreSQL server.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite file (WAL mode), created on first open.
    case sqlite(path: String)
    /// A PostgreSQL database; `schema` pins `search_path` (tests use one schema each).
    case postgres(url: String, schema: String? = nil)

    /// The SQLite file inside a data directory: `<dir>/kizuna.sqlite`.
    public static func sqlite(dataDirectory: String) -> DatabaseLocation {
        .sqlite(path: URL(fileURLWithPath: dataDirectory).appendingPathComponent("kizuna.sqlite").path)
    }

    /// Chooses PostgreSQL when a URL is given, else SQLite in the data directory.
    /// - Throws: `bad_request` when the URL is not a `postgres://` or `postgresql://` URL.
    public static func resolve(databaseURL: String?, dataDirectory: String) throws(KizunaError) -> DatabaseLocation {
        guard let databaseURL, !databaseURL.isEmpty else { return .sqlite(dataDirectory: dataDirectory) }
        let scheme = databaseURL.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw KizunaError(
                .badRequest,
                "--database-url must start with postgres:// or postgresql:// (got '\(scheme ?? "")'); leave it unset for embedded SQLite.",
                field: "database-url"
            )
        }
        return .postgres(url: databaseURL)
    }

    /// A description safe to print: the PostgreSQL password is masked.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url, let schema):
            var masked = url
            if var components = URLComponents(string: url), components.password != nil {
                components.password = "***"
                masked = components.string ?? "postgres://***"
            }
            return schema.map { "\(masked) (schema \($0))" } ?? masked
        }
    }
}
