import Foundation
import HeraldStore
import Hummingbird

extension HeraldServer {
    /// `POST /v1/admin/backup` with `{"to": "/path"}`: ``StoreMaintenance/backup(to:)`` of the served
    /// store, into a directory on the server's machine that must not exist or be empty (409
    /// otherwise). The backup runs on the store's thread pool beside requests (it only reads);
    /// compaction and retention wait for it. Answers with the report as JSON.
    func addBackupRoute(to admin: some RouterMethods<BasicRequestContext>) {
        admin.post("backup") { request, context in
            let document = try await self.jsonObject(request)
            guard case .string(let destination)? = document["to"], destination.hasPrefix("/") else {
                throw ServerError.badRequest(field: "to", "required: an absolute path on the server for the new backup directory")
            }
            let report: BackupReport
            do {
                report = try await self.host.run { store in
                    try StoreMaintenance(path: store.path, options: store.options).backup(to: destination)
                }
            } catch let error as StoreError where error.code == .backupRefused {
                throw ServerError(.conflict, field: "to", error.reason ?? "")
            }
            self.logger.notice(
                "backup written", metadata: ["to": "\(destination)", "bytes": "\(report.bytes)", "lastSeq": "\(report.lastSeq)"])
            return Response.json(Array(report.json.utf8))
        }
    }
}
