import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

/// The public surface around `apply`: audit changes, configuration overrides, account
/// listing and removal, and the read-only views.
@Suite struct ProjectionAPITests {
    static func notify(_ chat: String, _ kind: NotificationKind, _ id: Int64, account: String = "a") -> Event {
        Event(account: account, .notify(Event.Notify(chat: chat, kind: kind, id: id, date: 100 + id)))
    }

    @Test func recordsLifecycleChanges() {
        var projection = Projection(configuration: .init(recordsChanges: true))
        var seq: UInt64 = 0
        func apply(_ event: Event) -> [Change] {
            seq += 1
            return projection.apply(event, seq: seq).changes
        }
        #expect(apply(Self.notify("c", .message, 1)) == [
            .becameUnread(chat: "c", objectId: 1),
            .groupCreated(groupId: 1, type: .messages, chat: "c"),
            .created(notificationId: 1, groupId: 1, chat: "c", kind: .message, objectId: 1),
        ])
        #expect(apply(Self.notify("c", .message, 1)) == [.ignored(chat: "c", kind: .message, objectId: 1, reason: .duplicate)])
        #expect(apply(Event(account: "a", .chatSettings(.init(chat: "c", muted: true)))) == [.cleared(notificationId: 1, reason: .muted)])
        #expect(apply(Self.notify("c", .message, 2)) == [
            .becameUnread(chat: "c", objectId: 2), .ignored(chat: "c", kind: .message, objectId: 2, reason: .muted),
        ])
        #expect(apply(Event(account: "a", .read(chat: "c", maxId: 2))) == [])
        #expect(apply(Self.notify("c", .message, 2)) == [.ignored(chat: "c", kind: .message, objectId: 2, reason: .alreadyRead)])
        #expect(apply(Event(account: "a", .delete(ids: [5], chat: "c"))) == [])
        #expect(apply(Self.notify("c", .message, 5)) == [.ignored(chat: "c", kind: .message, objectId: 5, reason: .deleted)])
        #expect(apply(Self.notify("s", .secretChat, 1)).contains(.created(notificationId: 2, groupId: 2, chat: "s", kind: .secretChat, objectId: 1)))
        #expect(apply(Self.notify("s", .secretChat, 2)) == [.ignored(chat: "s", kind: .secretChat, objectId: 2, reason: .secretChatExists)])
        #expect(apply(Event(account: "a", .dismiss(notificationId: 2))) == [.dismissed(notificationId: 2)])
        #expect(apply(Event(account: "a", .revoke)) == [.accountReset])
    }

    @Test func changesAreEmptyOnTheHotPath() {
        var projection = Projection()
        #expect(projection.apply(Self.notify("c", .message, 1), seq: 1).changes.isEmpty)
    }

    @Test func overridesWinOverOptionsEvents() {
        var projection = Projection(configuration: .init(groupCountMaxOverride: 1, groupSizeMaxOverride: 2))
        _ = projection.apply(Event(account: "a", .options(groupCountMax: 5, groupSizeMax: 5)), seq: 1)
        for (i, chat) in ["x", "y", "x", "x"].enumerated() {
            _ = projection.apply(Self.notify(chat, .message, Int64(i + 1)), seq: UInt64(i + 2))
        }
        let state = projection.account("a")!
        #expect(state.groupCountMax == 1 && state.groupSizeMax == 2)
        #expect(state.groups.count == 1)
        #expect(state.groups[0].notifications.map(\.objectId) == [3, 4])
        #expect(state.groups[0].totalCount == 3)
    }

    @Test func accountsAreListedInByteOrderAndCanBeRemoved() {
        var projection = Projection()
        for (i, name) in ["b", "a", "Z", "é", "ab"].enumerated() {
            _ = projection.apply(Self.notify("c", .message, 1, account: name), seq: UInt64(i + 1) * 10)
        }
        #expect(projection.accounts == ["Z", "a", "ab", "b", "é"])
        #expect(projection.seq == 50)
        projection.removeAccount("a")
        #expect(projection.accounts == ["Z", "ab", "b", "é"])
        #expect(projection.account("a") == nil)
        #expect(projection.activeNotifications(account: "a").isEmpty)
        #expect(projection.activeNotifications(account: "b").map(\.groupId) == [1])
        projection.checkAllInvariants()
        #expect(!projection.stateJSON().contains("\"account\":\"a\""))
        #expect(projection.stateJSON(accounts: "b").contains("\"account\":\"b\""))
        #expect(!projection.stateJSON(accounts: "b").contains("\"account\":\"ab\""))
    }

    @Test func activeNotificationsJSON() {
        var projection = Projection()
        _ = projection.apply(Self.notify("c", .mention, 7), seq: 1)
        #expect(projection.activeNotificationsJSON(account: "a") == """
            {"account":"a","groups":[{"groupId":1,"type":"mentions","chat":"c","totalCount":1,\
            "notifications":[{"id":1,"kind":"mention","objectId":7,"date":107,"silent":false,"partial":false}]}]}
            """)
    }

    @Test func namesAreComparedByBytes() {
        // "é" precomposed and decomposed are different chats: names are opaque bytes.
        var projection = Projection()
        _ = projection.apply(Self.notify("\u{E9}", .message, 1), seq: 1)
        _ = projection.apply(Self.notify("e\u{301}", .message, 1), seq: 2)
        #expect(projection.account("a")!.chats.count == 2)
        #expect(projection.statistics.liveNotifications == 2)
    }
}
