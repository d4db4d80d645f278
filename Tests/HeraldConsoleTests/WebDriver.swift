import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import NIOCore
import Testing

/// Headless Chromium driven through chromedriver's W3C WebDriver HTTP protocol: one
/// chromedriver process on a free loopback port, one session, a temporary profile. ``quit()``
/// ends the session, chromedriver and any Chromium of this profile, by their process ids.
final class Browser: Sendable {
    let driver: Process
    let port: Int
    let session: String
    let profile: String

    /// Whether Chromium and chromedriver are installed (`Tools/setup.sh`).
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
    }

    /// Starts chromedriver and a session; `directory` holds the profile.
    init(directory: TemporaryDirectory) async throws {
        let port = try freePort()
        let driver = Process()
        driver.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
        driver.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try driver.run()
        let profile = directory.child("chromium-profile")
        var session: String?
        do {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if let status = try? await Self.call(port: port, "GET", "/status"), (status["value"] as? [String: Any])?["ready"] as? Bool == true { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let capabilities: [String: Any] = [
                "capabilities": [
                    "alwaysMatch": [
                        "browserName": "chrome",
                        "goog:chromeOptions": [
                            "binary": "/usr/bin/chromium",
                            "args": [
                                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile)",
                                "--window-size=1200,900", "--no-first-run", "--disable-extensions",
                            ],
                        ],
                    ]
                ]
            ]
            let answer = try await Self.call(port: port, "POST", "/session", capabilities)
            session = (answer["value"] as? [String: Any])?["sessionId"] as? String
        } catch {
            Self.stop(driver, profile: profile)
            throw error
        }
        guard let session else {
            Self.stop(driver, profile: profile)
            throw BrowserError("chromedriver started no session")
        }
        self.driver = driver
        self.port = port
        self.session = session
        self.profile = profile
    }

    /// Runs `body` with a browser, and quits it afterwards, also when `body` throws.
    static func with<T>(_ directory: TemporaryDirectory, _ body: (Browser) async throws -> T) async throws -> T {
        let browser = try await Browser(directory: directory)
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            await browser.quit()
            throw error
        }
    }

    /// Ends the session, then chromedriver and whatever Chromium of this profile is left.
    func quit() async {
        _ = try? await Self.call(port: port, "DELETE", "/session/\(session)")
        Self.stop(driver, profile: profile)
    }

    static func stop(_ driver: Process, profile: String) {
        // chromedriver does not exit on SIGTERM; its session (and Chromium) is ended already.
        if driver.isRunning {
            kill(driver.processIdentifier, SIGKILL)
            driver.waitUntilExit()
        }
        // Chromium processes started with this profile (none after a clean DELETE).
        for pid in processes(withArgument: "--user-data-dir=\(profile)") { kill(pid, SIGKILL) }
    }

    /// The ids of processes whose command line has `argument`.
    static func processes(withArgument argument: String) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.contains(argument) ? pid : nil
        }
    }

    // MARK: Commands

    func go(_ url: String) async throws {
        _ = try await command("POST", "url", ["url": url])
    }

    var url: String {
        get async throws { try await command("GET", "url")["value"] as? String ?? "" }
    }

    /// Runs `script` (a function body) in the page; returns its value.
    @discardableResult
    func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await command("POST", "execute/sync", ["script": script, "args": arguments])["value"]
    }

    /// The text of an open alert, or `nil` when none is open.
    func alertText() async throws -> String? {
        let answer = try await Self.call(port: port, "GET", "/session/\(session)/alert/text", allowError: true)
        guard let value = answer["value"] as? String else { return nil }
        return value
    }

    /// A PNG of the viewport, written to `path`.
    func screenshot(to path: String) async throws {
        let encoded = try await command("GET", "screenshot")["value"] as? String ?? ""
        let data = try #require(Data(base64Encoded: encoded))
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Polls `script` (returning a boolean) until true or `timeout`; returns whether it became true.
    func wait(for script: String, timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if try await run(script) as? Bool == true { return true }
            try await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        return false
    }

    /// Signs in on the sign-in page the browser was sent to.
    func signIn(token: String) async throws {
        try await run("document.getElementById('token').value = arguments[0]; document.getElementById('signin').requestSubmit();", [token])
        #expect(try await wait(for: "return !document.getElementById('signin') && document.readyState === 'complete'", timeout: .seconds(10)))
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        try await Self.call(port: port, method, "/session/\(session)/\(path)", body)
    }

    static func call(port: Int, _ method: String, _ path: String, _ body: [String: Any]? = nil, allowError: Bool = false) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .init(rawValue: method)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))) }
        else if method == "POST" { request.body = .bytes(ByteBuffer(string: "{}")) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
        if response.status.code >= 400 && !allowError {
            throw BrowserError("WebDriver \(method) \(path): \(response.status.code) \(String(buffer: bytes).prefix(500))")
        }
        return object
    }
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A loopback TCP port free now (bound, then released).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BrowserError("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw BrowserError("bind failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}
