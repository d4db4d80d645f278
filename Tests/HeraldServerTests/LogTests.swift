import Foundation
import HeraldServer
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// Every log line the server writes, kept for inspection.
final class CollectedLogs: Sendable {
    let lines = Mutex<[String]>([])

    struct Handler: LogHandler {
        let logs: CollectedLogs
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            logs.lines.withLock { $0.append("\(event.level) \(event.message) \(all)") }
        }
    }
}

@Suite("serve: logs", .serverThreads)
struct LogTests {
    @Test("payload texts, tokens and keys never reach the logs, even at trace level and on errors")
    func noSecretsInLogs() async throws {
        let directory = TemporaryDirectory("serve")
        let logs = CollectedLogs()
        let server = try await LiveServer(path: directory.path) { configuration in
            configuration.logger = Logger(label: "herald.serve.test", factory: { _ in CollectedLogs.Handler(logs: logs) })
            configuration.logger.logLevel = .trace
        }
        let secret = "SECRET-TEXT-4711"
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1, body: secret)).status == 200)
        let bad = #"{"type":"notify","account":"tg:1","chat":"","kind":"message","id":2,"date":5,"body":"\#(secret)"}"#
        #expect(try await server.request(.POST, "/v1/events", body: bad).status == 400)
        #expect(try await server.request(.POST, "/v1/ingest?format=matrix&account=a", body: #"{"notification":{"event_id":"$x","content":{"body":"\#(secret)"},"devices":[]}}"#).status == 422)
        let created = try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"x","scopes":["ingest"]}"#)
        let token = try #require(object(created.body)["token"] as? String)
        #expect(try await server.request(.POST, "/_matrix/push/v1/notify", body: MatrixGatewayTests.notify(pushkeys: [secret]), token: nil).status == 200)
        #expect(try await server.request(.POST, "/v1/admin/pushkeys", body: #"{"pushkey":"\#(secret)","account":"mx:1"}"#).status == 201)
        await server.stop()
        let lines = logs.lines.withLock { $0 }
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(!line.contains(secret), "\(line)")
            #expect(!line.contains(token), "\(line)")
            #expect(!line.contains(LiveServer.adminToken), "\(line)")
        }
    }
}
