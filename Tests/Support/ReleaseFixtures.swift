import Foundation

/// Small release artefacts built byte by byte for the `.ipa` inspector's tests: Mach-O files (thin 32/64-bit and
/// fat), CMS signed data around a profile, and the property lists of a bundle.
public enum ReleaseFixtures {
    public static let arm64: UInt32 = 0x0100_000C
    public static let x86_64: UInt32 = 0x0100_0007

    /// A little-endian Mach-O executable with one `__TEXT` segment holding `__objc_methname` with `methodNames`.
    public static func machO(methodNames: [String], cpuType: UInt32 = arm64, wide: Bool = true) -> Data {
        let names = Data(methodNames.flatMap { Array($0.utf8) + [0] })
        let (headerSize, commandSize, sectionSize) = wide ? (32, 72, 80) : (28, 56, 68)
        let dataOffset = headerSize + commandSize + sectionSize
        var file = Data()
        file.append(le32(wide ? 0xFEED_FACF : 0xFEED_FACE))
        file.append(le32(cpuType) + le32(0) + le32(2) + le32(1) + le32(UInt32(commandSize + sectionSize)) + le32(0))
        if wide { file.append(le32(0)) }
        // The segment command, then its one section.
        file.append(le32(wide ? 0x19 : 0x1) + le32(UInt32(commandSize + sectionSize)) + name("__TEXT"))
        let total = UInt64(dataOffset + names.count)
        file.append(wide ? le64(0) + le64(total) + le64(0) + le64(total) : le32(0) + le32(UInt32(total)) + le32(0) + le32(UInt32(total)))
        file.append(le32(5) + le32(5) + le32(1) + le32(0))
        file.append(name("__objc_methname") + name("__TEXT"))
        file.append(wide ? le64(UInt64(dataOffset)) + le64(UInt64(names.count)) : le32(UInt32(dataOffset)) + le32(UInt32(names.count)))
        file.append(le32(UInt32(dataOffset)) + le32(0) + le32(0) + le32(0) + le32(0x2) + le32(0) + le32(0))
        if wide { file.append(le32(0)) }
        file.append(names)
        return file
    }

    /// A fat file (`FAT_MAGIC`, or `FAT_MAGIC_64` when `wide`) of `slices`, each at a 16-byte boundary.
    public static func fat(_ slices: [(cpuType: UInt32, data: Data)], wide: Bool = false) -> Data {
        let entrySize = wide ? 32 : 20
        var header = be32(wide ? 0xCAFE_BABF : 0xCAFE_BABE) + be32(UInt32(slices.count))
        var body = Data()
        var offset = (8 + slices.count * entrySize + 15) / 16 * 16
        for slice in slices {
            header.append(be32(slice.cpuType) + be32(0))
            header.append(wide ? be64(UInt64(offset)) + be64(UInt64(slice.data.count)) : be32(UInt32(offset)) + be32(UInt32(slice.data.count)))
            header.append(be32(4))
            if wide { header.append(be32(0)) }
            let padded = (slice.data.count + 15) / 16 * 16
            body.append(slice.data + Data(count: padded - slice.data.count))
            offset += padded
        }
        header.append(Data(count: (16 - header.count % 16) % 16))
        return header + body
    }

    /// CMS `ContentInfo { signedData, SignedData { version, digestAlgorithms, encapContentInfo { data, [0] eContent },
    /// signerInfos } }` around `payload`, unsigned (no signer) — the shape the inspector reads. With `indefinite`, in
    /// BER with indefinite lengths and the content as a constructed OCTET STRING of two pieces, as Apple writes them.
    public static func signedData(_ payload: Data, indefinite: Bool = false) -> Data {
        func node(_ tag: UInt8, _ children: [Data]) -> Data {
            indefinite ? Data([tag, 0x80]) + children.reduce(Data(), +) + Data([0, 0]) : tlv(tag, children.reduce(Data(), +))
        }
        let sha256: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
        let data = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01])
        let signedData = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02])
        let half = payload.count / 2
        let content =
            indefinite
            ? node(0x24, [tlv(0x04, payload.prefix(half)), tlv(0x04, payload.dropFirst(half))]) : tlv(0x04, payload)
        let body = node(
            0x30,
            [
                tlv(0x02, Data([1])), tlv(0x31, tlv(0x30, Data(sha256) + tlv(0x05, Data()))),
                node(0x30, [data, node(0xA0, [content])]), tlv(0x31, Data()),
            ])
        return node(0x30, [signedData, node(0xA0, [body])])
    }

    /// A provisioning profile's property list.
    public static func profile(
        team: String, appID: String, expires: Date, aps: String? = "production", domains: Any? = nil, devices: [String]? = nil,
        getTaskAllow: Bool = false
    ) -> Data {
        var entitlements: [String: Any] = [
            "application-identifier": appID, "com.apple.developer.team-identifier": team, "get-task-allow": getTaskAllow,
            "keychain-access-groups": ["\(team).*"],
        ]
        if let aps { entitlements["aps-environment"] = aps }
        if let domains { entitlements["com.apple.developer.associated-domains"] = domains }
        var plist: [String: Any] = [
            "Name": "Fixture profile", "UUID": "00000000-0000-0000-0000-000000000001", "TeamIdentifier": [team],
            "ExpirationDate": expires, "CreationDate": Date(timeIntervalSince1970: 1_700_000_000), "Entitlements": entitlements,
        ]
        if let devices { plist["ProvisionedDevices"] = devices }
        return try! PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
    }

    /// An app's `Info.plist`, XML or binary.
    public static func infoPlist(
        bundleId: String, version: String = "3.0.0", build: String = "4321", executable: String, binary: Bool = false
    ) -> Data {
        let plist: [String: Any] = [
            "CFBundleIdentifier": bundleId, "CFBundleShortVersionString": version, "CFBundleVersion": build,
            "CFBundleExecutable": executable, "MinimumOSVersion": "17.0",
        ]
        return try! PropertyListSerialization.data(fromPropertyList: plist, format: binary ? .binary : .xml, options: 0)
    }

    private static func tlv(_ tag: UInt8, _ content: Data) -> Data {
        let length = content.count
        let header: [UInt8] =
            length < 0x80
            ? [tag, UInt8(length)] : length < 0x100 ? [tag, 0x81, UInt8(length)] : [tag, 0x82, UInt8(length >> 8), UInt8(length & 0xFF)]
        return Data(header) + content
    }

    private static func name(_ text: String) -> Data { Data(text.utf8) + Data(count: 16 - text.utf8.count) }
    private static func le32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    private static func le64(_ value: UInt64) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    private static func be32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }
    private static func be64(_ value: UInt64) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }
}
