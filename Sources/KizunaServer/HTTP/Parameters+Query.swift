import Hummingbird
import KizunaCore

extension Hummingbird.Parameters {
    /// An integer query parameter in `range`, or `fallback` when absent.
    func int(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(KizunaError) -> Int {
        guard let text = self[Substring(name)] else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw KizunaError(.badRequest, "?\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).", field: name)
        }
        return value
    }

    /// An optional integer query parameter.
    func optionalInt(_ name: String) throws(KizunaError) -> Int64? {
        guard let text = self[Substring(name)] else { return nil }
        guard let value = Int64(text) else { throw KizunaError(.badRequest, "?\(name) must be a whole number.", field: name) }
        return value
    }
}
