import Foundation

/// The body of `config:fetch` and `gate:check`: the device context, flattened, plus the newest version the device
/// heard of (from a realtime event), so that the answer is at least that new whichever instance serves it.
public struct DeviceRequest: Sendable, Hashable, Codable {
    public var device: DeviceContext
    public var knownVersion: Int64?

    public init(device: DeviceContext, knownVersion: Int64? = nil) {
        self.device = device
        self.knownVersion = knownVersion
    }

    private enum CodingKeys: String, CodingKey { case knownVersion }

    public init(from decoder: any Decoder) throws {
        device = try DeviceContext(from: decoder)
        knownVersion = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int64.self, forKey: .knownVersion)
    }

    public func encode(to encoder: any Encoder) throws {
        try device.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(knownVersion, forKey: .knownVersion)
    }
}

/// The answer of `config:fetch`: only the values this device gets, and the template version they came from.
public struct ConfigValues: Sendable, Hashable, Codable {
    public var version: Int64
    public var values: [String: JSONValue]

    public init(version: Int64, values: [String: JSONValue]) {
        self.version = version
        self.values = values
    }
}

/// The answer of `gate:check`: the decision (flattened) plus what the SDK needs to decide offline — the policy it
/// came from, with the tester allow-list cut down to the calling install, and the app's store URL (the default
/// link).
public struct GateCheck: Sendable, Hashable, Codable {
    public var decision: UpdateDecision
    public var policy: JSONValue
    public var storeURL: String?

    public init(decision: UpdateDecision, policy: JSONValue, storeURL: String?) {
        self.decision = decision
        self.policy = policy
        self.storeURL = storeURL
    }

    private enum CodingKeys: String, CodingKey { case policy, storeURL }

    public init(from decoder: any Decoder) throws {
        decision = try UpdateDecision(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        policy = try container.decode(JSONValue.self, forKey: .policy)
        storeURL = try container.decodeIfPresent(String.self, forKey: .storeURL)
    }

    public func encode(to encoder: any Encoder) throws {
        try decision.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(policy, forKey: .policy)
        try container.encodeIfPresent(storeURL, forKey: .storeURL)
    }
}
