import Foundation
import HeraldStore
import HeraldTestSupport
import Testing

/// `POST /v1/admin/backup` while serving.
@Suite("serve: backup", .serverThreads)
struct BackupRouteTests {
    @Test("a backup taken while events arrive is the store at its last seq, tokens included; it serves once moved into place")
    func backupWhileServing() async throws {
        let directory = TemporaryDirectory("serve")
        let store = directory.child("store")
        let server = try await LiveServer(path: store)
        let first = (1...40).map { notifyLine(chat: "user:\($0 % 5)", id: $0) }.joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: first).status == 200)
        let created = try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"reader","scopes":["read:*"]}"#)
        let token = try #require(object(created.body)["token"] as? String)

        let writing = Task(executorPreference: ThreadExecutor.servers) {
            for id in 41...140 {
                _ = try await server.request(.POST, "/v1/events", body: notifyLine(chat: "user:\(id % 5)", id: id))
            }
        }
        let backup = directory.child("backup")
        let answer = try await server.request(.POST, "/v1/admin/backup", body: #"{"to":"\#(backup)"}"#)
        try await writing.value
        #expect(answer.status == 200, "\(answer.body)")
        let report = object(answer.body)
        let last = try #require(report["lastSeq"] as? Int)
        #expect(last >= 40 && last <= 140)
        #expect(report["environments"] as? [String] == ["serve", "."])
        #expect((report["verify"] as? [String: Any])?["clean"] as? Bool == true)

        let again = try await server.request(.POST, "/v1/admin/backup", body: #"{"to":"\#(backup)"}"#)
        #expect(again.status == 409, "\(again.body)")
        #expect(try await server.request(.POST, "/v1/admin/backup", body: #"{"to":"relative"}"#).status == 400)
        let anonymous = try await server.request(.POST, "/v1/admin/backup", body: #"{"to":"\#(directory.child("x"))"}"#, token: nil)
        #expect(anonymous.status == 401)
        let reader = try await server.request(.POST, "/v1/admin/backup", body: #"{"to":"\#(directory.child("x"))"}"#, token: token)
        #expect(reader.status == 403)
        #expect(!FileManager.default.fileExists(atPath: directory.child("x")))
        await server.stop()

        // The copy holds the source's records through its last seq, and nothing after.
        var options = Store.Options()
        options.readOnly = true
        let source = try Store(path: store, options: options)
        let copy = try Store(path: backup, options: options)
        #expect(copy.lastSeq == UInt64(last))
        #expect(try await copy.history.records() == source.history.records(through: UInt64(last)))
        #expect(copy.projection == (try source.projection(at: UInt64(last))))

        // Restored (moved into place with the server stopped), it serves, tokens and all.
        let restored = directory.child("restored")
        try FileManager.default.moveItem(atPath: backup, toPath: restored)
        let second = try await LiveServer(path: restored)
        let state = try await second.request(.GET, "/v1/accounts/tg:1/state", token: token)
        #expect(state.status == 200, "\(state.body)")
        #expect(object(state.body)["seq"] as? Int == last)
        await second.stop()
    }
}
