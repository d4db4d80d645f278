import HeraldEvents
import HeraldStore
import LMDB
import Testing
import HeraldTestSupport

/// Record versions 1 and 2 (`schema/log-format.md`, "Record versions"): a record is marked
/// with the oldest version that holds its event, so stores written before SEMANTICS 1.2 read
/// as they are and a reader from before 1.2 refuses exactly the records it cannot read.
@Suite("Log record versions")
struct RecordVersionTests {
    static let account = "tg:1"

    /// Events whose encoding is the one written before 1.2.
    static let version1: [Event] = [
        Event(account: account, .notify(.init(chat: "c", kind: .mention, id: 5, date: 9, silent: true, partial: true, title: "t"))),
        Event(account: account, .delete(ids: [1], chat: nil)),
        Event(account: account, .chatSettings(.init(chat: "c", muted: true, disableMentions: true))),
        Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 0))),
        Event(account: account, .chatSettings(.init(chat: "c", disablePinned: false))),
        Event(account: account, .revoke),
    ]

    /// Events that use what 1.2 added.
    static let version2: [Event] = [
        Event(account: account, .notify(.init(chat: "c", kind: .message, id: 5, date: 9, unreadOnly: true))),
        Event(account: account, .readAll(chat: nil)),
        Event(account: account, .readMentions(chat: "c", ids: nil)),
        Event(account: account, .clearHistory(chat: "c", maxId: 8)),
        Event(account: account, .tick(now: 1_700_000_000)),
        Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 1_764_266_400))),
    ]

    static func record(_ event: Event) -> LogRecord {
        LogRecord(seq: 1, recordedAt: 1_700_000_000_000, source: .library, event: event)
    }

    @Test("a record is version 1 unless its event needs version 2, and reads back either way")
    func versionOfEachRecord() throws {
        for (events, version) in [(Self.version1, UInt8(1)), (Self.version2, 2)] {
            for event in events {
                let record = Self.record(event)
                #expect(LogRecord.formatVersion(of: event) == version, "\(event)")
                #expect(record.encoded.first == version, "\(event)")
                #expect(try record.encoded.withUnsafeBytes { try LogRecord(seq: 1, bytes: $0) } == record)
                #expect(try record.encoded.withUnsafeBytes { try LogRecord.decodeEvent($0) } == event)
            }
        }
        #expect(LogRecord.formatVersion == 2)
    }

    @Test("export lines of every record, version 1 or 2, read back as the same event and source")
    func exportLines() throws {
        for event in Self.version1 + Self.version2 {
            let record = LogRecord(seq: 7, recordedAt: 1_700_000_000_123, source: Source(format: "herald", digest: Array(0..<16)), event: event)
            var writer = JSONWriter()
            record.writeExportLine(to: &writer)
            let line = try ExportLine(Array(writer.string.utf8))
            #expect(line.event == event && line.seq == 7 && line.source == record.source, "\(writer.string)")
        }
    }

    @Test("a version this build does not know is refused by its number", arguments: [UInt8(0), 3, 255])
    func unknownVersion(version: UInt8) {
        var bytes = Self.record(Self.version2[0]).encoded
        bytes[0] = version
        Self.reseal(&bytes)
        let error = #expect(throws: LogRecord.Damage.self) { try bytes.withUnsafeBytes { try LogRecord(seq: 1, bytes: $0) } }
        #expect(error?.reason.hasPrefix("unknown record format version \(version) ") == true, "\(error?.reason ?? "")")
        #expect(throws: LogRecord.Damage.self) { try bytes.withUnsafeBytes { try LogRecord.decodeEvent($0) } }
    }

    /// Rewrites a record's checksum after its bytes were changed on purpose.
    static func reseal(_ bytes: inout [UInt8]) {
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<(bytes.count - 4)])) }
        bytes.replaceSubrange((bytes.count - 4)..., with: [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
    }

    @Test("a store whose log holds records written before 1.2 opens and replays under 1.2")
    func storeWrittenBefore12() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            for id in Int64(1)...3 {
                try store.append(Event(account: "a", .notify(.init(chat: "c", kind: .message, id: id, date: 1_700_000_000 + id))))
            }
            try store.append(Event(account: "a", .note(source: nil, reason: nil)))
        }
        // Seq 4 becomes `chatSettings` a/c muted true, as a build before 1.2 wrote it: record
        // version 1, settings byte 0x02 (mute code 2, true), no date.
        var old: [UInt8] = [0x01, 0x00, 0x80, 0xD0, 0x95, 0xFF, 0xBC, 0x31, 0x07] + Array("library".utf8)
        old += [10, 1, 0x61, 1, 0x63, 0x02, 0, 0, 0, 0]
        Self.reseal(&old)
        do {
            let environment = try Environment(path: dir.path)
            let log = try #require(try environment.openDatabase("log"))
            try environment.write { txn in try txn.put(log, key: SeqKey(4).bytes, value: old) }
        }
        let store = try Store(path: dir.path)
        let muted = Event(account: "a", .chatSettings(.init(chat: "c", mutedUntil: Event.ChatSettings.mutedForever)))
        #expect(try store.history.records().last?.event == muted)
        // The event reads as 1.2's `mutedUntil` 2147483647, and today's writer makes the same bytes.
        #expect(LogRecord(seq: 4, recordedAt: 1_700_000_000_000, source: .library, event: muted).encoded == old)
        let chat = try #require(store.account("a")?.chats.first)
        #expect(chat.muted)
        #expect(store.account("a")?.unread.badge == 0)
        #expect(try store.verify().isClean)
    }
}
