/// The compact binary encoding of canonical events, as stored in log records.
/// `schema/log-format.md` documents every byte; keep the two in step.
extension Event {
    /// The version of this encoding. It is not written with the event: a log record's own
    /// version byte (`LogRecord.formatVersion`, which any change to this encoding bumps;
    /// `schema/log-format.md`) is what readers check and reject. Version 2 (SEMANTICS 1.2)
    /// adds tags 13–16, the notify flag `unreadOnly` (bit 6) and the chatSettings mute code 3;
    /// an event that uses none of them encodes as in version 1, byte for byte
    /// (`binaryVersionRequired`).
    public static let binaryVersion: UInt8 = 2

    /// The oldest version of this encoding that can hold this event: 2 when it uses what
    /// version 2 added (a `readAll`, `readMentions`, `tick` or `delete` with `maxId`; a
    /// `notify` with `unreadOnly`; a `chatSettings` whose `mutedUntil` is neither 0 nor
    /// ``ChatSettings/mutedForever``), else 1. A log record is marked with it, so that a
    /// reader from before 1.2 refuses such a record by its version instead of misreading it.
    package var binaryVersionRequired: UInt8 {
        switch payload {
        case .readAll, .readMentions, .tick, .clearHistory: 2
        case .notify(let n): n.unreadOnly ? 2 : 1
        case .chatSettings(let s): s.mutedUntil == nil || s.muted != nil ? 1 : 2
        case .edit, .read, .delete, .readReactions, .endCall, .dismiss, .dismissGroup, .options, .revoke, .note: 1
        }
    }

    /// Wire tags of event types. Never renumber: they are on disk.
    enum Tag: UInt8 {
        case notify = 1, edit, read, delete, readReactions, endCall, dismiss, dismissGroup
        case options, chatSettings, revoke, note
        // SEMANTICS 1.2.
        case readAll, readMentions, tick, clearHistory
    }

    /// Wire codes of notification kinds. Never renumber: they are on disk.
    static func kindCode(_ kind: NotificationKind) -> UInt8 {
        switch kind {
        case .message: 0
        case .mention: 1
        case .pinned: 2
        case .reaction: 3
        case .call: 4
        case .secretChat: 5
        }
    }

    static let kindsByCode: [NotificationKind] = [.message, .mention, .pinned, .reaction, .call, .secretChat]

    /// Appends the binary encoding of this event to `writer`.
    package func encode(to writer: inout ByteWriter) {
        switch payload {
        case .notify(let n):
            writer.byte(Tag.notify.rawValue)
            writer.string(account)
            writer.string(n.chat)
            writer.byte(Self.kindCode(n.kind))
            writer.varint(UInt64(bitPattern: n.id))
            writer.signedVarint(n.date)
            var flags: UInt8 = 0
            if n.silent { flags |= 1 }
            if n.partial { flags |= 2 }
            if n.title != nil { flags |= 4 }
            if n.unreadOnly { flags |= 64 }
            n.texts.withFields { body, sender, thread in
                if body != nil { flags |= 8 }
                if sender != nil { flags |= 16 }
                if thread != nil { flags |= 32 }
                writer.byte(flags)
                if let title = n.title { writer.string(title) }
                if let body { writer.string(utf8: body) }
                if let sender { writer.string(utf8: sender) }
                if let thread { writer.string(utf8: thread) }
            }
        case .edit(let e):
            writer.byte(Tag.edit.rawValue)
            writer.string(account)
            writer.string(e.chat)
            writer.byte(Self.kindCode(e.kind))
            writer.varint(UInt64(bitPattern: e.id))
            var flags: UInt8 = 0
            if e.partial { flags |= 2 }
            if e.title != nil { flags |= 4 }
            if e.body != nil { flags |= 8 }
            writer.byte(flags)
            for text in [e.title, e.body] { if let text { writer.string(text) } }
        case .read(let chat, let maxId):
            writer.byte(Tag.read.rawValue)
            writer.string(account)
            writer.string(chat)
            writer.varint(UInt64(bitPattern: maxId))
        case .delete(let ids, let chat):
            writer.byte(Tag.delete.rawValue)
            writer.string(account)
            writer.byte(chat == nil ? 0 : 1)
            if let chat { writer.string(chat) }
            Self.encodeIds(ids, to: &writer)
        case .readAll(let chat):
            writer.byte(Tag.readAll.rawValue)
            writer.string(account)
            writer.byte(chat == nil ? 0 : 1)
            if let chat { writer.string(chat) }
        case .readMentions(let chat, let ids):
            writer.byte(Tag.readMentions.rawValue)
            writer.string(account)
            writer.string(chat)
            writer.byte(ids == nil ? 0 : 1)
            if let ids { Self.encodeIds(ids, to: &writer) }
        case .clearHistory(let chat, let maxId):
            writer.byte(Tag.clearHistory.rawValue)
            writer.string(account)
            writer.string(chat)
            writer.varint(UInt64(bitPattern: maxId))
        case .tick(let now):
            writer.byte(Tag.tick.rawValue)
            writer.string(account)
            writer.varint(UInt64(bitPattern: now))
        case .readReactions(let chat, let ids):
            writer.byte(Tag.readReactions.rawValue)
            writer.string(account)
            writer.string(chat)
            Self.encodeIds(ids, to: &writer)
        case .endCall(let chat, let id):
            writer.byte(Tag.endCall.rawValue)
            writer.string(account)
            writer.string(chat)
            writer.varint(UInt64(bitPattern: id))
        case .dismiss(let notificationId):
            writer.byte(Tag.dismiss.rawValue)
            writer.string(account)
            writer.varint(UInt64(bitPattern: notificationId))
        case .dismissGroup(let groupId, let maxNotificationId):
            writer.byte(Tag.dismissGroup.rawValue)
            writer.string(account)
            writer.varint(UInt64(bitPattern: groupId))
            writer.byte(maxNotificationId == nil ? 0 : 1)
            if let maxNotificationId { writer.varint(UInt64(bitPattern: maxNotificationId)) }
        case .options(let countMax, let sizeMax):
            writer.byte(Tag.options.rawValue)
            writer.string(account)
            writer.byte((countMax == nil ? 0 : 1) | (sizeMax == nil ? 0 : 2))
            if let countMax { writer.varint(UInt64(countMax)) }
            if let sizeMax { writer.varint(UInt64(sizeMax)) }
        case .chatSettings(let s):
            writer.byte(Tag.chatSettings.rawValue)
            writer.string(account)
            writer.string(s.chat)
            // Two bits per setting: 0 absent, 1 false, 2 true; for the mute, 1 is mutedUntil 0,
            // 2 is mutedUntil 2147483647 (`muted: true`) and 3 any other date, which follows.
            func code(_ value: Bool?) -> UInt8 { value.map { $0 ? 2 : 1 } ?? 0 }
            let muteCode: UInt8 = s.mutedUntil.map { $0 == 0 ? 1 : $0 == ChatSettings.mutedForever ? 2 : 3 } ?? 0
            writer.byte(muteCode | code(s.disableMentions) << 2 | code(s.disablePinned) << 4)
            if muteCode == 3, let until = s.mutedUntil { writer.varint(UInt64(bitPattern: until)) }
        case .revoke:
            writer.byte(Tag.revoke.rawValue)
            writer.string(account)
        case .note(let source, let reason):
            writer.byte(Tag.note.rawValue)
            writer.string(account)
            writer.byte((source == nil ? 0 : 1) | (reason == nil ? 0 : 2))
            if let source { writer.string(source) }
            if let reason { writer.string(reason) }
        }
    }

    /// The binary encoding of this event.
    public var binary: [UInt8] {
        var writer = ByteWriter()
        encode(to: &writer)
        return writer.bytes
    }

    /// Decodes one event from `reader`, then validates it; damaged bytes throw, never trap.
    package init(from reader: inout ByteReader) throws(ByteReader.Malformed) {
        try self.init(from: &reader, knownAccount: nil, knownChat: nil)
    }

    /// ``init(from:)``, with the event's account and chat names given instead of decoded
    /// (`nil`: decoded; `knownChat` is ignored when the event names no chat): their bytes
    /// are skipped, neither turned into strings nor checked again. For a decoder that has
    /// met the same name bytes (``encodedNames(_:)``) in an event it decoded and validated
    /// before, and kept the names: the event is the one ``init(from:)`` decodes, and bytes
    /// it would reject throw here too, though not always with the same error (a caller that
    /// reports one decodes again with ``init(from:)``).
    package init(from reader: inout ByteReader, knownAccount: String?, knownChat: String?) throws(ByteReader.Malformed) {
        let tagOffset = reader.offset
        guard let tag = Tag(rawValue: try reader.byte()) else {
            throw ByteReader.Malformed(offset: tagOffset, reason: "unknown event tag")
        }
        // Whether every name was given, none decoded: then `require` checks the fields
        // that `validate()` checks besides the names (keep the two in step) before the event
        // is built, instead of `validate()`, which copies the payload to look at it.
        var namesKnown = true
        // A name: the known one, its bytes skipped, or decoded.
        func name(_ known: String?) throws(ByteReader.Malformed) -> String {
            if let known {
                try reader.skipString()
                return known
            }
            namesKnown = false
            return try reader.string()
        }
        func require(_ fieldsValid: Bool) throws(ByteReader.Malformed) {
            if namesKnown && !fieldsValid { throw ByteReader.Malformed(offset: tagOffset, reason: "decoded event is invalid") }
        }
        let account = try name(knownAccount)
        switch tag {
        case .notify:
            let chat = try name(knownChat)
            // The three texts are packed straight from the record's bytes (one allocation at
            // most), as the notification will keep them.
            let fields = try Self.notifyFields(&reader)
            try require(fields.id > 0 && fields.date >= 0)
            self.init(account: account, chat: chat, fields)
        case .edit:
            let chat = try name(knownChat)
            let kind = try Self.decodeKind(&reader)
            let id = try Self.decodeId(&reader)
            let flags = try reader.byte()
            guard flags & ~0x0E == 0 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            try require(id > 0)
            self.init(account: account, .edit(Edit(
                chat: chat, kind: kind, id: id,
                title: flags & 4 != 0 ? try reader.string() : nil,
                body: flags & 8 != 0 ? try reader.string() : nil,
                partial: flags & 2 != 0)))
        case .read:
            let chat = try name(knownChat)
            let maxId = try Self.decodeId(&reader)
            try require(maxId > 0)
            self.init(account: account, .read(chat: chat, maxId: maxId))
        case .delete:
            let hasChat = try reader.byte()
            guard hasChat <= 1 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            let chat = hasChat == 1 ? try name(knownChat) : nil
            let ids = try Self.decodeIds(&reader)
            try require(Self.idsValid(ids))
            self.init(account: account, .delete(ids: ids, chat: chat))
        case .readAll:
            let hasChat = try reader.byte()
            guard hasChat <= 1 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            let chat = hasChat == 1 ? try name(knownChat) : nil
            self.init(account: account, .readAll(chat: chat))
        case .readMentions:
            let chat = try name(knownChat)
            let hasIds = try reader.byte()
            guard hasIds <= 1 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            let ids = hasIds == 1 ? try Self.decodeIds(&reader) : nil
            try require(ids.map(Self.idsValid) ?? true)
            self.init(account: account, .readMentions(chat: chat, ids: ids))
        case .clearHistory:
            let chat = try name(knownChat)
            let maxId = try Self.decodeId(&reader)
            try require(maxId > 0)
            self.init(account: account, .clearHistory(chat: chat, maxId: maxId))
        case .tick:
            let now = try Self.decodeId(&reader)
            try require(now >= 0)
            self.init(account: account, .tick(now: now))
        case .readReactions:
            let chat = try name(knownChat)
            let ids = try Self.decodeIds(&reader)
            try require(Self.idsValid(ids))
            self.init(account: account, .readReactions(chat: chat, ids: ids))
        case .endCall:
            let chat = try name(knownChat)
            let id = try Self.decodeId(&reader)
            try require(id > 0)
            self.init(account: account, .endCall(chat: chat, id: id))
        case .dismiss:
            let notificationId = try Self.decodeId(&reader)
            try require(notificationId > 0)
            self.init(account: account, .dismiss(notificationId: notificationId))
        case .dismissGroup:
            let groupId = try Self.decodeId(&reader)
            let hasMax = try reader.byte()
            guard hasMax <= 1 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            let maxNotificationId = hasMax == 1 ? try Self.decodeId(&reader) : nil
            try require(groupId > 0 && (maxNotificationId ?? 1) > 0)
            self.init(account: account, .dismissGroup(groupId: groupId, maxNotificationId: maxNotificationId))
        case .options:
            let flags = try reader.byte()
            guard flags & ~0x03 == 0 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            let countMax = flags & 1 != 0 ? try reader.count(limit: 255) : nil
            let sizeMax = flags & 2 != 0 ? try reader.count(limit: 255) : nil
            try require((countMax.map(Self.groupCountMaxRange.contains) ?? true) && (sizeMax.map(Self.groupSizeMaxRange.contains) ?? true))
            self.init(account: account, .options(groupCountMax: countMax, groupSizeMax: sizeMax))
        case .chatSettings:
            let chat = try name(knownChat)
            let flagsOffset = reader.offset
            let flags = try reader.byte()
            // Reported at the settings byte, though a mute date may have been read after it.
            func setting(_ shift: UInt8) throws(ByteReader.Malformed) -> Bool? {
                switch (flags >> shift) & 3 {
                case 0: return nil
                case 1: return false
                case 2: return true
                default: throw ByteReader.Malformed(offset: flagsOffset, reason: "bad setting code")
                }
            }
            guard flags & ~0x3F == 0 else { throw ByteReader.Malformed(offset: flagsOffset, reason: "unknown flags") }
            let mutedUntil: Int64?
            switch flags & 3 {
            case 0: mutedUntil = nil
            case 1: mutedUntil = 0
            case 2: mutedUntil = ChatSettings.mutedForever
            default: mutedUntil = try Self.decodeId(&reader)
            }
            try require((mutedUntil ?? 0) >= 0)
            self.init(account: account, .chatSettings(ChatSettings(
                chat: chat, mutedUntil: mutedUntil, disableMentions: try setting(2), disablePinned: try setting(4))))
        case .revoke:
            self.init(account: account, .revoke)
        case .note:
            let flags = try reader.byte()
            guard flags & ~0x03 == 0 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
            self.init(account: account, .note(
                source: flags & 1 != 0 ? try reader.string() : nil,
                reason: flags & 2 != 0 ? try reader.string() : nil))
        }
        guard !namesKnown else { return }
        do {
            try validate()
        } catch {
            throw ByteReader.Malformed(offset: tagOffset, reason: "decoded event is invalid: \(error)")
        }
    }

    /// Decodes one event that fills `bytes` exactly.
    public init(binary bytes: [UInt8]) throws(MalformedBytes) {
        do {
            self = try bytes.withUnsafeBytes { try Event(exactly: $0) }
        } catch {
            // `withUnsafeBytes` only rethrows what the closure threw, which is `Malformed`.
            throw error as! ByteReader.Malformed
        }
    }

    /// Decodes one event that fills `buffer` exactly (no trailing bytes).
    public init(exactly buffer: UnsafeRawBufferPointer) throws(MalformedBytes) {
        var reader = ByteReader(buffer)
        let event = try Event(from: &reader)
        guard reader.isAtEnd else { throw ByteReader.Malformed(offset: reader.offset, reason: "trailing bytes") }
        self = event
    }

    @inline(__always)
    static func decodeKind(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> NotificationKind {
        let code = try reader.byte()
        guard Int(code) < kindsByCode.count else {
            throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown kind code \(code)")
        }
        return kindsByCode[Int(code)]
    }

    @inline(__always)
    static func decodeId(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> Int64 {
        Int64(bitPattern: try reader.varint())
    }

    /// Whether `ids` pass `validate()`: at least one, each positive.
    private static func idsValid(_ ids: [Int64]) -> Bool {
        !ids.isEmpty && !ids.contains { $0 <= 0 }
    }

    private static func encodeIds(_ ids: [Int64], to writer: inout ByteWriter) {
        writer.varint(UInt64(ids.count))
        for id in ids { writer.varint(UInt64(bitPattern: id)) }
    }

    private static func decodeIds(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> [Int64] {
        // Each id takes at least one byte, which bounds the count by what is left.
        let count = try reader.count(limit: max(reader.remaining - 1, 0))
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        for _ in 0..<count { ids.append(try decodeId(&reader)) }
        return ids
    }
}
