/// The platform an app ships on.
public enum Platform: String, Codable, CaseIterable, Hashable, Sendable {
    case ios, macos, tvos, watchos, visionos, android

    /// Whether the app is distributed by Apple and so has an Apple team id and bundle id.
    public var isApple: Bool { self != .android }
}
