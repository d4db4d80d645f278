import HeraldEvents
@testable import HeraldProjection
import HeraldTestSupport
import Testing

/// The compact forms the projection keeps in memory give back exactly what went in.
///
/// Serialized: its cases are CPU-bound, seconds each in a debug build, so one at a time holds
/// a thread of the cooperative pool (see `ExecutorTrait`).
@Suite(.serialized) struct CompactStorageTests {
    /// Texts that could confuse a length-prefixed packing: empty, digits and colons, a
    /// packing mask letter, multi-byte UTF-8, and long enough to leave the small-string form.
    static let texts: [String?] = [
        nil, "", ":", "12:", "0", "a", "p", "Alice", "é🎉 naïve", "12:34:56",
        String(repeating: "long body with words ", count: 20),
    ]

    @Test("every combination of the three texts packs and unpacks exactly")
    func packedTextsRoundTrip() {
        var seen: Set<PackedTexts> = []
        var tuples = 0
        for body in Self.texts {
            for sender in Self.texts {
                for thread in Self.texts {
                    let packed = PackedTexts(body: body, sender: sender, thread: thread)
                    let unpacked = packed.unpacked()
                    #expect(unpacked.body == body && unpacked.sender == sender && unpacked.thread == thread)
                    // Canonical: packing the same texts again gives an equal value.
                    #expect(PackedTexts(body: body, sender: sender, thread: thread) == packed)
                    seen.insert(packed)
                    tuples += 1
                }
            }
        }
        // Different texts never pack alike.
        #expect(seen.count == tuples)
        #expect(PackedTexts(body: nil, sender: nil, thread: nil) == .none)
        #expect(PackedTexts(body: "", sender: nil, thread: nil) != .none)
        // The allocation is exact: a long body costs its bytes plus the header letter.
        let body = String(repeating: "x", count: 1_000)
        #expect(PackedTexts(body: body, sender: nil, thread: nil).byteCount == 1_001)
        #expect(PackedTexts(body: body, sender: "s", thread: nil).byteCount == 1_007)
    }

    /// Calls `body` with the UTF-8 bytes of four optional texts.
    static func withUTF8<R>(
        _ a: String?, _ b: String?, _ c: String?, _ d: String?,
        _ body: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?) -> R
    ) -> R {
        let bytes = [a, b, c, d].map { $0.map { Array($0.utf8) } }
        func pointer(_ index: Int, _ next: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
            guard let array = bytes[index] else { return next(nil) }
            return array.withUnsafeBufferPointer(next)
        }
        return pointer(0) { a in pointer(1) { b in pointer(2) { c in pointer(3) { d in body(a, b, c, d) } } } }
    }

    @Test("stored notifications, public notifications and unread messages stay small")
    func layouts() {
        #expect(MemoryLayout<StoredNotification>.stride <= 32)
        #expect(MemoryLayout<HeraldNotification>.stride <= 64)
        #expect(MemoryLayout<UnreadMessage>.stride == 16)
    }

    @Test("the text arena gives back every live slot's texts through stores, releases and compactions", arguments: [UInt64(1), 2, 3])
    func textArenaMatchesModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var arena = TextArena()
        var model: [UInt32: (title: String?, texts: PackedTexts)] = [:]
        var snapshots: [(TextArena, [UInt32: (title: String?, texts: PackedTexts)])] = []
        func text() -> String? { Self.texts[random.below(Self.texts.count)] }
        func check() {
            #expect(arena.count == model.count)
            for (slot, expected) in model {
                #expect(arena.title(slot) == expected.title)
                #expect(arena.texts(slot) == expected.texts)
            }
        }
        // Live slots rise to about 300 and then churn around it: stores and releases by the
        // thousand leave garbage the arena must reclaim while it is never empty.
        for step in 0..<20_000 {
            let grow = model.count < 300 ? random.chance(70) : random.chance(40)
            if grow || model.isEmpty {
                let title = text()
                let (body, sender, thread) = (text(), text(), text())
                let texts = PackedTexts(body: body, sender: sender, thread: thread)
                // Half the texts are packed straight into the page from their bytes, as a
                // restored snapshot's are; both ways must store the same packing.
                let slot =
                    random.chance(50)
                    ? arena.store(title: title, texts: texts)
                    : Self.withUTF8(title, body, sender, thread) { arena.store(title: $0, body: $1, sender: $2, thread: $3) }
                #expect(model[slot] == nil, "a slot in use was handed out again")
                model[slot] = (title, texts)
            } else {
                let slot = model.keys.sorted()[random.below(model.count)]
                arena.release(slot)
                model[slot] = nil
            }
            if step % 500 == 0 {
                check()
                snapshots.append((arena, model))
            }
        }
        check()
        // Copies taken along the way were not changed by the later work (copy on write).
        for (copy, expected) in snapshots {
            #expect(copy.count == expected.count)
            for (slot, texts) in expected { #expect(copy.title(slot) == texts.title && copy.texts(slot) == texts.texts) }
        }
        // The buffer stays within a constant factor of the live texts, not of everything ever stored.
        let liveBytes = model.values.reduce(0) { $0 + ($1.title?.utf8.count ?? 0) + $1.texts.byteCount }
        #expect(arena.allocatedBytes <= 4 * liveBytes + 16 * model.count + 4096)
        for slot in model.keys { arena.release(slot) }
        #expect(arena.count == 0 && arena.allocatedBytes == 0)
    }

    @Test("a text of no bytes keeps its page alive while the texts around it leave")
    func emptyTextKeepsItsPage() {
        var arena = TextArena()
        let body = String(repeating: "x", count: 50)
        let first = arena.store(title: "first", texts: PackedTexts(body: body, sender: nil, thread: nil))
        let empty = arena.store(title: "", texts: .none)  // inside the first page, after `first`
        let others = (0..<500).map { arena.store(title: "title \($0)", texts: PackedTexts(body: body, sender: nil, thread: nil)) }
        arena.release(first)
        for slot in others { arena.release(slot) }
        #expect(arena.count == 1)
        #expect(arena.title(empty) == "" && arena.texts(empty) == .none)
        // The pages whose texts all left are freed: the empty text's page and the page new
        // texts go to remain.
        #expect(arena.pageBytes <= 2 * TextArena.pageSize)
    }

    @Test("a text of no bytes after a full page gets a place of its own")
    func emptyTextAfterAFullPage() {
        var arena = TextArena()
        // Titles of 256, 512, 1024, 2048 and 4096 bytes each fill a fresh page exactly, the
        // last a full 4 KiB one; then a text of no bytes comes.
        var filled: [UInt32: String] = [:]
        for size in [256, 512, 1024, 2048, 4096] {
            let title = String(repeating: "t", count: size)
            filled[arena.store(title: title, texts: .none)] = title
        }
        let empty = arena.store(title: "", texts: .none)
        #expect(arena.title(empty) == "" && arena.texts(empty) == .none)
        for (slot, title) in filled { #expect(arena.title(slot) == title) }
        for slot in filled.keys { arena.release(slot) }
        #expect(arena.count == 1 && arena.title(empty) == "")
    }

    @Test("a notification's packed texts read and write like three fields")
    func notificationTexts() {
        let long = String(repeating: "é", count: 20)
        var notification = HeraldNotification(id: 1, kind: .message, objectId: 7, date: 100, body: "hi", thread: long)
        #expect(notification.body == "hi" && notification.sender == nil && notification.thread == long)
        notification.sender = "Ann"
        notification.body = nil
        #expect(notification.body == nil && notification.sender == "Ann" && notification.thread == long)
        notification.thread = ""
        #expect(notification.body == nil && notification.sender == "Ann" && notification.thread == "")
        // Equal texts make equal values, however they were reached.
        let direct = HeraldNotification(id: 1, kind: .message, objectId: 7, date: 100, sender: "Ann", thread: "")
        #expect(notification == direct && notification.hashValue == direct.hashValue)
        #expect(notification.hasSameContent(as: direct))
        notification.body = ""
        #expect(notification != direct && !notification.hasSameContent(as: direct))
    }

    @Test("a remembered message keeps its notification id and flags apart")
    func unreadMessagePacking() {
        for id: Int64 in [0, 1, 12_345, (1 << 56) - 1] {
            for kind in [NotificationKind.message, .mention, .pinned] {
                var message = UnreadMessage(id: 9, notificationId: id, kind: kind)
                #expect(message.notificationId == id && message.isMention == (kind == .mention) && message.isPinned == (kind == .pinned))
                #expect(message.isUnread && message.isUnreadMention == (kind == .mention) && !message.inMentionsGroup)
                message.notificationId = id / 2 + 1
                message.inMentionsGroup = true
                message.isUnread = false
                #expect(message.notificationId == id / 2 + 1 && message.isMention == (kind == .mention))
                #expect(message.inMentionsGroup && !message.isUnread && message.isUnreadMention == (kind == .mention))
                message.isUnreadMention = false
                let copy = UnreadMessage(id: 9, notificationId: message.notificationId, flags: message.flags)
                #expect(copy == message && !copy.isUnreadMention && copy.isPinned == (kind == .pinned))
            }
        }
    }
}
