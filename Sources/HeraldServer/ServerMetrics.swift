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
    let lastSeq: Gauge

    init() {
        commitLatency = registry.makeDurationHistogram(
            name: "herald_commit_latency_seconds", labels: [],
            buckets: [.microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                      .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1)],
            help: "Time from submitting a batch of events to its durable commit")
        sseClients = registry.makeGauge(name: "herald_sse_clients", labels: [], help: "Connected update-stream (SSE) clients")
        rejected = registry.makeCounter(name: "herald_payloads_rejected_total", labels: [], help: "Payloads rejected and quarantined")
        quarantineSize = registry.makeGauge(name: "herald_quarantine_entries", labels: [], help: "Payloads in the quarantine")
        logBytes = registry.makeGauge(
            name: "herald_store_used_bytes", labels: [], help: "Bytes of the store's live pages (log, snapshots, indexes)")
        storeFileBytes = registry.makeGauge(name: "herald_store_file_bytes", labels: [], help: "Size of the store's data.mdb")
        archiveBytes = registry.makeGauge(name: "herald_archive_file_bytes", labels: [], help: "Size of the archive's data.mdb")
        snapshotAge = registry.makeGauge(
            name: "herald_snapshot_age_events", labels: [], help: "Events appended since the newest snapshot")
        lastSeq = registry.makeGauge(name: "herald_last_seq", labels: [], help: "The seq of the last event appended")
    }

    /// The counters of ``appended(type:format:count:)``, by type and format.
    private let appendedCounters = Mutex<[String: Counter]>([:])

    /// Counts appended events by event type and source format.
    func appended(type: String, format: String, count: Int = 1) {
        let key = type + "\u{0}" + format
        let counter = appendedCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(
                name: "herald_events_appended_total", labels: [("type", type), ("format", format)],
                help: "Events appended, by event type and source format")
            counters[key] = counter
            return counter
        }
        counter.increment(by: Int64(count))
    }

    /// The exposition text.
    func render() -> [UInt8] { registry.emitToBuffer() }
}
