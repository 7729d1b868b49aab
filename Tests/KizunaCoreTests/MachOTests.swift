import Foundation
import KizunaCore
import KizunaTestSupport
import Testing

/// Objective-C method names out of thin and fat Mach-O files built byte by byte, and clear errors for broken ones.
@Suite("MachO")
struct MachOTests {
    @Test("a thin 64-bit file's __objc_methname, in order", arguments: [true, false])
    func thin(wide: Bool) throws {
        let file = ReleaseFixtures.machO(methodNames: ["viewDidLoad", "_terminateWithStatus:", "viewDidLoad"], wide: wide)
        #expect(MachO.hasMachOMagic(file))
        let slices = try MachO.slices(in: file)
        #expect(slices == [MachO.Slice(architecture: "arm64", methodNames: ["viewDidLoad", "_terminateWithStatus:"])])
    }

    @Test("a fat file's slices, each with its architecture", arguments: [false, true])
    func fat(wide: Bool) throws {
        let file = ReleaseFixtures.fat(
            [
                (ReleaseFixtures.arm64, ReleaseFixtures.machO(methodNames: ["a", "_terminateWithStatus:"])),
                (ReleaseFixtures.x86_64, ReleaseFixtures.machO(methodNames: ["b"], cpuType: ReleaseFixtures.x86_64)),
            ], wide: wide)
        #expect(MachO.hasMachOMagic(file))
        let slices = try MachO.slices(in: file)
        #expect(slices.map(\.architecture) == ["arm64", "x86_64"])
        #expect(slices.map(\.methodNames) == [["a", "_terminateWithStatus:"], ["b"]])
    }

    @Test("a file read from the middle of a larger buffer")
    func sliceOfData() throws {
        let file = ReleaseFixtures.machO(methodNames: ["x"])
        let buffer = Data([1, 2, 3]) + file
        #expect(try MachO.slices(in: buffer.dropFirst(3)).first?.methodNames == ["x"])
    }

    @Test("every truncation of a thin and a fat file is an error, never a crash")
    func truncated() throws {
        let thin = ReleaseFixtures.machO(methodNames: ["viewDidLoad"])
        let fat = ReleaseFixtures.fat([(ReleaseFixtures.arm64, thin)])
        for file in [thin, fat] {
            for length in 0..<(file.count - 16) {
                #expect(throws: KizunaError.self) { try MachO.slices(in: file.prefix(length)) }
            }
        }
    }

    @Test("what is wrong is said")
    func messages() {
        #expect { try MachO.slices(in: Data("#!/bin/sh\necho hi\n".utf8)) } throws: {
            ($0 as? KizunaError)?.message == "Malformed Mach-O: not a Mach-O file (no Mach-O or fat magic number)."
        }
        var file = ReleaseFixtures.machO(methodNames: ["viewDidLoad"])
        // The section's offset (64-bit: section at 32 + 72, offset field at +48) far past the end.
        file.replaceSubrange((32 + 72 + 48)..<(32 + 72 + 52), with: Data([0xFF, 0xFF, 0xFF, 0x7F]))
        #expect { try MachO.slices(in: file) } throws: {
            ($0 as? KizunaError)?.message == "Malformed Mach-O: section __objc_methname lies outside the file."
        }
        // A fat header claiming a thousand architectures (a Java class file also starts 0xcafebabe).
        #expect { try MachO.slices(in: Data([0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0x03, 0xE8]) + Data(count: 64)) } throws: {
            ($0 as? KizunaError)?.message.contains("lists 1000 architectures") == true
        }
    }

    @Test("the lint: denylisted names are errors, other leading underscores warnings, per binary with architectures")
    func lint() {
        #expect(PrivateSelectors.severity(of: "_terminateWithStatus:") == .error)
        #expect(PrivateSelectors.severity(of: "_myHelper") == .warning)
        #expect(PrivateSelectors.severity(of: "viewDidLoad") == nil)
        #expect(PrivateSelectors.severity(of: "__swift_hidden") == nil)
        let slices = [
            MachO.Slice(architecture: "arm64", methodNames: ["_myHelper", "_terminateWithStatus:", "viewDidLoad"]),
            MachO.Slice(architecture: "x86_64", methodNames: ["_terminateWithStatus:"]),
        ]
        #expect(
            SelectorFinding.findings(binary: "Payload/App.app/App", slices: slices) == [
                SelectorFinding(
                    binary: "Payload/App.app/App", selector: "_terminateWithStatus:", severity: .error, architectures: ["arm64", "x86_64"]),
                SelectorFinding(binary: "Payload/App.app/App", selector: "_myHelper", severity: .warning, architectures: ["arm64"]),
            ])
    }
}
