import Foundation
import HeraldStore
import Hummingbird

extension Console {
    /// What the store page shows; every figure is a cheap read (no scan of the log).
    struct Health: Sendable {
        var lastSeq: UInt64
        var bounds: HistoryBounds
        /// Snapshot seqs, newest first, with the recorded time of the record at that seq.
        var snapshots: [(seq: UInt64, recorded: Int64?)]
        var fileBytes: Int
        var mapBytes: Int
        var usedBytes: Int
        var quarantined: Int
        var accounts: Int
    }

    /// `GET /console/store`: the store's health.
    func storePage() async throws -> Page {
        let path = store.path
        let health = try await store.run { store -> Health in
            let seqs = try store.snapshots.seqs().sorted(by: >)
            var snapshots: [(seq: UInt64, recorded: Int64?)] = []
            for seq in seqs.prefix(12) {
                let recorded = (try? store.history.records(from: seq, through: seq, limit: 1).first)?.recordedAt
                snapshots.append((seq, recorded))
            }
            let info = store.environmentInfo()
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
            return Health(
                lastSeq: store.lastSeq, bounds: try store.history.bounds(), snapshots: snapshots,
                fileBytes: (attributes?[.size] as? NSNumber)?.intValue ?? 0, mapBytes: info.mapSize, usedBytes: info.usedBytes,
                quarantined: try store.quarantine.all().count, accounts: store.projection.accounts.count)
        }
        let activity = try await store.activity()
        var page = Page(title: "Store", section: "store")
        let bounds = health.bounds
        page.body.raw("<h1>Store</h1><p class=\"meta\"><code>")
        page.body.text(path)
        page.body.raw("</code></p><section class=\"cards\">")
        let used = health.mapBytes > 0 ? Double(health.usedBytes) / Double(health.mapBytes) * 100 : 0
        let cards: [(String, String, String)] = [
            ("Last seq", "\(health.lastSeq)", "last-seq"),
            ("Accounts", "\(health.accounts)", "accounts"),
            ("Records in the log", "\(bounds.recordCountInLog)", "log-records"),
            ("Data file", HTML.bytes(health.fileBytes), "file-size"),
            ("Map used", String(format: "%.1f", used) + "% of " + HTML.bytes(health.mapBytes), "map-use"),
            ("Quarantined", "\(health.quarantined)", "quarantine"),
        ]
        for (label, value, id) in cards {
            page.body.raw("<div class=\"card\"><span class=\"label\">\(label)</span><span class=\"value\" id=\"\(id)\">")
            page.body.text(value)
            page.body.raw("</span></div>")
        }
        page.body.raw("</section><section><h2>History</h2><dl class=\"facts\">")
        let archive = bounds.hasArchive ? "present" : "none"
        let log = bounds.firstSeqInLog.map { "seq \($0) to \(bounds.lastSeqInLog)" } ?? "empty"
        let facts: [(String, String)] = [
            ("Archive", archive),
            ("Log", log),
            ("Highest seq given out", "\(bounds.highWaterSeq)"),
            ("Dropped (compacted without archive) through", bounds.droppedThrough.map { "seq \($0)" } ?? "nothing dropped"),
            ("Purged ranges", bounds.purgedRanges.isEmpty ? "none" : bounds.purgedRanges.map { "\($0.lowerBound)–\($0.upperBound)" }.joined(separator: ", ")),
        ]
        for (label, value) in facts {
            page.body.raw("<div><dt>\(label)</dt><dd>")
            page.body.text(value)
            page.body.raw("</dd></div>")
        }
        page.body.raw("</dl></section><section><h2>Snapshots</h2>")
        if health.snapshots.isEmpty {
            page.body.raw("<p class=\"empty\">No snapshot: a restart replays the whole log.</p>")
        } else {
            page.body.raw("<table class=\"snapshots\"><thead><tr><th class=\"n\">Seq</th><th class=\"n\">Events behind</th><th>Recorded</th></tr></thead><tbody>")
            for snapshot in health.snapshots {
                page.body.raw("<tr><td class=\"n\">\(snapshot.seq)</td><td class=\"n\">\(health.lastSeq - min(health.lastSeq, snapshot.seq))</td><td>")
                page.body.raw(snapshot.recorded.map { "<time>\(HTML.time(milliseconds: $0))</time>" } ?? "–")
                page.body.raw("</td></tr>")
            }
            page.body.raw("</tbody></table>")
        }
        page.body.raw("</section><section><h2>The last hour</h2><div class=\"charts\">")
        let minutes = activity.minutes
        page.body.raw(Chart.bars(minutes.map { Double($0.events) }, label: "Events appended per minute", unit: "events") { String(Int($0)) })
        if activity.hasRequests {
            page.body.raw(Chart.bars(
                minutes.map { $0.requests == 0 ? 0 : $0.latencyTotal / Double($0.requests) * 1000 }, label: "Mean request latency", unit: "ms"
            ) { String(format: "%.1f", $0) })
            page.body.raw(Chart.bars(minutes.map { $0.latencyMax * 1000 }, label: "Slowest request", unit: "ms") { String(format: "%.1f", $0) })
        }
        page.body.raw("</div><p class=\"meta\">")
        page.body.text(activity.note)
        page.body.raw(".</p></section>")
        return page
    }
}
