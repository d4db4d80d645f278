import Foundation
import HeraldEvents
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Testing

/// Compaction with archive retention while serving: disk stays bounded, and what is removed
/// was exported first.
@Suite("serve: archive retention", .serverThreads)
struct RetentionTests {
    @Test("steady ingest with compaction and a size limit: the archive stays bounded, and the exports hold every removed event")
    func boundedUnderSteadyLoad() async throws {
        let directory = TemporaryDirectory("serve-retention")
        let exports = directory.path + "/exports"
        let limit = 40_000
        let server = try await LiveServer(path: directory.path) {
            $0.retention = ArchiveRetention(maxBytes: limit, exportDirectory: exports)
        }
        var sizes: [Int] = []
        var expiredThrough: UInt64 = 0
        var id = 0
        for _ in 0..<8 {
            let body = (0..<300).map { _ in
                id += 1
                return notifyLine(chat: "user:\(id % 7)", id: id, body: "message \(id) with some text to take room")
            }.joined(separator: "\n")
            #expect(try await server.request(.POST, "/v1/events", body: body).status == 200)
            let compacted = try await server.request(.POST, "/v1/admin/compact")
            #expect(compacted.status == 200, "\(compacted.body)")
            let retention = try #require(object(compacted.body)["retention"] as? [String: Any])
            #expect((retention["archiveBytesAfter"] as? Int ?? .max) <= limit)
            expiredThrough = UInt64(retention["origin"] as? Int ?? 0)
            sizes.append(HeraldServerFileSize.of(directory.path + "/archive/data.mdb"))
        }
        // 2,400 events, ~400 kB of records; the archive's file stops growing once retention
        // starts (the store's own file holds the state, which grows with the notifications).
        #expect(expiredThrough > 1_000)
        #expect(sizes.suffix(5).max()! <= limit + 64 * 1024, "\(sizes)")
        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        #expect(metrics.contains("herald_archive_exported_ranges_total"))
        #expect(!metrics.contains("herald_archive_exported_ranges_total 0"))
        // A state before the kept history names the export.
        let early = try await server.request(.GET, "/v1/accounts/tg:1/state")
        #expect(early.status == 200)
        await server.stop()

        let atRemoved = try shell("\(quoted(HeraldBinary.path)) state --store \(quoted(directory.path)) --account tg:1 --at 5 --json")
        #expect(atRemoved.status != 0)
        #expect(atRemoved.stderr.contains("herald-archive-00000000000000000001-"), "\(atRemoved.stderr)")
        let storePath = quoted(directory.path), herald = quoted(HeraldBinary.path)
        let verified = try shell("\(herald) verify --store \(storePath)")
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.stderr.contains("expired under archive retention: exported to \(exports)/herald-archive-"), "\(verified.stderr)")
        let audit = try shell("\(herald) audit --store \(storePath) --account tg:1 --chat user:1 --object 2395")
        #expect(audit.status == 0, "\(audit)")
        #expect(audit.stderr.contains("expired under archive retention and was exported before removal (seqs 1…"), "\(audit.stderr)")

        // The exports, in name order, are a valid import: seqs 1…origin, the events posted.
        let rebuilt = directory.path + "/rebuilt"
        let imported = try shell(
            "zcat \(quoted(exports))/*.jsonl.gz | \(quoted(HeraldBinary.path)) import --store \(quoted(rebuilt)) --json -")
        #expect(imported.status == 0, "\(imported.stderr)")
        let store = try Store(path: rebuilt, options: { var o = Store.Options(); o.readOnly = true; return o }())
        var seqs: [UInt64] = []
        var bodies: [String] = []
        try store.history.forEach { record in
            seqs.append(record.seq)
            if case .notify(let notify) = record.event.payload { bodies.append(notify.body ?? "") }
            return true
        }
        #expect(seqs == Array(1...expiredThrough))
        #expect(bodies == (1...Int(expiredThrough)).map { "message \($0) with some text to take room" })
        let served = try Store(path: directory.path, options: { var o = Store.Options(); o.readOnly = true; return o }())
        var kept: [UInt64] = []
        try served.history.forEach { kept.append($0.seq); return true }
        #expect(kept == Array((expiredThrough + 1)...2_400))
    }

    @Test("expire-archive on request: a dry run changes nothing; without retention configured it is a 400")
    func expireOnRequest() async throws {
        let directory = TemporaryDirectory("serve-retention")
        let plain = try await LiveServer(path: directory.path)
        #expect(try await plain.request(.POST, "/v1/admin/expire-archive").status == 400)
        await plain.stop()
        let server = try await LiveServer(path: directory.path) {
            $0.retention = ArchiveRetention(maxAgeSeconds: 0, exportDirectory: directory.path + "/exports")
        }
        let body = (1...20).map { notifyLine(id: $0) }.joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: body).status == 200)
        _ = try await server.request(.POST, "/v1/admin/snapshot")
        // Compaction first archives 1…20; with no age allowed they expire in the same pass.
        let dry = try await server.request(.POST, "/v1/admin/expire-archive?dry_run=true")
        #expect(object(dry.body)["retention"].flatMap { ($0 as? [String: Any])?["recordsExpired"] as? Int } == 0)
        let compacted = object(try await server.request(.POST, "/v1/admin/compact").body)
        let retention = try #require(compacted["retention"] as? [String: Any])
        #expect(retention["origin"] as? Int == 20 && retention["recordsExpired"] as? Int == 20)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 21)).status == 200)
        #expect(object(try await server.request(.GET, "/v1/accounts/tg:1/state").body)["seq"] as? Int == 21)
        await server.stop()
    }

    @Test("a maintenance pass keeps an audit index the store has up to the log, and audits read it")
    func auditIndexKeptUp() async throws {
        let directory = TemporaryDirectory("serve-index")
        do {
            let store = try Store(path: directory.path)
            try store.appendBatch((1...5).map { (try Event(json: notifyLine(id: $0)), Source.library) })
            #expect(try store.auditIndex.catchUp(starting: true) == 5)
        }
        let server = try await LiveServer(path: directory.path)
        let body = (6...30).map { notifyLine(id: $0) }.joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: body).status == 200)
        _ = try await server.request(.POST, "/v1/admin/snapshot")
        #expect(try await server.request(.POST, "/v1/admin/compact").status == 200)
        await server.stop()
        let store = try Store(path: directory.path, options: { var o = Store.Options(); o.readOnly = true; return o }())
        #expect(try store.auditIndex.through() == 30)
        let report = try store.auditReport(account: "tg:1", target: .object(chat: "user:5", objectId: 28), listingUnchanged: false)
        #expect(try store.auditIndex.report(account: "tg:1", target: .object(chat: "user:5", objectId: 28)) == report)
        #expect(report.lines.first?.record.seq == 28)
    }

    @Test("compaction and retention run on their schedule while serving")
    func scheduled() async throws {
        let directory = TemporaryDirectory("serve-retention")
        let server = try await LiveServer(path: directory.path) {
            $0.compactSeconds = 1
            $0.retention = ArchiveRetention(maxAgeSeconds: 0, exportDirectory: directory.path + "/exports")
        }
        let body = (1...30).map { notifyLine(id: $0) }.joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: body).status == 200)
        var exported: [String] = []
        for _ in 0..<100 where exported.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            exported = (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/exports"))?.filter { !$0.hasPrefix(".") } ?? []
        }
        #expect(exported == [ArchiveRetention.exportName(first: 1, last: 30)])
        // The file is renamed into place before the pass ends and counts it.
        var metrics = ""
        for _ in 0..<100 where !metrics.contains("herald_archive_exported_records_total 30") {
            metrics = try await server.request(.GET, "/metrics", token: nil).body
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(metrics.contains("herald_archive_exported_records_total 30"), "\(metrics)")
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 31)).status == 200)
        #expect(object(try await server.request(.GET, "/v1/accounts/tg:1/state").body)["seq"] as? Int == 31)
        await server.stop()
    }
}

enum HeraldServerFileSize {
    static func of(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
