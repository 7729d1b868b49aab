import Foundation
import KizunaCore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Headless Chromium driven over the DevTools protocol on `--remote-debugging-pipe` (fd 3 in, fd 4 out, messages
/// separated by NUL), the transport Puppeteer uses; no WebSocket client needed.
final class Chromium {
    /// The browser binary: `KIZUNA_CHROMIUM`, else Debian's `chromium` on the PATH.
    static var executable: String? {
        if let path = ProcessInfo.processInfo.environment["KIZUNA_CHROMIUM"], !path.isEmpty { return path }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            for name in ["chromium", "chromium-browser", "google-chrome"] {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }

    /// Run the browser tests: Chromium is installed, or this is CI (where a missing browser then fails loudly).
    static var shouldRun: Bool { executable != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    private let pid: pid_t
    private let input: Int32
    private var iterator: AsyncStream<Data>.Iterator
    private var pending: [JSONValue] = []
    private var nextId = 0
    private let profile: URL

    /// Starts a fresh headless browser with its own empty profile.
    init() throws {
        let binary = try #require(Self.executable, "Chromium is not installed: apt-get install chromium (.ci/run does)")
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else { throw POSIXError(.EMFILE) }
        for fd in toBrowser + fromBrowser { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [
            binary, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-dev-shm-usage", "--window-size=800,900", "--user-data-dir=\(profile.path)", "about:blank",
        ]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, binary, &actions, nil, &argv, environ)
        close(toBrowser[0])
        close(fromBrowser[1])
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .ENOENT) }
        self.pid = pid
        input = toBrowser[1]

        // A dedicated thread does the blocking reads, so no task (nor the in-process server) waits on the pipe.
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        let output = fromBrowser[0]
        Thread {
            var buffer = Data()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(output, &chunk, chunk.count)
                if count <= 0 { break }
                buffer.append(contentsOf: chunk[0..<count])
                while let end = buffer.firstIndex(of: 0) {
                    continuation.yield(Data(buffer[buffer.startIndex..<end]))
                    buffer = Data(buffer[(end + 1)...])
                }
            }
            close(output)
            continuation.finish()
        }.start()
        iterator = stream.makeAsyncIterator()
    }

    /// Sends a command and returns its result, keeping events that arrive meanwhile for ``event(_:)``.
    @discardableResult
    func send(_ method: String, _ params: [String: JSONValue] = [:], session: String? = nil) async throws -> JSONValue {
        nextId += 1
        let id = nextId
        var message: [String: JSONValue] = ["id": .number(Double(id)), "method": .string(method), "params": .object(params)]
        if let session { message["sessionId"] = .string(session) }
        var bytes = try JSONEncoder().encode(JSONValue.object(message))
        bytes.append(0)
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(input, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { throw POSIXError(.EPIPE) }
                offset += written
            }
        }
        while let reply = try await next() {
            guard reply["id"]?.numberValue == Double(id) else {
                pending.append(reply)
                continue
            }
            if let error = reply["error"] { throw ChromiumError(method: method, detail: "\(error)") }
            return reply["result"] ?? .null
        }
        throw ChromiumError(method: method, detail: "the browser closed the pipe")
    }

    /// Waits for the next event named `method` (for `session`), including ones that arrived during earlier commands.
    @discardableResult
    func event(_ method: String, session: String? = nil) async throws -> JSONValue {
        func matches(_ message: JSONValue) -> Bool {
            message["method"]?.stringValue == method && (session == nil || message["sessionId"]?.stringValue == session)
        }
        if let index = pending.firstIndex(where: matches) { return pending.remove(at: index) }
        while let message = try await next() {
            if matches(message) { return message }
            pending.append(message)
        }
        throw ChromiumError(method: method, detail: "the browser closed the pipe")
    }

    /// Forgets events received so far (call before triggering the navigation whose events you will wait for).
    func dropEvents() { pending.removeAll() }

    private func next() async throws -> JSONValue? {
        guard let data = await iterator.next() else { return nil }
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Closes the browser and removes its profile.
    func quit() async {
        _ = try? await send("Browser.close")
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(input)
        try? FileManager.default.removeItem(at: profile)
    }
}

struct ChromiumError: Error, CustomStringConvertible {
    let method: String
    let detail: String
    var description: String { "\(method): \(detail)" }
}

/// A page (tab) of a ``Chromium``, attached with a flat session.
struct ChromiumPage {
    let browser: Chromium
    let session: String

    static func open(in browser: Chromium) async throws -> ChromiumPage {
        let target = try await browser.send("Target.createTarget", ["url": "about:blank"])
        let targetId = try #require(target["targetId"]?.stringValue)
        let attached = try await browser.send("Target.attachToTarget", ["targetId": .string(targetId), "flatten": true])
        let page = ChromiumPage(browser: browser, session: try #require(attached["sessionId"]?.stringValue))
        try await browser.send("Page.enable", session: page.session)
        try await browser.send("Network.enable", session: page.session)
        return page
    }

    /// Loads `url` and waits for its load event.
    func navigate(_ url: String) async throws {
        browser.dropEvents()
        try await browser.send("Page.navigate", ["url": .string(url)], session: session)
        try await browser.event("Page.loadEventFired", session: session)
    }

    /// Runs JavaScript and returns its value.
    @discardableResult
    func evaluate(_ expression: String) async throws -> JSONValue {
        let result = try await browser.send("Runtime.evaluate", ["expression": .string(expression), "returnByValue": true], session: session)
        if let exception = result["exceptionDetails"] { throw ChromiumError(method: "Runtime.evaluate", detail: "\(exception)") }
        return result["result"]?["value"] ?? .null
    }

    /// Runs JavaScript that navigates (a form submission, say) and waits for the next page's load event.
    func evaluateAndWaitForLoad(_ expression: String) async throws {
        browser.dropEvents()
        try await evaluate(expression)
        try await browser.event("Page.loadEventFired", session: session)
    }

    /// Presses a key as a keyboard would (`Tab`, `Enter`): a key-down and a key-up to the focused element.
    func press(_ key: String) async throws {
        let codes = ["Tab": 9, "Enter": 13]
        var event: [String: JSONValue] = ["key": .string(key), "code": .string(key), "windowsVirtualKeyCode": .number(Double(codes[key] ?? 0))]
        if key == "Enter" { event["text"] = "\r" }
        for type in ["keyDown", "keyUp"] {
            event["type"] = .string(type)
            try await browser.send("Input.dispatchKeyEvent", event, session: session)
        }
    }

    /// Presses a key that navigates (Enter on a form's button) and waits for the next page's load event.
    func pressAndWaitForLoad(_ key: String) async throws {
        browser.dropEvents()
        try await press(key)
        try await browser.event("Page.loadEventFired", session: session)
    }

    /// The browser's cookies for `url`.
    func cookies(for url: String) async throws -> [JSONValue] {
        try await browser.send("Network.getCookies", ["urls": [.string(url)]], session: session)["cookies"]?.arrayValue ?? []
    }

    /// A PNG of the viewport.
    func screenshot() async throws -> Data {
        let shot = try await browser.send("Page.captureScreenshot", ["format": "png"], session: session)
        return try #require(shot["data"]?.stringValue.flatMap { Data(base64Encoded: $0) })
    }
}
