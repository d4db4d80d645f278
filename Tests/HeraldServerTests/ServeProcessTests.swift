import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import HeraldEvents
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

/// `herald serve` as a process: the binary, its signals, and what survives a SIGKILL.
@Suite("serve: the herald serve process", .serverThreads)
struct ServeProcessTests {
    /// The `herald` executable (``HeraldBinary``).
    static let executable = HeraldBinary.path

    /// `herald serve` on a free port (or as `arguments` say), its stdout read until it listens.
    static func serveProcess(store: String, environment: [String: String] = [:], arguments: [String]? = nil) throws -> HeraldProcess {
        try HeraldProcess(
            arguments ?? ["serve", "--store", store, "--listen", "127.0.0.1:0", "--log-level", "warning"],
            environment: environment, marker: "listening on")
    }

    @Test("the admin token is printed once; SIGTERM drains, snapshots and exits 0")
    func sigterm() async throws {
        let directory = TemporaryDirectory("serve-process")
        let first = try Self.serveProcess(store: directory.path)
        #expect(first.port > 0)
        let tokenLine = try #require(first.lines.first { $0.hasPrefix("admin token") })
        let token = String(tokenLine.split(separator: " ").last!)
        let server = ProcessClient(port: first.port, token: token)
        #expect(try await server.post("/v1/events", notifyLine(id: 1) + "\n" + notifyLine(id: 2)).status == 200)
        // An open update stream must not hold the shutdown up: it ends, and the process exits.
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(first.port)/v1/accounts/tg:1/updates")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let stream = try await HTTPClient.shared.execute(request, timeout: LiveServer.requestTimeout)
        #expect(stream.status.code == 200)
        let started = ContinuousClock.now
        #expect(first.signal(SIGTERM) == 0)
        #expect(ContinuousClock.now - started < .seconds(10))
        var ended = false
        for try await _ in stream.body {}
        ended = true
        #expect(ended)
        let store = try Store(path: directory.path)
        #expect(try store.snapshots.seqs() == [2])
        _ = consume store

        let second = try Self.serveProcess(store: directory.path)
        #expect(!second.lines.contains { $0.hasPrefix("admin token") })
        #expect(try await ProcessClient(port: second.port, token: token).get("/v1/accounts/tg:1/counts").status == 200)
        #expect(second.signal(SIGTERM) == 0)
    }

    @Test("configuration from a JSON file, overridden by the environment, overridden by flags")
    func configurationLayers() async throws {
        let directory = TemporaryDirectory("serve-process")
        let file = directory.child("serve.json")
        let fromFile = directory.child("from-file")
        try Data(#"{"herald": {"store": "\#(fromFile)", "listen": "127.0.0.1:1", "max": {"body": {"bytes": 300}}}}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        // The file names the store and a body limit; the environment the listen address and
        // the admin token; a flag the snapshot interval.
        let process = try Self.serveProcess(
            store: fromFile, environment: ["HERALD_LISTEN": "127.0.0.1:0", "HERALD_ADMIN_TOKEN": "from-env"],
            arguments: ["serve", "--config", file, "--snapshot-seconds", "0", "--log-level", "warning"])
        #expect(process.port > 0)
        let client = ProcessClient(port: process.port, token: "from-env")
        #expect(try await client.post("/v1/events", notifyLine(id: 1)).status == 200)
        #expect(try await client.post("/v1/events", String(repeating: notifyLine(id: 2) + "\n", count: 3)).status == 413)
        #expect(process.signal(SIGTERM) == 0)
        #expect(FileManager.default.fileExists(atPath: fromFile + "/data.mdb"))
    }

    @Test("SIGKILL under load: every event acknowledged with 2xx is in the store, with its seq")
    func sigkillUnderLoad() async throws {
        let directory = TemporaryDirectory("serve-process")
        let process = try Self.serveProcess(store: directory.path, environment: ["HERALD_ADMIN_TOKEN": "kill-test"])
        let client = ProcessClient(port: process.port, token: "kill-test")
        final class Acknowledged: Sendable { let seqs = Mutex<[Int: UInt64]>([:]) }  // event id → seq
        let acknowledged = Acknowledged()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    for index in 0..<10_000 {
                        let id = worker * 100_000 + index + 1
                        guard let response = try? await client.post("/v1/events", notifyLine(chat: "w\(worker)", id: id)),
                            response.status == 200,
                            let seqs = object(response.body)["seqs"] as? [Int], let seq = seqs.first
                        else { return }
                        acknowledged.seqs.withLock { $0[id] = UInt64(seq) }
                    }
                }
            }
            group.addTask {
                // Kill mid-load: once a few hundred requests have been acknowledged (however
                // slow the machine), while the others are in flight.
                // (300 s: beside the whole suite on two cores, the child can go a minute
                // with little processor time.)
                let deadline = ContinuousClock.now + .seconds(300)
                while acknowledged.seqs.withLock({ $0.count }) < 300 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                _ = process.signal(SIGKILL)
            }
            try await group.waitForAll()
        }
        let acked = acknowledged.seqs.withLock { $0 }
        #expect(acked.count >= 300, "too few requests were acknowledged before the kill: \(acked.count)")
        print("serve SIGKILL test: \(acked.count) acknowledged events checked")
        let store = try Store(path: directory.path)
        var stored: [UInt64: Event] = [:]
        try store.history.forEach { stored[$0.seq] = $0.event; return true }
        for (id, seq) in acked {
            guard case .notify(let notify)? = stored[seq]?.payload else {
                Issue.record("acknowledged event \(id) (seq \(seq)) is missing after SIGKILL")
                continue
            }
            #expect(notify.id == Int64(id))
        }
    }
}

/// A minimal client for a server in another process.
struct ProcessClient: Sendable {
    let port: Int
    let token: String

    func post(_ path: String, _ body: String) async throws -> (status: Int, body: String) {
        try await send("POST", path, body)
    }

    func get(_ path: String) async throws -> (status: Int, body: String) {
        try await send("GET", path, nil)
    }

    private func send(_ method: String, _ path: String, _ body: String?) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(3))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: bytes))
    }
}
