import Foundation

/// The numbers of `/metrics` a person reads on the console's Health page, from the Prometheus text exposition
/// (the same text a scraper gets): requests by status class, latency, the busiest routes, the store's pool.
///
/// Latencies come from the histograms' buckets, so a quantile is the bucket bound it falls under (`≤ 25 ms`), as
/// Prometheus's own `histogram_quantile` would bound it, and a mean is the sum over the count.
struct MetricsSummary: Sendable, Equatable {
    /// One line of the exposition: `name{label="value",…} number`.
    struct Sample: Sendable, Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// A histogram's cumulative buckets (upper bound, count), sum and count.
    struct Histogram: Sendable, Equatable {
        var buckets: [(bound: Double, count: Double)] = []
        var sum: Double = 0
        var count: Double = 0

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.sum == rhs.sum && lhs.count == rhs.count && lhs.buckets.elementsEqual(rhs.buckets) { $0 == $1 }
        }

        /// The upper bound of the bucket the `quantile` falls in (`infinity` past the last finite bound); nil without data.
        func bound(at quantile: Double) -> Double? {
            guard count > 0 else { return nil }
            let rank = quantile * count
            return buckets.sorted { $0.bound < $1.bound }.first { $0.count >= rank }?.bound ?? .infinity
        }

        var mean: Double? { count > 0 ? sum / count : nil }

        mutating func add(_ other: Histogram) {
            var merged: [Double: Double] = [:]
            for bucket in buckets + other.buckets { merged[bucket.bound, default: 0] += bucket.count }
            buckets = merged.map { (bound: $0.key, count: $0.value) }.sorted { $0.bound < $1.bound }
            sum += other.sum
            count += other.count
        }
    }

    /// A route's requests (all statuses) and latency.
    struct Route: Sendable, Equatable {
        var route: String
        var method: String
        var requests: Double
        var serverErrors: Double
        var latency: Histogram
    }

    /// Requests answered, by status class (`2xx`…`5xx`).
    var requestsByClass: [String: Double] = [:]
    /// Every request's latency together.
    var latency = Histogram()
    /// Routes by requests, most first.
    var routes: [Route] = []
    var activeRequests: Double = 0
    var connectionsInUse: Double = 0
    /// How long a statement waited for a connection of the store's pool.
    var connectionWait = Histogram()
    var dataJobsUnfinished: Double = 0
    var pushSent: Double = 0

    var requests: Double { requestsByClass.values.reduce(0, +) }

    /// The summary of an exposition text.
    init(exposition text: String) {
        let samples = text.split(whereSeparator: \.isNewline).compactMap { Self.sample(String($0)) }
        var routes: [String: Route] = [:]
        for sample in samples {
            let route = sample.labels["http_route"] ?? "", method = sample.labels["http_request_method"] ?? ""
            let status = sample.labels["http_response_status_code"] ?? ""
            let key = "\(method) \(route)"
            switch sample.name {
            case "hb_requests":
                requestsByClass["\(status.prefix(1))xx", default: 0] += sample.value
                routes[key, default: Route(route: route, method: method, requests: 0, serverErrors: 0, latency: Histogram())].requests += sample.value
                if status.hasPrefix("5") { routes[key]?.serverErrors += sample.value }
            case "http_server_request_duration_bucket", "http_server_request_duration_sum", "http_server_request_duration_count":
                var one = Histogram()
                Self.add(sample, suffixOf: "http_server_request_duration", to: &one)
                latency.add(one)
                routes[key, default: Route(route: route, method: method, requests: 0, serverErrors: 0, latency: Histogram())].latency.add(one)
            case "http_server_active_requests": activeRequests += sample.value
            case "kizuna_db_connections_in_use": connectionsInUse += sample.value
            case "kizuna_data_jobs_unfinished": dataJobsUnfinished += sample.value
            case "kizuna_push_sent_total": pushSent += sample.value
            default:
                if sample.name.hasPrefix("kizuna_db_connection_wait_seconds") {
                    Self.add(sample, suffixOf: "kizuna_db_connection_wait_seconds", to: &connectionWait)
                }
            }
        }
        self.routes = routes.values.filter { $0.requests > 0 }.sorted { ($0.requests, $1.route) > ($1.requests, $0.route) }
    }

    private static func add(_ sample: Sample, suffixOf base: String, to histogram: inout Histogram) {
        switch sample.name.dropFirst(base.count) {
        case "_bucket":
            let bound = sample.labels["le"].flatMap { $0 == "+Inf" ? .infinity : Double($0) } ?? .infinity
            histogram.buckets.append((bound: bound, count: sample.value))
        case "_sum": histogram.sum += sample.value
        case "_count": histogram.count += sample.value
        default: break
        }
    }

    /// A sample line, or nil for a comment, a blank line or a line it cannot read.
    static func sample(_ line: String) -> Sample? {
        guard !line.hasPrefix("#") else { return nil }
        var labels: [String: String] = [:]
        let name: Substring
        let rest: Substring
        if let open = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}"), open < close {
            name = line[..<open]
            rest = line[line.index(after: close)...]
            // Label values are quoted, with \" and \\ escaped; the names never hold a quote.
            var scanner = line[line.index(after: open)..<close]
            while let equals = scanner.firstIndex(of: "="), scanner[scanner.index(after: equals)...].first == "\"" {
                let key = scanner[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: ", "))
                var value = ""
                var index = scanner.index(equals, offsetBy: 2)
                while index < scanner.endIndex, scanner[index] != "\"" {
                    if scanner[index] == "\\", scanner.index(after: index) < scanner.endIndex { index = scanner.index(after: index) }
                    value.append(scanner[index])
                    index = scanner.index(after: index)
                }
                labels[key] = value
                scanner = index < scanner.endIndex ? scanner[scanner.index(after: index)...] : ""
            }
        } else {
            guard let space = line.firstIndex(of: " ") else { return nil }
            name = line[..<space]
            rest = line[space...]
        }
        guard !name.isEmpty, let value = rest.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        return Sample(name: String(name), labels: labels, value: value)
    }
}
