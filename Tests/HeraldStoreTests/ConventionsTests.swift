import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import HeraldTestSupport
import Testing

/// Issue #25: values and errors that explain themselves, and no clash with Foundation.
@Suite("Library conventions: descriptions, errors, Foundation")
struct ConventionsTests {
    @Test("Foundation's Notification and Herald's notification live side by side in one file")
    func noClashWithFoundation() {
        // Both modules are imported here: `Notification` is Foundation's, unambiguously.
        let name = Notification.Name("herald.test")
        let foundation = Notification(name: name)
        let herald = HeraldNotification(id: 1, kind: .message, objectId: 7, date: 100, title: "Ann", body: "hi")
        #expect(foundation.name == name && herald.id == 1)
    }

    @Test("print shows what a notification, group, update, account and record are, not their storage")
    func descriptions() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        let event = Event(account: "tg:1", .notify(.init(chat: "chat:5", kind: .message, id: 36, date: 100, title: "Alice", body: "message 36 with a long body")))
        let applied = try store.append(event)
        let account = try #require(store.account("tg:1"))
        let notification = try #require(account.groups.first?.notifications.first)
        #expect("\(notification)" == #"notification 1: message #36, active, "Alice: message 36 with a long body""#)
        #expect("\(account)".hasPrefix("account tg:1: unread 1, badge 1, mentions 0; 1 chat; visible: group 1 (messages of chat:5), total 1, shows 1"))
        #expect("\(applied)".contains("updateNotificationGroup 1 (messages of chat:5): +1, total 1"), "\(applied)")
        #expect("\(event)" == event.jsonString)
        #expect(String(reflecting: notification).hasPrefix(#"{"id":1"#), "\(String(reflecting: notification))")
        for text in ["\(notification)", "\(account)", "\(applied)", String(reflecting: account), "\(try store.history.records()[0])"] {
            #expect(!text.contains("PackedTexts") && !text.contains("Storage"), "\(text)")
        }
    }

    @Test("errors read through Foundation name the store, the seq or the field")
    func localizedErrors() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        do {
            try store.append(Event(account: "a", .read(chat: "c", maxId: 0)))
            Issue.record("an invalid event was appended")
        } catch {
            let text = (error as NSError).localizedDescription
            #expect(text.contains("maxId") && !text.contains("batch") && !text.contains("could not be completed"), "\(text)")
        }
        do {
            _ = try Store(path: dir.child("missing"), options: { var o = Store.Options(); o.create = false; return o }())
            Issue.record("a missing store opened")
        } catch {
            let text = error.localizedDescription
            #expect(text.contains(dir.child("missing")) && !text.contains("could not be completed"), "\(text)")
        }
    }
}
