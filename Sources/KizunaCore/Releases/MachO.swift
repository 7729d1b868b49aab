import Foundation

/// The Objective-C method names a Mach-O file carries, read from its `__TEXT,__objc_methname` sections.
///
/// Reads thin 32- and 64-bit files (either byte order) and fat files (`FAT_MAGIC`, `FAT_MAGIC_64`, big-endian headers),
/// walking `LC_SEGMENT`/`LC_SEGMENT_64` load commands. Every offset and size is checked against the bytes there are, so
/// a truncated or malformed file is a ``KizunaError`` (`bad_request`) saying what is wrong and where — never a crash.
public enum MachO {
    /// One architecture's method names.
    public struct Slice: Sendable, Hashable, Codable {
        /// `arm64`, `x86_64`, `arm64e`, … (`cpu 0x…` for one this reader has no name for).
        public var architecture: String
        /// The names in `__objc_methname`, in file order, without duplicates.
        public var methodNames: [String]

        public init(architecture: String, methodNames: [String]) {
            self.architecture = architecture
            self.methodNames = methodNames
        }
    }

    /// Whether `data` starts like a Mach-O file, thin or fat; the cheap test before ``slices(in:)``.
    public static func hasMachOMagic(_ data: Data) -> Bool {
        guard data.count >= 4 else { return false }
        let magic = ByteReader(data: data).uint32(at: 0, bigEndian: true) ?? 0
        return thinMagics.contains(magic) || fatMagics.contains(magic)
    }

    /// Every slice's method names: one slice for a thin file, one per architecture for a fat one.
    /// - Throws: `bad_request` when the file is not Mach-O or any header, load command or section reaches past its end.
    public static func slices(in data: Data) throws(KizunaError) -> [Slice] {
        let reader = ByteReader(data: data)
        guard let magic = reader.uint32(at: 0, bigEndian: true) else { throw malformed("the file is \(data.count) bytes, too short for a header") }
        if fatMagics.contains(magic) { return try fatSlices(reader, wide: magic == 0xCAFE_BABF) }
        return [try thinSlice(reader, at: 0, length: data.count)]
    }

    // Read as big-endian: cefaedfe/cffaedfe are the little-endian files (every Apple platform since Intel).
    private static let thinMagics: Set<UInt32> = [0xCEFA_EDFE, 0xCFFA_EDFE, 0xFEED_FACE, 0xFEED_FACF]
    private static let fatMagics: Set<UInt32> = [0xCAFE_BABE, 0xCAFE_BABF]

    private static func fatSlices(_ reader: ByteReader, wide: Bool) throws(KizunaError) -> [Slice] {
        guard let count = reader.uint32(at: 4, bigEndian: true) else { throw malformed("the fat header is truncated") }
        let entrySize = wide ? 32 : 20
        // A Java class file shares 0xcafebabe; no fat file has more than a handful of architectures.
        guard count > 0, count <= 64, 8 + Int(count) * entrySize <= reader.count else {
            throw malformed("the fat header lists \(count) architectures, more than the \(reader.count) bytes can hold")
        }
        var slices: [Slice] = []
        for index in 0..<Int(count) {
            let entry = 8 + index * entrySize
            let offset = wide ? reader.uint64(at: entry + 8, bigEndian: true) : reader.uint32(at: entry + 8, bigEndian: true).map(UInt64.init)
            let size = wide ? reader.uint64(at: entry + 16, bigEndian: true) : reader.uint32(at: entry + 12, bigEndian: true).map(UInt64.init)
            guard let offset, let size, let range = reader.range(offset: offset, length: size) else {
                throw malformed("architecture \(index + 1) of the fat file lies outside its \(reader.count) bytes")
            }
            slices.append(try thinSlice(reader, at: range.lowerBound, length: range.count))
        }
        return slices
    }

    private static func thinSlice(_ file: ByteReader, at start: Int, length: Int) throws(KizunaError) -> Slice {
        let reader = file.slice(start..<(start + length))
        guard let magic = reader.uint32(at: 0, bigEndian: true), thinMagics.contains(magic) else {
            throw malformed(start == 0 ? "not a Mach-O file (no Mach-O or fat magic number)" : "the slice at offset \(start) is not Mach-O")
        }
        let bigEndian = magic == 0xFEED_FACE || magic == 0xFEED_FACF
        let wide = magic == 0xCFFA_EDFE || magic == 0xFEED_FACF
        let headerSize = wide ? 32 : 28
        guard let cpuType = reader.uint32(at: 4, bigEndian: bigEndian), let cpuSubtype = reader.uint32(at: 8, bigEndian: bigEndian),
            let commandCount = reader.uint32(at: 16, bigEndian: bigEndian), reader.count >= headerSize
        else { throw malformed("the Mach-O header is truncated") }
        var names: [String] = []
        var position = headerSize
        for index in 0..<Int(commandCount) {
            guard let command = reader.uint32(at: position, bigEndian: bigEndian), let size = reader.uint32(at: position + 4, bigEndian: bigEndian),
                size >= 8, position + Int(size) <= reader.count
            else { throw malformed("load command \(index + 1) of \(commandCount) reaches past the end of the file") }
            if command == 0x19 || command == 0x1 {
                names += try methodNames(inSegment: reader, at: position, size: Int(size), wide: command == 0x19, bigEndian: bigEndian)
            }
            position += Int(size)
        }
        var seen: Set<String> = []
        return Slice(architecture: architectureName(cpuType, cpuSubtype), methodNames: names.filter { seen.insert($0).inserted })
    }

    /// The names in a segment command's `__TEXT,__objc_methname` sections.
    private static func methodNames(
        inSegment reader: ByteReader, at position: Int, size: Int, wide: Bool, bigEndian: Bool
    ) throws(KizunaError)
        -> [String]
    {
        let (commandSize, sectionSize) = wide ? (72, 80) : (56, 68)
        guard size >= commandSize, let sectionCount = reader.uint32(at: position + commandSize - 8, bigEndian: bigEndian),
            commandSize + Int(sectionCount) * sectionSize <= size
        else { throw malformed("a segment command at offset \(position) is shorter than its \(wide ? "64" : "32")-bit sections") }
        var names: [String] = []
        for index in 0..<Int(sectionCount) {
            let section = position + commandSize + index * sectionSize
            guard reader.string(at: section, length: 16) == "__objc_methname", reader.string(at: section + 16, length: 16) == "__TEXT" else {
                continue
            }
            let length =
                wide ? reader.uint64(at: section + 40, bigEndian: bigEndian) : reader.uint32(at: section + 36, bigEndian: bigEndian).map(UInt64.init)
            let offset = reader.uint32(at: section + (wide ? 48 : 40), bigEndian: bigEndian)
            guard let length, let offset, let range = reader.range(offset: UInt64(offset), length: length) else {
                throw malformed("section __objc_methname lies outside the file")
            }
            names += reader.bytes(range).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        }
        return names
    }

    private static func architectureName(_ type: UInt32, _ subtype: UInt32) -> String {
        switch (type, subtype & 0x00FF_FFFF) {
        case (0x0100_000C, 2): "arm64e"
        case (0x0100_000C, _): "arm64"
        case (0x0200_000C, _): "arm64_32"
        case (0x0100_0007, _): "x86_64"
        case (0x7, _): "i386"
        case (0xC, 11): "armv7s"
        case (0xC, 9): "armv7"
        case (0xC, _): "arm"
        default: "cpu 0x\(String(type, radix: 16))"
        }
    }

    private static func malformed(_ reason: String) -> KizunaError {
        KizunaError(.badRequest, "Malformed Mach-O: \(reason).")
    }
}

/// Bounds-checked reads from a window of bytes: every accessor answers `nil` (or an empty range) past the end.
private struct ByteReader {
    let data: Data
    let base: Int
    let count: Int

    init(data: Data) {
        self.data = data
        self.base = data.startIndex
        self.count = data.count
    }

    private init(data: Data, base: Int, count: Int) {
        self.data = data
        self.base = base
        self.count = count
    }

    /// The window `range` (offsets in this window) as a reader whose offsets start at 0.
    func slice(_ range: Range<Int>) -> ByteReader { ByteReader(data: data, base: base + range.lowerBound, count: range.count) }

    /// `offset..<offset+length` when it lies inside the window, checked without overflow.
    func range(offset: UInt64, length: UInt64) -> Range<Int>? {
        guard offset <= UInt64(count), length <= UInt64(count) - offset else { return nil }
        return Int(offset)..<Int(offset + length)
    }

    func bytes(_ range: Range<Int>) -> Data { data[(base + range.lowerBound)..<(base + range.upperBound)] }

    func uint32(at offset: Int, bigEndian: Bool) -> UInt32? { integer(at: offset, size: 4, bigEndian: bigEndian).map { UInt32($0) } }

    func uint64(at offset: Int, bigEndian: Bool) -> UInt64? { integer(at: offset, size: 8, bigEndian: bigEndian) }

    /// A fixed-size, NUL-padded name (segment and section names are 16 bytes).
    func string(at offset: Int, length: Int) -> String? {
        guard offset >= 0, offset + length <= count else { return nil }
        return String(decoding: bytes(offset..<(offset + length)).prefix { $0 != 0 }, as: UTF8.self)
    }

    private func integer(at offset: Int, size: Int, bigEndian: Bool) -> UInt64? {
        guard offset >= 0, offset <= count - size else { return nil }
        var value: UInt64 = 0
        for index in 0..<size {
            let byte = UInt64(data[base + offset + (bigEndian ? index : size - 1 - index)])
            value = value << 8 | byte
        }
        return value
    }
}
