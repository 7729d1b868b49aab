import CoreMetrics
import Prometheus

/// The process-wide Prometheus registry behind `/metrics`.
///
/// swift-metrics has one global backend per process, so the registry is bootstrapped once, on first use, and
/// shared by every application the process builds (tests build many).
enum MetricsExporter {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Hummingbird names metrics in OpenTelemetry style (`http.route`); Prometheus wants `http_route`.
        factory.nameAndLabelSanitizer = { name, labels in
            (prometheusName(name), labels.map { (prometheusName($0.0), $0.1) })
        }
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// Makes sure the backend is installed before any metric is created.
    static func bootstrap() { _ = registry }

    /// The exposition text.
    static func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }

    private static func prometheusName(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" ? $0 : "_" })
    }
}
