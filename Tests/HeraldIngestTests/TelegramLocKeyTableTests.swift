import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Checks `schema/telegram-loc-keys.md` against the adapter: every row's key, in a payload
/// carrying every id a mapping may need, must produce the event its Herald column names.
///
/// The keys are those of tdlib/td `td/telegram/NotificationManager.cpp`
/// (`process_push_notification_payload`, `convert_loc_key`).
@Suite("Telegram loc_key table")
struct TelegramLocKeyTableTests {
    static let table = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schema/telegram-loc-keys.md")

    /// The rows: key (`""` for the empty key) and the Herald column.
    static func rows() throws -> [(key: String, herald: String)] {
        let text = try String(contentsOf: table, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5, cells[1].hasPrefix("`") || cells[1] == "(empty)" else { return nil }
            return (cells[1] == "(empty)" ? "" : cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[3])
        }
    }

    @Test func theTableListsTheKeysTheAdapterSinglesOut() throws {
        let keys = Set(try Self.rows().map(\.key))
        #expect(keys.count > 150)
        for key in TelegramAdapter.stateFreeKeys.keys { #expect(keys.contains(key), "\(key) is missing from the table") }
        for key in ["MESSAGE_ANNOUNCEMENT", "ENCRYPTED_MESSAGE", "VIDEO_CALL_REQUEST", "PHONE_CALL_MISSED", "READ_REACTION", ""] {
            #expect(keys.contains(key), "\(key) is missing from the table")
        }
    }

    @Test func everyRowMapsAsDocumented() throws {
        for (key, herald) in try Self.rows() {
            let line =
                #"{"loc_key":"\#(key)","loc_args":["Ada","Team","x"],"message":"hello","custom":{"chat_id":"8","msg_id":"40","call_id":"6001","max_id":"40","messages":"40","encryption_id":"31","random_id":"9","announcement":"5"}}"#
            let first = try #require(try events(line, .telegram, context(account: "a")).first, "\(key) produced nothing")
            // The first backquoted word of the Herald column is the event type; after
            // `notify`, the next word is the kind. A revoke honoured only when encrypted is a
            // note for this plain push.
            let words = herald.split(separator: " ")
            var type = String(words[0]).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            if herald.contains("when encrypted") { type = "note" }
            #expect(first.type.rawValue == type, "\(key): expected \(type), got \(first.payload)")
            if type == "notify", case .notify(let notify) = first.payload {
                #expect(notify.kind.rawValue == String(words[1]), "\(key): expected kind \(words[1]), got \(notify.kind)")
            }
        }
    }

    /// Keys changed after checking the table against tdlib/td `NotificationManager.cpp`
    /// (commit 022d60202e446ad1287b9fb68e687c8a0760788b) key by key: a key TDLib receives but
    /// ignores, and notifies by no other path, creates no notification.
    @Test func aSecretChatAcceptIsANoteAndARequestStaysANotice() throws {
        // NotificationManager.cpp:3366 `if (begins_with(loc_key, "ENCRYPTION_"))` → error 406:
        // TDLib drops both pushes. MessagesManager.cpp:32816 `force_create_dialog` makes the
        // new-secret-chat notification only when `!get_secret_chat_is_outbound(secret_chat_id)`:
        // an incoming request (ENCRYPTION_REQUEST) gets one when it arrives as an update, the
        // accept of the user's own request (ENCRYPTION_ACCEPT) never does.
        let accept = #"{"loc_key":"ENCRYPTION_ACCEPT","loc_args":["Ada"],"custom":{"encryption_id":"31"}}"#
        let accepted = try events(accept, .telegram, context(account: "tg:1"))
        #expect(accepted.map(\.type) == [.note])
        guard case .note(let source, let reason)? = accepted.first?.payload else { return }
        #expect(source == "telegram" && reason?.hasPrefix("ENCRYPTION_ACCEPT: ") == true)
        #expect(try Self.rows().first { $0.key == "ENCRYPTION_ACCEPT" }?.herald == "`note`")
        let request = #"{"loc_key":"ENCRYPTION_REQUEST","loc_args":["Ada"],"custom":{"encryption_id":"31"}}"#
        guard case .notify(let notice)? = try events(request, .telegram, context(account: "tg:1")).first?.payload else {
            Issue.record("ENCRYPTION_REQUEST made no notify")
            return
        }
        #expect(notice.kind == .secretChat && notice.chat == "secret:31" && notice.id == 31)
    }
}
