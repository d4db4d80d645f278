import Foundation
import HeraldEvents
import HeraldStore
import Hummingbird

/// What one maintenance pass did: compaction, then archive retention.
struct MaintenanceReport: Sendable {
    var compaction: CompactionReport
    var retention: RetentionReport?
}

extension HeraldServer {
    /// Snapshot, then with the store closed: compaction into the archive (or discarding the
    /// history), then archive retention when configured (the expired range exported before
    /// removal). Requests wait meanwhile; update streams end and resume by seq.
    func maintain(discardingHistory: Bool = false) async throws -> MaintenanceReport {
        let options = configuration.storeOptions
        let retention = configuration.retention
        _ = try await snapshotIfNeeded()
        let report = try await host.withStoreClosed { path in
            let maintenance = StoreMaintenance(path: path, options: options)
            let compaction = try maintenance.compact(discardingHistory: discardingHistory)
            let expired = try retention.map { try maintenance.expireArchive(retention: $0) }
            return MaintenanceReport(compaction: compaction, retention: expired)
        }
        logger.notice("compacted", metadata: ["base": "\(report.compaction.base)", "archived": "\(report.compaction.recordsArchived)"])
        if let retention = report.retention {
            metrics.archiveRecordBytes.set(Double(retention.archiveBytesAfter))
            if let range = retention.expiredRange {
                metrics.exportedRanges.increment()
                metrics.exportedRecords.increment(by: Int64(retention.recordsExpired))
                metrics.exportedFileBytes.increment(by: Int64(retention.exportFileBytes))
                logger.notice(
                    "archive range exported and removed",
                    metadata: ["first": "\(range.lowerBound)", "last": "\(range.upperBound)", "file": "\(retention.exportFile ?? "")"])
            }
        }
        // An audit index the store has is brought up to the log (none is started here).
        let indexed = try await host.run { store in try store.auditIndex.catchUp() }
        if indexed > 0 { logger.info("audit index caught up", metadata: ["through": "\(indexed)"]) }
        return report
    }

    /// `POST /v1/admin/compact` and `POST /v1/admin/expire-archive` (`?dry_run=true`: what
    /// retention would export and remove now).
    func addMaintenanceRoutes(to admin: some RouterMethods<BasicRequestContext>) {
        admin.post("compact") { request, context in
            let discard = request.uri.queryParameters.get("discard_history") == "true"
            let report = try await self.maintain(discardingHistory: discard)
            let compaction = report.compaction
            var fields: [String: JSONValue] = [
                "base": .int(compaction.base), "previousBase": .int(compaction.previousBase),
                "recordsRemoved": .int(compaction.recordsRemoved), "recordsArchived": .int(compaction.recordsArchived),
                "historyDiscarded": .bool(compaction.historyDiscarded),
                "snapshotsRemoved": .array(compaction.snapshotsRemoved.map { .int($0) }),
                "bytesBefore": .int(compaction.bytesBefore), "bytesAfter": .int(compaction.bytesAfter),
            ]
            if let retention = report.retention { fields["retention"] = Self.json(retention) }
            return JSONValue.object(fields).response()
        }
        admin.post("expire-archive") { request, context in
            guard let retention = self.configuration.retention else {
                throw ServerError.badRequest(
                    field: "herald.retention.max.age.seconds", "no retention is configured (herald.retention.max.age.seconds or .max.bytes)")
            }
            guard request.uri.queryParameters.get("dry_run") == "true" else {
                let report = try await self.maintain()
                return JSONValue.object(["retention": report.retention.map(Self.json) ?? .null]).response()
            }
            let options = self.configuration.storeOptions
            let plan = try await self.host.run { store in
                try StoreMaintenance(path: store.path, options: options).expireArchive(retention: retention, dryRun: true)
            }
            return JSONValue.object(["retention": Self.json(plan)]).response()
        }
    }

    /// A retention report as JSON (`schema/serve-tables.md`).
    static func json(_ report: RetentionReport) -> JSONValue {
        var fields: [String: JSONValue] = [
            "dryRun": .bool(report.dryRun), "previousOrigin": .int(report.previousOrigin), "origin": .int(report.origin),
            "recordsExpired": .int(report.recordsExpired),
            "archiveBytesBefore": .int(report.archiveBytesBefore), "archiveBytesAfter": .int(report.archiveBytesAfter),
        ]
        if let file = report.exportFile {
            fields["exportFile"] = .string(file)
            fields["exportFileBytes"] = .int(report.exportFileBytes)
        }
        return .object(fields)
    }
}
