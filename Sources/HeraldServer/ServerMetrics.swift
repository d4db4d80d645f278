import HeraldConsole
import Prometheus
import Synchronization

/// The service's Prometheus metrics, in a registry of its own (no global bootstrap, so
/// several servers can run in one process, as the tests do). Every name starts `herald_`.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Time from submitting a batch to its durable commit.
    let commitLatency: DurationHistogram
    /// Connected Server-Sent Events clients.
    let sseClients: Gauge
    /// Payloads rejected (and quarantined) by `/v1/ingest` and the push endpoints.
    let rejected: Counter
    let quarantineSize: Gauge
    let logBytes: Gauge
    let storeFileBytes: Gauge
    let archiveBytes: Gauge
    let snapshotAge: Gauge
    /// Stored bytes of the archived records in the kept history, after the last retention pass.
    let archiveRecordBytes: Gauge
    /// Archive ranges that retention exported (then removed), their records and file bytes.
    let exportedRanges: Counter
    let exportedRecords: Counter
    let exportedFileBytes: Counter
    let lastSeq: Gauge
    /// Matrix notify devices whose pushkey is not registered (answered in `rejected`).
    let rejectedPushkeys: Counter
    /// Web Push bodies that did not decrypt (wrong keys, a bad header, a tampered record).
    let undecryptablePushes: Counter
    /// Quarantine entries dropped, oldest first, to keep it under its limit.
    let quarantineDropped: Counter
    /// Pushes to VAPID-bound subscriptions refused, by status: 401 (no valid token), 403
    /// (a valid token of another application server key).
    let vapidUnauthorized: Counter
    let vapidForbidden: Counter
    /// Requests to unauthenticated endpoints refused (429) by their rate limit, by route.
    let webPushRateLimited: Counter
    let matrixRateLimited: Counter
    /// `herald_http_requests_total` and `herald_http_request_duration_seconds`, by their labels
    /// (see ``RequestMetricsResponder``).
    let requestSeries = RequestSeries()
    /// The last hour by minute (events appended, request latency) for the console's store page.
    let activity = ConsoleActivity()
    /// Resident memory, open descriptors and CPU seconds, read at each scrape.
    let process: ProcessMetrics

    init() {
        process = ProcessMetrics(registry: registry)
        commitLatency = registry.makeDurationHistogram(
            descriptor: Self.name("commit_latency", "seconds", "Time from submitting a batch of events to its durable commit"),
            labels: [],
            buckets: [.microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                      .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1)])
        sseClients = registry.makeGauge(descriptor: Self.name("sse", "clients", "Connected update-stream (SSE) clients"), labels: [])
        rejected = registry.makeCounter(descriptor: Self.name("payloads_rejected", "total", "Payloads rejected and quarantined"), labels: [])
        quarantineSize = registry.makeGauge(descriptor: Self.name("quarantine", "entries", "Payloads in the quarantine"), labels: [])
        logBytes = registry.makeGauge(
            descriptor: Self.name("store_used", "bytes", "Bytes of the store's live pages (log, snapshots, indexes)"), labels: [])
        storeFileBytes = registry.makeGauge(descriptor: Self.name("store_file", "bytes", "Size of the store's data.mdb"), labels: [])
        archiveBytes = registry.makeGauge(descriptor: Self.name("archive_file", "bytes", "Size of the archive's data.mdb"), labels: [])
        snapshotAge = registry.makeGauge(
            descriptor: Self.name("snapshot_age", "events", "Events appended since the newest snapshot"), labels: [])
        archiveRecordBytes = registry.makeGauge(
            descriptor: Self.name("archive_records", "bytes", "Stored bytes of the archived records kept, after the last retention pass"),
            labels: [])
        exportedRanges = registry.makeCounter(
            descriptor: Self.name("archive_exported_ranges", "total", "Archive ranges exported to gzip JSONL, then removed"), labels: [])
        exportedRecords = registry.makeCounter(
            descriptor: Self.name("archive_exported_records", "total", "Archived records exported, then removed"), labels: [])
        exportedFileBytes = registry.makeCounter(
            descriptor: Self.name("archive_exported_file", "bytes_total", "Compressed bytes of the retention exports written"), labels: [])
        lastSeq = registry.makeGauge(descriptor: Self.name("last", "seq", "The seq of the last event appended"), labels: [])
        rejectedPushkeys = registry.makeCounter(
            descriptor: Self.name("matrix_pushkeys_rejected", "total", "Matrix notify devices with an unregistered pushkey"), labels: [])
        undecryptablePushes = registry.makeCounter(
            descriptor: Self.name("webpush_undecryptable", "total", "Web Push bodies that did not decrypt"), labels: [])
        quarantineDropped = registry.makeCounter(
            descriptor: Self.name("quarantine_dropped", "total", "Quarantine entries dropped, oldest first, to stay under the limit"),
            labels: [])
        let vapid = Self.name("webpush_vapid_refused", "total", "Web Push pushes to VAPID-bound subscriptions refused, by status")
        vapidUnauthorized = registry.makeCounter(descriptor: vapid, labels: [("status", "401")])
        vapidForbidden = registry.makeCounter(descriptor: vapid, labels: [("status", "403")])
        let limited = Self.name("endpoint_rate_limited", "total", "Requests to unauthenticated push endpoints refused by their rate limit, by route")
        webPushRateLimited = registry.makeCounter(descriptor: limited, labels: [("route", "/push/{token}")])
        matrixRateLimited = registry.makeCounter(descriptor: limited, labels: [("route", "/_matrix/push/v1/notify")])
    }

    /// The counters of ``appended(type:format:count:)``, by type and format.
    private let appendedCounters = Mutex<[String: Counter]>([:])

    /// Counts appended events by event type and source format.
    func appended(type: String, format: String, count: Int = 1) {
        activity.events(count)
        let key = type + "\u{0}" + format
        let counter = appendedCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(
                descriptor: Self.name("events_appended", "total", "Events appended, by event type and source format"),
                labels: [("type", type), ("format", format)])
            counters[key] = counter
            return counter
        }
        counter.increment(by: Int64(count))
    }

    /// `herald_NAME_UNIT`.
    static func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "herald", metricName: name, unitName: unit, helpText: help)
    }

    /// The exposition text, with the process's figures read now.
    func render() -> [UInt8] {
        process.update()
        return registry.emitToBuffer()
    }
}
