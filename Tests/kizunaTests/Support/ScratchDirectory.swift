import Foundation

/// Where tests put large files: memory (`/dev/shm`) where the system has it, else the temporary directory. Hundreds of
/// megabytes of dirty pages on the disk make every other test's fsync wait behind their flush (ext4 orders a
/// journal commit after the data), which once stalled the suite's SQLite and HTTP tests past their timeouts.
enum ScratchDirectory {
    static func make(_ prefix: String) throws -> URL {
        let memory = URL(fileURLWithPath: "/dev/shm")
        let base = FileManager.default.isWritableFile(atPath: memory.path) ? memory : FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
