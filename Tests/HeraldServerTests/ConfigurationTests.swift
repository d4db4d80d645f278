import Configuration
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Testing

/// The swift-configuration keys of `herald serve` that this branch added.
@Suite("serve: configuration keys", .serverThreads)
struct ConfigurationTests {
    @Test("retention is on when a limit is set, exporting into STORE/archive-exports unless told; compaction and idempotency windows read")
    func retentionKeys() throws {
        let plain = try ServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: ["herald.store": "/s"])))
        #expect(plain.retention == nil && plain.compactSeconds == 0 && plain.idempotencySeconds == 86_400)
        let configured = try ServerConfiguration(
            reading: ConfigReader(
                provider: InMemoryProvider(values: [
                    "herald.store": "/s", "herald.retention.max.bytes": 1000, "herald.compact.seconds": 60,
                    "herald.idempotency.seconds": 0,
                ])))
        #expect(configured.retention == ArchiveRetention(maxBytes: 1000, exportDirectory: "/s/archive-exports"))
        #expect(configured.compactSeconds == 60 && configured.idempotencySeconds == 0)
        let aged = try ServerConfiguration(
            reading: ConfigReader(
                provider: InMemoryProvider(values: [
                    "herald.retention.max.age.seconds": 3600, "herald.retention.export.directory": "/exports",
                ])))
        #expect(aged.retention == ArchiveRetention(maxAgeSeconds: 3600, exportDirectory: "/exports"))
    }
}
