import Crypto
import CryptoExtras
import Foundation
import KizunaCore
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Hashes and verifies passwords with scrypt (memory-hard), storing the parameters with each hash in the PHC
/// string format: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (unpadded base64).
///
/// - scrypt takes the whole password, so nothing is silently cut off (bcrypt stops at 72 bytes).
/// - Each hash names its own parameters: raising ``Parameters`` later still verifies old hashes, and
///   ``needsRehash(_:)`` says when to replace one at the next sign-in.
/// - Hashing is deliberately slow, so it runs on a thread pool of its own (one thread fewer than the cores, at least
///   one) at a lower priority, never on an event loop and never on NIO's shared blocking pool, where SQLite runs its
///   queries: a burst of sign-ins must not slow every other request. At most ``maxPending`` hashes run or wait at
///   once; past that the sign-in is refused with `unavailable` and `Retry-After` (after ``refusalDelay``, unless a
///   place frees), rather than queued without limit.
/// - Comparisons are constant-time, and ``verifyUnknownAccount(_:)`` spends the same work as a real check so a
///   sign-in with an unknown identifier takes as long as one with a known identifier.
package struct PasswordHasher: Sendable {
    /// scrypt's cost parameters.
    package struct Parameters: Sendable, Hashable {
        /// log2 of N, the CPU and memory cost.
        package var logN: Int
        /// The block size.
        package var r: Int
        /// The parallelism.
        package var p: Int

        /// N = 2^15, r = 8, p = 1: 32 MiB per hash (128 · r · N bytes). Sign-ins per second at this cost are
        /// measured in Benchmarks/RESULTS.md; raise it there, old hashes keep verifying.
        package static let standard = Parameters(logN: 15, r: 8, p: 1)

        package init(logN: Int, r: Int, p: Int) {
            self.logN = logN
            self.r = r
            self.p = p
        }
    }

    package let parameters: Parameters
    /// Hashes running or waiting before more are refused.
    package let maxPending: Int
    private let pool: NIOThreadPool
    private let pending = PendingCount()

    /// How long a password check with no place waits for one before it is refused.
    package let refusalDelay: Duration

    package init(
        parameters: Parameters = .standard, maxPending: Int = 32, refusalDelay: Duration = .seconds(1), pool: NIOThreadPool = PasswordHasher.pool
    ) {
        self.parameters = parameters
        self.maxPending = maxPending
        self.refusalDelay = refusalDelay
        self.pool = pool
    }

    /// The process's hashing threads: the cores less one (for the event loops and SQLite), at least one. Started once
    /// and never stopped, like NIO's own singletons.
    package static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(1, System.coreCount - 1))
        pool.start()
        return pool
    }()

    /// Hashes running or waiting now.
    package var pendingCount: Int { pending.value.load(ordering: .relaxed) }

    private final class PendingCount: Sendable {
        let value = Atomic<Int>(0)
    }

    /// Whether the current task already holds a place among the ``maxPending`` (see ``reserving(_:)``).
    @TaskLocal private static var holdsPlace = false

    /// Runs `body` holding one of the ``maxPending`` places, taken before `body` does any other work: a sign-in the
    /// server has no room for is refused before it reads the store, so a flood of them stays cheap. The hashes
    /// `body` makes run in that place.
    /// - Throws: `unavailable` with `retryAfter` when every place is still taken after ``refusalDelay``.
    package func reserving<T>(_ body: () async throws -> T) async throws -> T {
        if Self.holdsPlace { return try await body() }
        try await enter()
        defer { leave() }
        return try await Self.$holdsPlace.withValue(true) { try await body() }
    }

    /// Takes a place, or refuses with `unavailable` — after ``refusalDelay``, unless a place frees meanwhile.
    ///
    /// The delay is a suspended task: no thread, no store, no hashing. It is there for clients that ignore
    /// `Retry-After` and re-send at once: answered instantly, a few dozen of them turn refusals into thousands of
    /// requests a second that crowd out everything else; held for a second, each costs one request a second.
    private func enter() async throws {
        if tryEnter() { return }
        try await Task.sleep(for: refusalDelay)
        guard tryEnter() else { throw Self.busy }
    }

    private func tryEnter() -> Bool {
        guard pending.value.add(1, ordering: .relaxed).newValue <= maxPending else {
            pending.value.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    private func leave() {
        pending.value.subtract(1, ordering: .relaxed)
    }

    /// Runs `work` on the hashing pool, or refuses it when ``maxPending`` are already running or waiting.
    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        if !Self.holdsPlace { try await enter() }
        defer { if !Self.holdsPlace { leave() } }
        let queued = ContinuousClock.now
        return try await pool.runIfActive {
            // A hash that waited this long serves a client that has most likely given up; spending the CPU on it
            // would only make the next one wait longer (congestion collapse). Refuse it instead.
            guard ContinuousClock.now - queued < Self.longestWait else { throw Self.busy }
            Self.yieldToRequests()
            return try work()
        }
    }

    /// How long a hash may wait for a thread before it is refused as stale.
    static let longestWait = Duration.seconds(10)

    private static var busy: KizunaError {
        KizunaError(.unavailable, "The server is busy checking passwords; try again in a moment.", retryAfter: 1)
    }

    /// Lowers the calling hashing thread to nice 10 (Linux), so that when hashes and requests compete for a core the
    /// scheduler gives requests about nine tenths of it: a sign-in flood slows sign-ins, not everything else.
    /// Idempotent, and two system calls against ~100 ms of hashing.
    private static func yieldToRequests() {
        #if os(Linux)
            var path = [CChar](repeating: 0, count: 64)
            let count = readlink("/proc/thread-self", &path, path.count - 1)  // "<pid>/task/<tid>"
            let text = String(decoding: path.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard count > 0, let thread = text.split(separator: "/").last.flatMap({ id_t($0) }) else { return }
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, 10)
        #endif
    }

    /// A new PHC string for `password`, with a random 16-byte salt.
    package func hash(_ password: String) async throws -> String {
        let salt = randomBytes(16)
        let parameters = parameters
        let derived = try await run { try Self.derive(password, salt: salt, parameters) }
        return "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(Self.base64(salt))$\(Self.base64(derived))"
    }

    /// Whether `password` matches `stored`.
    /// - Throws: `internal_error` (without the hash in the message) when `stored` is not a hash this server wrote.
    package func verify(_ password: String, against stored: String) async throws -> Bool {
        let parsed = try Self.parse(stored)
        let derived = try await run { try Self.derive(password, salt: parsed.salt, parsed.parameters) }
        return constantTimeEquals(derived, parsed.hash)
    }

    /// Does the work of one verification and returns `false`: for sign-ins with an identifier that has no account.
    package func verifyUnknownAccount(_ password: String) async throws -> Bool {
        _ = try await verify(password, against: dummy)
        return false
    }

    /// Whether `stored` was made with other parameters than the current ones, so it should be replaced after the
    /// next successful sign-in.
    package func needsRehash(_ stored: String) -> Bool {
        (try? Self.parse(stored).parameters) != parameters
    }

    /// A fixed hash with the current parameters, for ``verifyUnknownAccount(_:)``.
    private var dummy: String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$AAAAAAAAAAAAAAAAAAAAAA$"
            + String(repeating: "A", count: 43)
    }

    private static func derive(_ password: String, salt: Data, _ parameters: Parameters) throws -> Data {
        let key = try KDF.Scrypt.deriveKey(
            from: Data(password.utf8), salt: salt, outputByteCount: 32, rounds: 1 << parameters.logN, blockSize: parameters.r,
            parallelism: parameters.p)
        return key.withUnsafeBytes { Data($0) }
    }

    private static func parse(_ stored: String) throws(KizunaError) -> (parameters: Parameters, salt: Data, hash: Data) {
        let fields = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt" else { throw malformed }
        var values: [Substring: Int] = [:]
        for pair in fields[2].split(separator: ",") {
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { throw malformed }
            values[parts[0]] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"], (1...24).contains(logN), (1...64).contains(r), (1...16).contains(p),
            let salt = unbase64(fields[3]), let hash = unbase64(fields[4]), !salt.isEmpty, hash.count == 32
        else { throw malformed }
        return (Parameters(logN: logN, r: r, p: p), salt, hash)
    }

    private static var malformed: KizunaError { KizunaError(.internalError, "A stored password hash is not in a format this server reads.") }

    private static func base64(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    private static func unbase64(_ text: Substring) -> Data? {
        let padded = String(text) + String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: padded)
    }
}
