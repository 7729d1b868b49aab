import Foundation
import Subprocess
import Testing

/// nginx, serving a directory on a loopback port for the length of a closure: the static host a team puts its gate
/// mirrors on.
enum Nginx {
    /// The nginx binary, if installed.
    static let path = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether to run tests that need it: when it is installed, and always under CI (which installs it), so a
    /// missing nginx fails there instead of skipping.
    static let shouldRun = path != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    /// Serves `root` while `body` runs, given the base URL; stops nginx after. `locations` go into the server block
    /// (`location = /path { return 503; }`); with `tls` (`ssl_certificate …; ssl_protocols …;`) it serves https.
    static func serve<R: Sendable>(_ root: URL, locations: String = "", tls: String? = nil, _ body: (URL) async throws -> R) async throws -> R {
        let nginx = try #require(path, "nginx is not installed (apt-get install nginx)")
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: prefix, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: prefix) }
        // Below Linux's ephemeral range and apart from TCPProxy's ports (a cut proxy must get its port back); another
        // port is tried when nginx cannot bind.
        for _ in 0..<20 {
            let port = Int.random(in: 12_000..<20_000)
            let config = prefix.appendingPathComponent("nginx.conf")
            try Self.config(root: root, prefix: prefix, port: port, locations: tls.map { "\($0) \(locations)" } ?? locations, ssl: tls != nil).write(
                to: config, atomically: true, encoding: .utf8)
            let (value, _) = try await ServeProcess.run(["-p", prefix.path, "-c", config.path], executable: nginx) { process -> R? in
                // The master starts its worker once it listens; an emergency (a taken port) ends the process instead.
                let started = await process.find { $0.contains("start worker process") ? "" : $0.contains("[emerg]") ? $0 : nil }
                guard started == "" else {
                    // Another port is tried only when this one is taken; any other emergency (a certificate nginx
                    // refuses) is the test's.
                    try #require(started?.contains("bind()") ?? true, "nginx: \(started ?? "")")
                    return nil
                }
                let url = try #require(URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)"))
                let value = try await body(url)
                await process.stop(.terminate)
                return value
            }
            if let value { return value }
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "nginx could not listen on any port tried"])
    }

    private static func config(root: URL, prefix: URL, port: Int, locations: String, ssl: Bool) -> String {
        """
        daemon off;
        worker_processes 1;
        error_log stderr notice;
        pid \(prefix.path)/nginx.pid;
        events { worker_connections 64; }
        http {
            access_log off;
            client_body_temp_path \(prefix.path)/body;
            proxy_temp_path \(prefix.path)/proxy;
            fastcgi_temp_path \(prefix.path)/fastcgi;
            uwsgi_temp_path \(prefix.path)/uwsgi;
            scgi_temp_path \(prefix.path)/scgi;
            types { application/json json; }
            server { listen 127.0.0.1:\(port)\(ssl ? " ssl" : ""); root \(root.path); \(locations) }
        }
        """
    }
}
