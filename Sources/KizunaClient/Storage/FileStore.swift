import Foundation
import KizunaCore

/// The SDK's files on the device: one directory it is given, one JSON file per kind of state.
///
/// Every write goes through ``AtomicFile/replace(_:with:)``, so an app killed mid-write keeps the previous state. Each file carries a format number: a file written by a newer SDK
/// (or damaged) reads as absent instead of as wrong values.
struct FileStore: Sendable {
    /// The directory the files live in.
    let directory: URL

    /// Opens (and if needed creates) `directory`.
    /// - Throws: `bad_request` when the directory cannot be created.
    init(directory: URL) throws(KizunaError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw KizunaError(.badRequest, "The SDK's directory \(directory.path) could not be created: \(error.localizedDescription)")
        }
    }

    private struct Envelope<Value: Codable>: Codable {
        var format: Int
        var value: Value
    }

    /// The value last written under `name` with this `format`, or `nil` when there is none.
    func read<Value: Codable>(_ type: Value.Type, from name: String, format: Int) -> Value? {
        guard let data = try? Data(contentsOf: url(name)),
            let envelope = try? Self.decoder.decode(Envelope<Value>.self, from: data), envelope.format == format
        else { return nil }
        return envelope.value
    }

    /// Replaces what is stored under `name`, atomically (see ``AtomicFile``).
    /// - Throws: `internal_error` naming the file when it cannot be written.
    func write<Value: Codable>(_ value: Value, to name: String, format: Int) throws(KizunaError) {
        let data: Data
        do {
            data = try Self.encoder.encode(Envelope(format: format, value: value))
        } catch {
            throw KizunaError(.internalError, "\(name) could not be encoded: \(error)")
        }
        try AtomicFile.replace(url(name), with: data)
    }

    /// Removes a file; one that is not there is no error.
    func remove(_ name: String) {
        try? FileManager.default.removeItem(at: url(name))
    }

    private func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    private static let encoder = WireFormat.canonicalEncoder()
    private static let decoder = WireFormat.decoder()
}
