import Foundation
import KizunaCore
import KizunaTestSupport
import Testing

/// The provisioning profile out of CMS signed data, and the release checks on it and Info.plist.
@Suite("IPAInspect profile and checks")
struct IPAInspectCheckTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let team = "TEAM12345A"

    static func profile(
        expires: TimeInterval = 365 * 86_400, devices: [String]? = nil, domains: Any? = nil, aps: String? = "production"
    ) throws
        -> MobileProvision
    {
        let plist = ReleaseFixtures.profile(
            team: team, appID: "\(team).com.example.shop", expires: now.addingTimeInterval(expires), aps: aps, domains: domains, devices: devices)
        return try MobileProvision(contentsOf: ReleaseFixtures.signedData(plist))
    }

    static let info = BundleInfo(bundleId: "com.example.shop", version: "3.0.0", build: "4321", minimumOSVersion: "17.0", executable: "Shop")

    @Test("the profile's fields from DER and from BER with indefinite lengths", arguments: [false, true])
    func profileFields(indefinite: Bool) throws {
        let plist = ReleaseFixtures.profile(
            team: Self.team, appID: "\(Self.team).com.example.shop", expires: Self.now,
            domains: ["applinks:example.com", "webcredentials:example.com"])
        let profile = try MobileProvision(contentsOf: ReleaseFixtures.signedData(plist, indefinite: indefinite))
        #expect(profile.name == "Fixture profile")
        #expect(profile.teamIdentifiers == [Self.team])
        #expect(profile.expirationDate == Self.now)
        #expect(profile.kind == .appStore)
        #expect(profile.applicationIdentifier == "\(Self.team).com.example.shop")
        #expect(profile.apsEnvironment == "production")
        #expect(profile.associatedDomains == ["applinks:example.com", "webcredentials:example.com"])
        #expect(profile.keychainAccessGroups == ["\(Self.team).*"])
    }

    @Test("the provisioning kind")
    func kinds() throws {
        #expect(try Self.profile(devices: ["abc"]).kind == .adHoc)
        let development = ReleaseFixtures.profile(team: "T", appID: "T.*", expires: Self.now, devices: ["abc"], getTaskAllow: true)
        #expect(try MobileProvision(contentsOf: ReleaseFixtures.signedData(development)).kind == .development)
        #expect(try Self.profile(domains: "*").associatedDomains == ["*"])
    }

    @Test("bytes that are not CMS signed data are a clear error")
    func notSignedData() {
        #expect { try MobileProvision(contentsOf: Data("<?xml version=\"1.0\"?>".utf8)) } throws: {
            ($0 as? KizunaError)?.message.hasPrefix("The provisioning profile is not CMS signed data") == true
        }
        // A SEQUENCE holding the data OID, not signedData.
        let data = Data([0x30, 0x0B, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01])
        #expect { try MobileProvision(contentsOf: data) } throws: {
            ($0 as? KizunaError)?.message.contains("no ContentInfo of type signedData") == true
        }
    }

    @Test("archive checks: a valid store profile passes; expired, expiring, ad hoc and a foreign app id do not")
    func archiveChecks() throws {
        func statuses(_ profile: MobileProvision?, info: BundleInfo = IPAInspectCheckTests.info) -> [String: ReleaseCheck.Status] {
            Dictionary(uniqueKeysWithValues: ReleaseChecks.archive(info: info, profile: profile, now: Self.now).map { ($0.id, $0.status) })
        }
        #expect(
            statuses(try Self.profile()) == ["info.keys": .passed, "profile.expiry": .passed, "profile.kind": .passed, "profile.app-id": .passed])
        #expect(statuses(try Self.profile(expires: -86_400))["profile.expiry"] == .error)
        #expect(statuses(try Self.profile(expires: 10 * 86_400))["profile.expiry"] == .warning)
        #expect(statuses(try Self.profile(devices: ["abc"]))["profile.kind"] == .warning)
        #expect(statuses(nil)["profile.present"] == .error)
        var other = Self.info
        other.bundleId = "com.example.other"
        other.build = nil
        #expect(statuses(try Self.profile(), info: other)["profile.app-id"] == .error)
        #expect(ReleaseChecks.archive(info: other, profile: nil, now: Self.now).first?.message == "Info.plist lacks CFBundleVersion")
        let wildcard = ReleaseFixtures.profile(team: Self.team, appID: "\(Self.team).*", expires: Self.now.addingTimeInterval(86_400 * 90))
        #expect(statuses(try MobileProvision(contentsOf: ReleaseFixtures.signedData(wildcard)), info: other)["profile.app-id"] == .passed)
    }

    @Test("registry checks: bundle id, team id, associated domains and push environment against the app's record")
    func registryChecks() throws {
        let app = AppRecord(
            id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: Self.team, storeURL: nil, createdAt: Self.now,
            updatedAt: Self.now)
        let rules = AssociatedDomainSettings(appLinks: [AppLinks.Component(path: "/items/*")])
        let sandbox = PushCredentialsInfo(
            keyId: "K", teamId: Self.team, topic: "com.example.shop", environment: .sandbox, keyFingerprint: "f", updatedAt: 0)
        func statuses(
            _ profile: MobileProvision, _ registry: ReleaseChecks.Registry, info: BundleInfo = IPAInspectCheckTests.info
        ) -> [String: ReleaseCheck.Status] {
            Dictionary(uniqueKeysWithValues: ReleaseChecks.registry(info: info, profile: profile, registry).map { ($0.id, $0.status) })
        }
        let registry = ReleaseChecks.Registry(app: app, domain: "example.com", associatedDomains: rules, push: nil)
        #expect(registry.expectedDomains == ["webcredentials:example.com", "applinks:example.com"])
        let good = try Self.profile(domains: ["applinks:example.com?mode=developer", "webcredentials:example.com"], aps: nil)
        #expect(
            statuses(good, registry) == [
                "app.bundle-id": .passed, "app.team-id": .passed, "app.associated-domains": .passed, "app.push-environment": .passed,
            ])
        #expect(statuses(try Self.profile(domains: ["webcredentials:example.com"]), registry)["app.associated-domains"] == .error)
        #expect(statuses(try Self.profile(domains: "*"), registry)["app.associated-domains"] == .passed)
        var other = Self.info
        other.bundleId = "com.example.other"
        #expect(statuses(good, registry, info: other)["app.bundle-id"] == .error)
        var foreign = registry
        foreign.app.teamId = "OTHER12345"
        #expect(statuses(good, foreign)["app.team-id"] == .error)
        var pushing = registry
        pushing.push = sandbox
        #expect(statuses(try Self.profile(aps: "production"), pushing)["app.push-environment"] == .error)
        #expect(statuses(try Self.profile(aps: "development"), pushing)["app.push-environment"] == .passed)
        #expect(statuses(try Self.profile(aps: nil), pushing)["app.push-environment"] == .error)
        #expect(statuses(try Self.profile(aps: "production"), registry)["app.push-environment"] == .warning)
    }

    @Test("the (version, build) check is skipped without the app's releases, and checks the pair when given them")
    func unreleased() {
        #expect(ReleaseChecks.unreleased(info: Self.info).status == .skipped)
        #expect(ReleaseChecks.unreleased(info: Self.info, released: ["3.0.0": ["4321"]]).status == .error)
        #expect(ReleaseChecks.unreleased(info: Self.info, released: ["3.0.0": ["4320"]]).status == .passed)
    }
}
