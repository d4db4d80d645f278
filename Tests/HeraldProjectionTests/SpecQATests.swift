import HeraldEvents
@testable import HeraldProjection
import HeraldTestSupport
import Testing

/// Hand-made event sequences checked rule by rule against SEMANTICS.md and STATE.md (not
/// against ``ReferenceProjection``, which could share a misreading). Every scenario also
/// checks that a replay without updates reaches the applied state and that a snapshot taken
/// after any event continues with the same updates.
@Suite struct SpecQATests {
    /// Runs canonical JSONL events through `apply` and returns each event's update line;
    /// checks the replay and snapshot paths against it on the way.
    static func run(
        _ lines: [String], configuration: Projection.Configuration = .init(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (updates: [String], projection: Projection) {
        let events = try lines.map { try Event(json: $0) }
        var applied = Projection(configuration: configuration)
        var outcomes: [Outcome] = []
        var updates: [String] = []
        for (index, event) in events.enumerated() {
            let seq = UInt64(index + 1)
            let outcome = applied.apply(event, seq: seq)
            outcomes.append(outcome)
            updates.append(Projection.updatesJSON(seq: seq, account: event.account, updates: outcome.updates))
        }
        applied.checkAllInvariants()
        // Replay without updates, settled at the end, then at every cut point.
        var replayed = Projection(configuration: configuration)
        for (index, event) in events.enumerated() { replayed.replay(event, seq: UInt64(index + 1)) }
        replayed.settleView()
        #expect(replayed == applied, "replay differs from apply", sourceLocation: sourceLocation)
        #expect(replayed.stateJSON() == applied.stateJSON(), sourceLocation: sourceLocation)
        for cut in 0..<events.count {
            var prefix = Projection(configuration: configuration)
            for (index, event) in events[..<cut].enumerated() { prefix.replay(event, seq: UInt64(index + 1)) }
            var restored = try Projection(snapshot: prefix.snapshot(), configuration: configuration)
            for index in cut..<events.count {
                let outcome = restored.apply(events[index], seq: UInt64(index + 1))
                #expect(
                    outcome.updates == outcomes[index].updates, "snapshot after seq \(cut): updates differ at seq \(index + 1)",
                    sourceLocation: sourceLocation)
            }
            #expect(restored.stateJSON() == applied.stateJSON(), "snapshot after seq \(cut)", sourceLocation: sourceLocation)
        }
        return (updates, applied)
    }

    /// Whether two JSON texts parse to equal values.
    static func sameJSON(_ a: String, _ b: String) throws -> Bool {
        try JSONParser.parse(Array(a.utf8)) == JSONParser.parse(Array(b.utf8))
    }

    // MARK: Builders of events and expected updates (JSON text)

    /// A `notify` of account `a`; `extra` is appended inside the object (`,"silent":true`).
    static func notify(_ chat: String, _ kind: String, _ id: Int, _ date: Int, _ extra: String = "", account: String = "a") -> String {
        #"{"type":"notify","account":"\#(account)","chat":"\#(chat)","kind":"\#(kind)","id":\#(id),"date":\#(date)\#(extra)}"#
    }

    /// Any other event of account `a`: `type` and the rest of its fields.
    static func event(_ type: String, _ fields: String = "", account: String = "a") -> String {
        #"{"type":"\#(type)","account":"\#(account)"\#(fields.isEmpty ? "" : ",")\#(fields)}"#
    }

    /// A notification in the JSON form of STATE.md.
    static func note(_ id: Int, _ kind: String, _ objectId: Int, _ date: Int, silent: Bool = false, partial: Bool = false, _ extra: String = "") -> String {
        #"{"id":\#(id),"kind":"\#(kind)","objectId":\#(objectId),"date":\#(date),"silent":\#(silent),"partial":\#(partial)\#(extra)}"#
    }

    /// An `updateNotificationGroup`.
    static func group(
        _ id: Int, _ type: String, _ chat: String, total: Int, silent: Bool = true, added: [String] = [], removed: [Int] = []
    ) -> String {
        #"{"type":"updateNotificationGroup","groupId":\#(id),"groupType":"\#(type)","chat":"\#(chat)","totalCount":\#(total),"isSilent":\#(silent),"added":[\#(added.joined(separator: ","))],"removedIds":[\#(removed.map(String.init).joined(separator: ","))]}"#
    }

    /// An `updateNotification`.
    static func content(_ groupId: Int, _ notification: String) -> String {
        #"{"type":"updateNotification","groupId":\#(groupId),"notification":\#(notification)}"#
    }

    /// Runs `events` (see ``run(_:configuration:sourceLocation:)``) and expects, for each, the
    /// updates listed (`nil` entries are not checked). Returns the projection.
    @discardableResult
    static func expectUpdates(
        _ events: [String], _ expected: [[String]?], configuration: Projection.Configuration = .init(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Projection {
        #expect(events.count == expected.count, "one expectation per event", sourceLocation: sourceLocation)
        let (lines, projection) = try run(events, configuration: configuration, sourceLocation: sourceLocation)
        for (index, line) in lines.enumerated() where index < expected.count {
            guard let updates = expected[index] else { continue }
            let account = try Event(json: events[index]).account
            let want = #"{"seq":\#(index + 1),"account":"\#(account)","updates":[\#(updates.joined(separator: ","))]}"#
            #expect(try sameJSON(line, want), "seq \(index + 1): \(events[index])\n  actual:   \(line)\n  expected: \(want)", sourceLocation: sourceLocation)
        }
        return projection
    }

    // MARK: SEMANTICS §4

    @Test("§4 rule 1: a full notify upgrades an active partial notification; everything else is a duplicate")
    func rule1UpgradeAndDuplicates() throws {
        try Self.expectUpdates(
            [
                Self.notify("c", "message", 1, 100, #","partial":true,"title":"P""#),
                Self.notify("c", "message", 1, 100, #","partial":true,"title":"P2""#),
                Self.notify("c", "message", 1, 101, #","title":"F","body":"b""#),
                Self.notify("c", "message", 1, 102, #","title":"G""#),
                Self.notify("c", "mention", 1, 103),
                Self.notify("c", "reaction", 1, 104, #","partial":true"#),
                Self.event("dismiss", #""notificationId":2"#),
                Self.notify("c", "reaction", 1, 105),
            ],
            [
                [Self.group(1, "messages", "c", total: 1, silent: false, added: [Self.note(1, "message", 1, 100, partial: true, #","title":"P""#)])],
                [],
                [Self.content(1, Self.note(1, "message", 1, 101, #","title":"F","body":"b""#))],
                [], [],
                [Self.group(2, "mentions", "c", total: 1, silent: false, added: [Self.note(2, "reaction", 1, 104, partial: true)])],
                [Self.group(2, "mentions", "c", total: 1, removed: [2])],
                [],
            ])
    }

    @Test("§4 rules 2–4 and §7 counts: read and deleted ids, unread objects, muted chats")
    func rules2To4() throws {
        let projection = try Self.expectUpdates(
            [
                Self.event("read", #""chat":"c","maxId":5"#),
                Self.notify("c", "message", 5, 100),
                Self.notify("c", "message", 6, 100),
                Self.event("delete", #""chat":"c","ids":[7]"#),
                Self.notify("c", "message", 7, 100),
                Self.event("delete", #""ids":[8]"#),
                Self.notify("d", "message", 8, 100),
                Self.event("chatSettings", #""chat":"c","muted":true"#),
                Self.notify("c", "message", 9, 100),
                Self.notify("c", "mention", 10, 101),
                Self.notify("c", "call", 1, 102),
            ],
            [
                [], [],
                [Self.group(1, "messages", "c", total: 1, silent: false, added: [Self.note(1, "message", 6, 100)])],
                [], [], [], [],
                [Self.group(1, "messages", "c", total: 0, removed: [1])],
                [],
                [Self.group(2, "mentions", "c", total: 1, silent: false, added: [Self.note(2, "mention", 10, 101)])],
                [Self.group(3, "calls", "c", total: 1, silent: false, added: [Self.note(3, "call", 1, 102)])],
            ])
        let account = try #require(projection.account("a"))
        #expect(account.unread == UnreadCounts(unread: 3, badge: 0, unreadMentions: 1))
        #expect(account.chats.map(\.chat) == ["c", "d"])
        #expect(account.chats[0].unread == 3 && account.chats[0].unreadMentions == 1 && account.chats[0].readMaxId == 5)
        #expect(account.chats[1].unread == 0)
    }

    @Test("§4 rule 5 (1.1): a pinned notification replaces the previous one, active or dismissed; one secret chat notification per chat")
    func rule5PinnedAndSecretChats() throws {
        try Self.expectUpdates(
            [
                Self.notify("c", "pinned", 1, 100),
                Self.notify("c", "pinned", 2, 101),
                Self.event("dismiss", #""notificationId":2"#),
                Self.notify("c", "pinned", 3, 102),
                Self.notify("s", "secretChat", 1, 103),
                Self.notify("s", "secretChat", 2, 104),
                Self.event("dismiss", #""notificationId":4"#),
                Self.notify("s", "secretChat", 3, 105),
            ],
            [
                [Self.group(1, "mentions", "c", total: 1, silent: false, added: [Self.note(1, "pinned", 1, 100)])],
                [Self.group(1, "mentions", "c", total: 1, silent: false, added: [Self.note(2, "pinned", 2, 101)], removed: [1])],
                [Self.group(1, "mentions", "c", total: 1, removed: [2])],
                // The dismissed pinned notification 2 is replaced too: it no longer counts.
                [Self.group(1, "mentions", "c", total: 1, silent: false, added: [Self.note(3, "pinned", 3, 102)])],
                [Self.group(2, "secretChat", "s", total: 1, silent: false, added: [Self.note(4, "secretChat", 1, 103)])],
                [],
                [Self.group(2, "secretChat", "s", total: 0, removed: [4])],
                [],
            ])
    }

    @Test("§4 edit (1.2): title and body replaced (absent kept) when partial matches; only active notifications")
    func edit() throws {
        try Self.expectUpdates(
            [
                Self.notify("c", "message", 1, 100, #","partial":true,"title":"T","body":"B","sender":"s""#),
                // A full edit never touches a push's notification.
                Self.event("edit", #""chat":"c","kind":"message","id":1,"body":"full""#),
                Self.event("edit", #""chat":"c","kind":"message","id":1,"partial":true,"body":"B2""#),
                Self.event("edit", #""chat":"c","kind":"message","id":2,"title":"x""#),
                Self.event("edit", #""chat":"c","kind":"reaction","id":1,"title":"x""#),
                Self.event("dismiss", #""notificationId":1"#),
                Self.event("edit", #""chat":"c","kind":"mention","id":1,"title":"Z""#),
            ],
            [
                [Self.group(1, "messages", "c", total: 1, silent: false, added: [Self.note(1, "message", 1, 100, partial: true, #","title":"T","body":"B","sender":"s""#)])],
                [],
                [Self.content(1, Self.note(1, "message", 1, 100, partial: true, #","title":"T","body":"B2","sender":"s""#))],
                [], [],
                [Self.group(1, "messages", "c", total: 1, removed: [1])],
                [],
            ])
    }

    // MARK: SEMANTICS §6

    @Test("§6 read, delete, readReactions, endCall; hidden notifications reappear when newer ones leave")
    func removals() throws {
        try Self.expectUpdates(
            [
                Self.event("options", #""groupSizeMax":2"#),
                Self.notify("c", "message", 1, 100),
                Self.notify("c", "message", 2, 101),
                Self.notify("c", "message", 3, 102),
                Self.event("delete", #""chat":"c","ids":[3]"#),
                Self.notify("c", "reaction", 2, 103),
                Self.event("read", #""chat":"c","maxId":2"#),
                Self.event("readReactions", #""chat":"c","ids":[2]"#),
                Self.notify("c", "call", 7, 104),
                Self.event("endCall", #""chat":"c","id":7"#),
                Self.event("endCall", #""chat":"c","id":7"#),
                Self.notify("c", "message", 2, 105),
                Self.notify("x", "message", 3, 105),
                Self.event("delete", #""ids":[3]"#),
            ],
            [
                [],
                [Self.group(1, "messages", "c", total: 1, silent: false, added: [Self.note(1, "message", 1, 100)])],
                [Self.group(1, "messages", "c", total: 2, silent: false, added: [Self.note(2, "message", 2, 101)])],
                [Self.group(1, "messages", "c", total: 3, silent: false, added: [Self.note(3, "message", 3, 102)], removed: [1])],
                [Self.group(1, "messages", "c", total: 2, added: [Self.note(1, "message", 1, 100)], removed: [3])],
                [Self.group(2, "mentions", "c", total: 1, silent: false, added: [Self.note(4, "reaction", 2, 103)])],
                [Self.group(1, "messages", "c", total: 0, removed: [1, 2])],
                [Self.group(2, "mentions", "c", total: 0, removed: [4])],
                [Self.group(3, "calls", "c", total: 1, silent: false, added: [Self.note(5, "call", 7, 104)])],
                [Self.group(3, "calls", "c", total: 0, removed: [5])],
                [], [],
                [Self.group(4, "messages", "x", total: 1, silent: false, added: [Self.note(6, "message", 3, 105)])],
                [Self.group(4, "messages", "x", total: 0, removed: [6])],
            ])
    }

    @Test("§6 dismiss and dismissGroup with and without a maximum id")
    func dismissals() throws {
        try Self.expectUpdates(
            [
                Self.notify("c", "message", 1, 100),
                Self.notify("c", "message", 2, 101),
                Self.notify("c", "message", 3, 102),
                Self.event("dismissGroup", #""groupId":1,"maxNotificationId":2"#),
                Self.event("dismiss", #""notificationId":1"#),
                Self.event("dismiss", #""notificationId":99"#),
                Self.event("dismissGroup", #""groupId":1"#),
                Self.event("read", #""chat":"c","maxId":3"#),
                Self.event("dismissGroup", #""groupId":7"#),
            ],
            [
                [Self.group(1, "messages", "c", total: 1, silent: false, added: [Self.note(1, "message", 1, 100)])],
                [Self.group(1, "messages", "c", total: 2, silent: false, added: [Self.note(2, "message", 2, 101)])],
                [Self.group(1, "messages", "c", total: 3, silent: false, added: [Self.note(3, "message", 3, 102)])],
                [Self.group(1, "messages", "c", total: 3, removed: [1, 2])],
                [], [],
                [Self.group(1, "messages", "c", total: 3, removed: [3])],
                [], [],
            ])
    }

    @Test("§8 options grow and shrink groupCountMax and groupSizeMax; hidden groups come back silently")
    func options() throws {
        try Self.expectUpdates(
            [
                Self.event("options", #""groupCountMax":1,"groupSizeMax":1"#),
                Self.notify("c1", "message", 1, 100),
                Self.notify("c1", "message", 2, 101),
                Self.notify("c2", "message", 1, 102),
                Self.event("options", #""groupSizeMax":3"#),
                Self.event("options", #""groupCountMax":2"#),
                Self.event("options", #""groupCountMax":1,"groupSizeMax":1"#),
                Self.event("dismiss", #""notificationId":3"#),
                Self.event("options", #""groupCountMax":0"#),
                Self.notify("c3", "message", 1, 103),
                Self.event("options", #""groupCountMax":25,"groupSizeMax":25"#),
            ],
            [
                [],
                [Self.group(1, "messages", "c1", total: 1, silent: false, added: [Self.note(1, "message", 1, 100)])],
                [Self.group(1, "messages", "c1", total: 2, silent: false, added: [Self.note(2, "message", 2, 101)], removed: [1])],
                [Self.group(1, "messages", "c1", total: 2, removed: [2]), Self.group(2, "messages", "c2", total: 1, silent: false, added: [Self.note(3, "message", 1, 102)])],
                [],
                [Self.group(1, "messages", "c1", total: 2, added: [Self.note(1, "message", 1, 100), Self.note(2, "message", 2, 101)])],
                [Self.group(1, "messages", "c1", total: 2, removed: [1, 2])],
                [Self.group(2, "messages", "c2", total: 1, removed: [3]), Self.group(1, "messages", "c1", total: 2, added: [Self.note(2, "message", 2, 101)])],
                [Self.group(1, "messages", "c1", total: 2, removed: [2])],
                [],
                [
                    Self.group(1, "messages", "c1", total: 2, added: [Self.note(1, "message", 1, 100), Self.note(2, "message", 2, 101)]),
                    Self.group(3, "messages", "c3", total: 1, added: [Self.note(4, "message", 1, 103)]),
                ],
            ])
    }

    @Test("§3 and §6 chatSettings (1.2 totals): routing at creation, clearing on turning on, nothing restored on turning off")
    func chatSettings() throws {
        let projection = try Self.expectUpdates(
            [
                Self.notify("c", "mention", 1, 100),
                Self.notify("c", "pinned", 2, 101),
                Self.notify("c", "reaction", 3, 102),
                Self.event("chatSettings", #""chat":"c","disableMentions":true"#),
                Self.notify("c", "mention", 4, 103),
                Self.event("chatSettings", #""chat":"c","disablePinned":true"#),
                Self.notify("c", "pinned", 5, 104),
                Self.event("chatSettings", #""chat":"c","disablePinned":false"#),
                Self.notify("c", "pinned", 6, 105),
                Self.event("chatSettings", #""chat":"c","muted":true"#),
                Self.event("chatSettings", #""chat":"c","muted":false,"disableMentions":false"#),
            ],
            [
                [Self.group(1, "mentions", "c", total: 1, silent: false, added: [Self.note(1, "mention", 1, 100)])],
                [Self.group(1, "mentions", "c", total: 2, silent: false, added: [Self.note(2, "pinned", 2, 101)])],
                [Self.group(1, "mentions", "c", total: 3, silent: false, added: [Self.note(3, "reaction", 3, 102)])],
                // Mention 1 stays an unread mention: the mentions total is 1 + the pinned one.
                [Self.group(1, "mentions", "c", total: 2, removed: [1, 3])],
                // The messages total is the chat's unread (3); the new unread mention raises the
                // mentions total to 3.
                [
                    Self.group(1, "mentions", "c", total: 3),
                    Self.group(2, "messages", "c", total: 3, silent: false, added: [Self.note(4, "mention", 4, 103)]),
                ],
                [Self.group(1, "mentions", "c", total: 2, removed: [2])],
                [Self.group(2, "messages", "c", total: 4, silent: false, added: [Self.note(5, "pinned", 5, 104)])],
                [],
                [
                    Self.group(1, "mentions", "c", total: 3, silent: false, added: [Self.note(6, "pinned", 6, 105)]),
                    Self.group(2, "messages", "c", total: 5, removed: [5]),
                ],
                [Self.group(2, "messages", "c", total: 0, removed: [4])],
                [],
            ])
        let account = try #require(projection.account("a"))
        #expect(account.unread == UnreadCounts(unread: 5, badge: 5, unreadMentions: 2))
    }

    @Test("§6 revoke removes every visible group and resets the account, counters and options included")
    func revoke() throws {
        let projection = try Self.expectUpdates(
            [
                Self.notify("c", "message", 1, 100),
                Self.notify("d", "call", 1, 101),
                Self.notify("e", "message", 1, 99),
                Self.event("options", #""groupCountMax":2,"groupSizeMax":3"#),
                Self.event("revoke"),
                Self.notify("e", "message", 1, 102),
                Self.event("note", #""source":"zulip","reason":"keepalive""#, account: "b"),
            ],
            [
                [Self.group(1, "messages", "c", total: 1, silent: false, added: [Self.note(1, "message", 1, 100)])],
                [Self.group(2, "calls", "d", total: 1, silent: false, added: [Self.note(2, "call", 1, 101)])],
                [Self.group(3, "messages", "e", total: 1, silent: false, added: [Self.note(3, "message", 1, 99)])],
                [Self.group(3, "messages", "e", total: 1, removed: [3])],
                [Self.group(1, "messages", "c", total: 0, removed: [1]), Self.group(2, "calls", "d", total: 0, removed: [2])],
                [Self.group(1, "messages", "e", total: 1, silent: false, added: [Self.note(1, "message", 1, 102)])],
                [],
            ])
        #expect(projection.accounts == ["a", "b"])
        let account = try #require(projection.account("a"))
        #expect(account.groupCountMax == 10 && account.groupSizeMax == 10)
        #expect(account.nextNotificationId == 2 && account.nextGroupId == 2)
        #expect(account.chats.map(\.chat) == ["e"])
    }

    // MARK: STATE.md

    @Test("STATE.md: the state form's keys, in order, and omitted optional strings")
    func stateForm() throws {
        let (_, projection) = try Self.run([
            Self.notify("c1", "message", 1, 100, #","silent":true,"title":"Alice","body":"hi","sender":"u5","thread":"t1""#),
            Self.notify("c0", "mention", 2, 101),
            Self.event("read", #""chat":"c0","maxId":1"#),
        ])
        let expected = """
            {"seq":3,"accounts":[{"account":"a","options":{"groupCountMax":10,"groupSizeMax":10},"clock":101,\
            "nextNotificationId":3,"nextGroupId":3,"unread":{"unread":2,"badge":2,"unreadMentions":1},\
            "chats":[{"chat":"c0","unread":1,"unreadMentions":1,"readMaxId":1,"muted":false,"mutedUntil":0,"disableMentions":false,"disablePinned":false},\
            {"chat":"c1","unread":1,"unreadMentions":0,"readMaxId":0,"muted":false,"mutedUntil":0,"disableMentions":false,"disablePinned":false}],\
            "groups":[{"groupId":2,"type":"mentions","chat":"c0","totalCount":1,"notifications":[{"id":2,"kind":"mention","objectId":2,"date":101,"silent":false,"partial":false}]},\
            {"groupId":1,"type":"messages","chat":"c1","totalCount":1,"notifications":[{"id":1,"kind":"message","objectId":1,"date":100,"silent":true,"partial":false,"title":"Alice","body":"hi","sender":"u5","thread":"t1"}]}]}]}
            """
        #expect(projection.stateJSON() == expected)
        #expect(Projection().stateJSON() == #"{"seq":0,"accounts":[]}"#)
    }

    // MARK: Texts are compared as bytes

    /// Precomposed "é" (U+00E9) and "e" + combining acute (U+0065 U+0301): canonically
    /// equivalent, so Swift's `String ==` calls them equal, but their bytes (and their JSON
    /// forms) differ.
    static let composed = "caf\u{E9}", decomposed = "cafe\u{301}"

    @Test("§9.3: an edit that changes only a text's bytes (Unicode normalization) changes its content")
    func contentIsBytes() throws {
        let events = [
            Self.notify("c", "message", 1, 100, #","title":"\#(Self.composed)","body":"\#(Self.composed)""#),
            Self.event("edit", #""chat":"c","kind":"message","id":1,"title":"\#(Self.decomposed)""#),
            Self.event("edit", #""chat":"c","kind":"message","id":1,"body":"\#(Self.decomposed)""#),
        ]
        try Self.expectUpdates(
            events,
            [
                nil,
                [Self.content(1, Self.note(1, "message", 1, 100, #","title":"\#(Self.decomposed)","body":"\#(Self.composed)""#))],
                [Self.content(1, Self.note(1, "message", 1, 100, #","title":"\#(Self.decomposed)","body":"\#(Self.decomposed)""#))],
            ])
        // The reference (and so the random workload tests) must agree.
        var reference = ReferenceProjection()
        var projection = Projection()
        for (index, line) in events.enumerated() {
            let event = try Event(json: line)
            #expect(reference.apply(event, seq: UInt64(index + 1)) == projection.apply(event, seq: UInt64(index + 1)).updates)
        }
    }

    @Test("HeraldNotification.hasSameContent and equality compare texts as bytes, consistently with hashing")
    func notificationTextsCompareAsBytes() {
        let a = HeraldNotification(id: 1, kind: .message, objectId: 1, date: 1, title: Self.composed, body: Self.composed)
        for b in [
            HeraldNotification(id: 1, kind: .message, objectId: 1, date: 1, title: Self.decomposed, body: Self.composed),
            HeraldNotification(id: 1, kind: .message, objectId: 1, date: 1, title: Self.composed, body: Self.decomposed),
            HeraldNotification(id: 1, kind: .message, objectId: 1, date: 1, title: Self.composed, sender: Self.decomposed),
        ] {
            #expect(!a.hasSameContent(as: b))
            #expect(a != b)
        }
        let texts = PackedTexts(body: Self.composed, sender: nil, thread: nil)
        let other = PackedTexts(body: Self.decomposed, sender: nil, thread: nil)
        #expect(texts != other)
        #expect(texts == PackedTexts(body: Self.composed, sender: nil, thread: nil))
    }
}
