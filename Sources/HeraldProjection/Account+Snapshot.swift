import HeraldEvents

extension Account {
    /// Writes the account's state (not its name) as `schema/snapshot-format.md` describes
    /// (format 3, SEMANTICS 1.2). Derived data (indexes, counts, candidates, the visible
    /// view) is not written.
    func encode(to writer: inout ByteWriter) {
        writer.varint(UInt64(requestedGroupCountMax))
        writer.varint(UInt64(requestedGroupSizeMax))
        writer.varint(UInt64(nextNotificationId))
        writer.varint(UInt64(clock))
        writer.varint(UInt64(deletedEverywhere.count))
        var previous: Int64 = 0
        for id in deletedEverywhere.sorted() {
            writer.varint(UInt64(id - previous))
            previous = id
        }
        writer.varint(UInt64(chats.count))
        for chat in chats {
            writer.string(chat.name)
            var flags: UInt8 = 0
            if chat.disableMentions { flags |= 2 }
            if chat.disablePinned { flags |= 4 }
            if chat.hasReactionInMessages { flags |= 8 }
            writer.byte(flags)
            writer.varint(UInt64(chat.mutedUntil))
            writer.varint(UInt64(chat.readMaxId))
            writer.varint(UInt64(chat.clearedMark))
            writer.varint(UInt64(chat.messagesDismissalMark))
            writer.varint(UInt64(chat.mentionsDismissalMark))
            writer.varint(UInt64(chat.pinnedNotificationId))
            writer.varint(UInt64(chat.secretChatNotificationId))
            writer.varint(UInt64(chat.unread.count))
            previous = 0
            for message in chat.unread {
                writer.varint(UInt64(message.id - previous))
                writer.varint(UInt64(message.notificationId))
                writer.byte(message.flags)
                previous = message.id
            }
            writer.varint(UInt64(chat.deleted.count))
            previous = chat.forgottenBelow
            for id in chat.deleted.sorted() {
                writer.varint(UInt64(id - previous))
                previous = id
            }
            writer.varint(UInt64(chat.objects.count))
            for (key, notificationId) in chat.objects.entries {
                writer.byte(key.objectClass.rawValue)
                writer.varint(UInt64(key.id))
                writer.varint(UInt64(notificationId))
            }
        }
        writer.varint(UInt64(groups.count))
        for group in groups {
            writer.byte(UInt8(group.type.index))
            writer.varint(UInt64(group.chat))
            for list in [group.active, group.dismissed] {
                writer.varint(UInt64(list.count))
                for notification in list { notification.encode(to: &writer, texts: texts) }
            }
        }
    }

    /// Reads what ``encode(to:)`` wrote, checking everything the rules rely on, and rebuilds
    /// the derived data.
    init(decoding decoder: inout SnapshotDecoder, configuration: Projection.Configuration) throws(SnapshotError) {
        self.init(configuration: configuration)
        try decodeOptions(&decoder)
        clock = try decoder.int(in: 0...Int64.max, "clock")
        try decodeDeletedEverywhere(&decoder)
        var previous: Int64 = 0
        let notificationIds: ClosedRange<Int64> = 0...(nextNotificationId - 1)
        for index in 0..<(try decoder.count()) {
            let name = try decoder.string()
            guard !name.isEmpty, chatIndex.intern(name).isNew else {
                throw decoder.malformed("empty or repeated chat name")
            }
            guard index < Int(Int32.max) else { throw decoder.malformed("too many chats") }
            var chat = Chat(name: name)
            let flags = try decoder.byte()
            guard flags & ~0x0E == 0 else { throw decoder.malformed("unknown chat flags") }
            chat.disableMentions = flags & 2 != 0
            chat.disablePinned = flags & 4 != 0
            chat.hasReactionInMessages = flags & 8 != 0
            chat.mutedUntil = try decoder.int(in: 0...Int64.max, "mutedUntil")
            chat.readMaxId = try decoder.int(in: 0...Int64.max, "readMaxId")
            chat.clearedMark = try decoder.int(in: 0...Int64.max, "clearedMark")
            chat.messagesDismissalMark = try decoder.int(in: 0...Int64.max, "messages dismissal mark")
            chat.mentionsDismissalMark = try decoder.int(in: 0...Int64.max, "mentions dismissal mark")
            chat.pinnedNotificationId = try decoder.int(in: notificationIds, "pinned notification id")
            chat.secretChatNotificationId = try decoder.int(in: notificationIds, "secret chat notification id")
            previous = 0
            for _ in 0..<(try decoder.count()) {
                previous = try decoder.id(after: previous, "message id")
                let notificationId = try decoder.int(in: notificationIds, "message notification id")
                let flags = try decoder.byte()
                guard flags & ~0x1F == 0, flags & 3 != 3, flags & 0x11 != 0x10 else {
                    throw decoder.malformed("bad message flags")
                }
                let message = UnreadMessage(id: previous, notificationId: notificationId, flags: flags)
                if message.isUnread {
                    guard message.id > chat.forgottenBelow else { throw decoder.malformed("unread message at or below readMaxId") }
                    chat.unreadCount += 1
                }
                if message.isUnreadMention { chat.unreadMentions += 1 }
                chat.unread.append(message)
            }
            previous = chat.forgottenBelow
            for _ in 0..<(try decoder.count()) {
                previous = try decoder.id(after: previous, "deleted id")
                chat.deleted.insert(previous)
            }
            try Self.decodeObjects(&decoder, into: &chat, notificationIds: notificationIds)
            unread += chat.unreadCount
            unreadMentions += chat.unreadMentions
            if chat.mutedUntil != 0 { mutedChats.append(Int32(index)) }
            chats.append(chat)
        }
        for index in 0..<(try decoder.count()) {
            guard let type = GroupType.at(Int(try decoder.byte())) else { throw decoder.malformed("bad group type") }
            guard !chats.isEmpty else { throw decoder.malformed("group without chats") }
            let chat = try decoder.int(in: 0...Int64(chats.count - 1), "group chat")
            guard chats[Int(chat)].group(type) == nil, index < Int(Int32.max) else {
                throw decoder.malformed("two groups of one type in a chat")
            }
            chats[Int(chat)].groupSlots[type.index] = Int32(index)
            var group = NotificationGroup(id: Int64(index) + 1, type: type, chat: Int32(chat))
            try decodeLists(&decoder, of: &group, index: index)
            if type == .messages && !group.active.isEmpty && chats[Int(chat)].isMuted(at: clock) {
                throw decoder.malformed("a chat muted at the clock has active notifications in its messages group")
            }
            group.recomputeNewestDate()
            group.candidateDate = group.lastDate
            if let date = group.candidateDate { candidates.append(CandidateKey(date: date, group: Int32(index))) }
            groups.append(group)
        }
        // A message forgotten by the rules would be remembered here for good: refuse it.
        for chat in chats where chat.unread.contains(where: { isForgettable($0, below: chat.forgottenBelow) }) {
            throw decoder.malformed("chat \(chat.name) remembers a message no rule needs")
        }
        showTopCandidates()
    }

    /// Reads the view options and the next notification id (every snapshot format).
    mutating func decodeOptions(_ decoder: inout SnapshotDecoder) throws(SnapshotError) {
        requestedGroupCountMax = Int(try decoder.int(in: 0...25, "groupCountMax"))
        requestedGroupSizeMax = Int(try decoder.int(in: 1...25, "groupSizeMax"))
        groupCountMax = configuration.groupCountMaxOverride ?? requestedGroupCountMax
        groupSizeMax = configuration.groupSizeMaxOverride ?? requestedGroupSizeMax
        nextNotificationId = try decoder.int(in: 1...(1 << 55), "nextNotificationId")
    }

    /// Reads the ids deleted without a chat (every snapshot format).
    mutating func decodeDeletedEverywhere(_ decoder: inout SnapshotDecoder) throws(SnapshotError) {
        var previous: Int64 = 0
        for _ in 0..<(try decoder.count()) {
            previous = try decoder.id(after: previous, "deleted id")
            deletedEverywhere.insert(previous)
        }
    }

    /// Sorts the restored candidate keys and shows the first `groupCountMax` groups.
    mutating func showTopCandidates() {
        candidates.sort()
        for key in candidates.suffix(groupCountMax).reversed() {
            visible.append(key.group)
            groups[Int(key.group)].isVisible = true
        }
    }

    /// Reads a chat's reaction, call and secret chat objects (every snapshot format).
    static func decodeObjects(
        _ decoder: inout SnapshotDecoder, into chat: inout Chat, notificationIds: ClosedRange<Int64>
    ) throws(SnapshotError) {
        var previousKey: ObjectKey?
        for _ in 0..<(try decoder.count()) {
            guard let objectClass = ObjectClass(rawValue: try decoder.byte()), objectClass != .msg else {
                throw decoder.malformed("bad object class")
            }
            let key = ObjectKey(objectClass: objectClass, id: try decoder.int(in: 1...Int64.max, "object id"))
            if let previousKey, !(previousKey < key) { throw decoder.malformed("objects not in ascending order") }
            previousKey = key
            chat.objects[key] = try decoder.int(in: notificationIds, "object notification id")
        }
    }

    /// Reads the active and dismissed lists of group `index` into `group`, each notification
    /// entered in ``live`` (every snapshot format).
    mutating func decodeLists(_ decoder: inout SnapshotDecoder, of group: inout NotificationGroup, index: Int) throws(SnapshotError) {
        for list in 0..<2 {
            var notifications: [StoredNotification] = []
            var previousId: Int64 = 0
            for _ in 0..<(try decoder.count()) {
                let notification = try StoredNotification(decoding: &decoder, type: group.type, texts: &texts)
                guard notification.id > previousId, notification.id < nextNotificationId, live[notification.id] == nil else {
                    throw decoder.malformed("bad notification id")
                }
                live[notification.id] = Int32(index)
                previousId = notification.id
                notifications.append(notification)
            }
            if list == 0 { group.active = notifications } else { group.dismissed = notifications }
        }
    }
}

extension StoredNotification {
    /// Writes the notification, with its texts from `arena` (its status is implied by the
    /// list it is in).
    func encode(to writer: inout ByteWriter, texts arena: TextArena) {
        writer.varint(UInt64(id))
        writer.byte(kind.code)
        writer.varint(UInt64(objectId))
        writer.signedVarint(date)
        // The title and the packed texts are written straight from the arena's bytes.
        arena.withTexts(textSlot) { title, packed in
            PackedTexts.withFields(ofPacked: packed) { body, sender, thread in
                var flags: UInt8 = 0
                if silent { flags |= 1 }
                if partial { flags |= 2 }
                if title != nil { flags |= 4 }
                if body != nil { flags |= 8 }
                if sender != nil { flags |= 16 }
                if thread != nil { flags |= 32 }
                writer.byte(flags)
                if let title { writer.string(utf8: title) }
                if let body { writer.string(utf8: body) }
                if let sender { writer.string(utf8: sender) }
                if let thread { writer.string(utf8: thread) }
            }
        }
    }

    /// Reads what ``encode(to:texts:)`` wrote, for a group of `type`, storing the texts in
    /// `arena`.
    init(decoding decoder: inout SnapshotDecoder, type: GroupType, texts arena: inout TextArena) throws(SnapshotError) {
        let id = try decoder.int(in: 1...Int64.max, "notification id")
        guard let kind = NotificationKind(code: try decoder.byte()) else { throw decoder.malformed("bad kind") }
        let allowed: Bool =
            switch type {
            case .messages: kind != .call && kind != .secretChat
            case .mentions: kind == .mention || kind == .pinned || kind == .reaction
            case .calls: kind == .call
            case .secretChat: kind == .secretChat
            }
        guard allowed else { throw decoder.malformed("kind \(kind) in a \(type) group") }
        let objectId = try decoder.int(in: 1...Int64.max, "object id")
        let date = try decoder.signed()
        let flags = try decoder.byte()
        guard flags < 64 else { throw decoder.malformed("unknown notification flags") }
        let title = flags & 4 != 0 ? try decoder.utf8() : nil
        // The texts are packed straight from the snapshot's bytes into the arena's page.
        let body = flags & 8 != 0 ? try decoder.utf8() : nil
        let sender = flags & 16 != 0 ? try decoder.utf8() : nil
        let thread = flags & 32 != 0 ? try decoder.utf8() : nil
        let slot = arena.store(title: title, body: body, sender: sender, thread: thread)
        self.init(
            id: id, kind: kind, objectId: objectId, date: date, silent: flags & 1 != 0, partial: flags & 2 != 0,
            textSlot: slot)
    }
}

extension NotificationKind {
    /// The kind's byte in snapshots.
    var code: UInt8 {
        switch self {
        case .message: 0
        case .mention: 1
        case .pinned: 2
        case .reaction: 3
        case .call: 4
        case .secretChat: 5
        }
    }

    /// The kind with byte `code`, if any.
    init?(code: UInt8) {
        switch code {
        case 0: self = .message
        case 1: self = .mention
        case 2: self = .pinned
        case 3: self = .reaction
        case 4: self = .call
        case 5: self = .secretChat
        default: return nil
        }
    }
}
