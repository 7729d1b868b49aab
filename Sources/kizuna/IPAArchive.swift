import Foundation
import KizunaCore
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// An `.ipa` read through the system's Info-ZIP `unzip`: `-Z1` lists it, `-p` extracts one member to memory. Kizuna
/// has no inflater of its own; `unzip` is a Debian package (`apt-get install unzip`) and part of macOS.
struct IPAArchive {
    let path: String

    /// Every member's name, directories included.
    func entries() async throws -> [String] {
        let text = String(decoding: try await unzip(["-Z1", path]), as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    /// One member's bytes.
    func read(_ member: String) async throws -> Data {
        // unzip takes member names as wildcard patterns: escape the pattern characters so a name matches only itself.
        var pattern = ""
        for character in member {
            if "[]*?\\".contains(character) { pattern.append("\\") }
            pattern.append(character)
        }
        return try await unzip(["-p", path, pattern])
    }

    private func unzip(_ arguments: [String]) async throws -> Data {
        // A main executable can run to hundreds of megabytes; 2 GB is beyond any the store takes.
        guard
            let result = try? await Subprocess.run(
                .name("unzip"), arguments: Arguments(arguments), output: .bytes(limit: 2 << 30), error: .string(limit: 1 << 16))
        else { throw KizunaError(.badRequest, "Could not run unzip (Info-ZIP; `apt-get install unzip`) on \(path).") }
        guard case .exited(0) = result.terminationStatus else {
            let reason = result.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
            throw KizunaError(.badRequest, "unzip could not read \(path)\(arguments.count > 2 ? " member \(arguments[2])" : ""): \(reason)")
        }
        return Data(result.standardOutput)
    }
}

/// Reads an archive into an ``IPAInspection``: the bundle, its profile, the checks and the lint of every binary.
enum IPAInspector {
    static func inspect(_ archive: IPAArchive, registry: ReleaseChecks.Registry?, now: Date = Date()) async throws -> IPAInspection {
        let entries = try await archive.entries()
        // `Payload/<Name>.app/Info.plist`, the only Info.plist three components deep.
        guard
            let bundle = entries.first(where: { entry in
                let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
                return parts.count == 3 && parts[0] == "Payload" && parts[1].hasSuffix(".app") && parts[2] == "Info.plist"
            }).map({ String($0.dropLast("/Info.plist".count)) })
        else { throw KizunaError(.badRequest, "\(archive.path) has no Payload/<Name>.app/Info.plist: it is not an iOS app archive.") }
        let info = try BundleInfo(propertyList: try await archive.read("\(bundle)/Info.plist"))

        var profile: MobileProvision?
        var profileProblem: ReleaseCheck?
        let profilePath = "\(bundle)/embedded.mobileprovision"
        if entries.contains(profilePath) {
            do {
                profile = try MobileProvision(contentsOf: try await archive.read(profilePath))
            } catch {
                profileProblem = ReleaseCheck("profile.readable", .error, "\(profilePath): \((error as? KizunaError)?.message ?? "\(error)")")
            }
        }
        var checks = ReleaseChecks.archive(info: info, profile: profile, now: now)
        // A profile that is there but unreadable is that problem, not a missing one.
        if let profileProblem, let index = checks.firstIndex(where: { $0.id == "profile.present" }) { checks[index] = profileProblem }
        if let registry { checks += ReleaseChecks.registry(info: info, profile: profile, registry) }
        checks.append(ReleaseChecks.unreleased(info: info, released: registry?.released))

        var findings: [SelectorFinding] = []
        var binaries: [String] = []
        for binary in try await executables(in: archive, bundle: bundle, info: info, entries: entries) {
            guard entries.contains(binary) else {
                checks.append(ReleaseCheck("binary.present", .error, "\(binary) is named by its Info.plist but is not in the archive"))
                continue
            }
            binaries.append(binary)
            do {
                findings += SelectorFinding.findings(binary: binary, slices: try MachO.slices(in: try await archive.read(binary)))
            } catch let error as KizunaError {
                checks.append(ReleaseCheck("binary.readable", .error, "\(binary): \(error.message)"))
            }
        }
        return IPAInspection(bundlePath: bundle, info: info, profile: profile, checks: checks, binaries: binaries, privateSelectors: findings)
    }

    /// The main executable, each `Frameworks/<Name>.framework/<Name>` and `Frameworks/*.dylib`, and each
    /// `PlugIns/<Name>.appex`'s executable (from its Info.plist).
    private static func executables(in archive: IPAArchive, bundle: String, info: BundleInfo, entries: [String]) async throws -> [String] {
        var paths: [String] = []
        if let executable = info.executable { paths.append("\(bundle)/\(executable)") }
        for entry in entries where entry.hasPrefix("\(bundle)/") {
            let parts = entry.dropFirst(bundle.count + 1).split(separator: "/", omittingEmptySubsequences: false)
            if parts.count == 3, parts[0] == "Frameworks", parts[1].hasSuffix(".framework"), parts[2] == parts[1].dropLast(".framework".count) {
                paths.append(entry)
            } else if parts.count == 2, parts[0] == "Frameworks", parts[1].hasSuffix(".dylib") {
                paths.append(entry)
            } else if parts.count == 3, parts[0] == "PlugIns", parts[1].hasSuffix(".appex"), parts[2] == "Info.plist" {
                let plugin = try? BundleInfo(propertyList: try await archive.read(entry))
                let name = plugin?.executable ?? String(parts[1].dropLast(".appex".count))
                paths.append("\(bundle)/PlugIns/\(parts[1])/\(name)")
            }
        }
        return paths
    }
}
