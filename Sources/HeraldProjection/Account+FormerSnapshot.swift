import HeraldEvents

extension Account {
    /// Reads an account written by snapshot formats 1 and 2 (SEMANTICS 1.1; the layout is in
    /// `schema/snapshot-format.md`, "Former formats") as SEMANTICS 1.2 keeps it: the state
    /// 1.1 reached, with what 1.2 adds filled in as best it can be. Used only where nothing
    /// else can stand for the history before it: the snapshot at the start of a store's kept
    /// history (`meta` `origin`), whose earlier records were discarded
    /// (``Projection/init(snapshot:configuration:checksumVerified:onlyAccount:readingFormerFormats:)``).
    ///
    /// - `mutedUntil`: 2147483647 for a muted chat, else 0 (1.1's mute had no end).
    /// - The clock: the latest date among the live notifications (1.1 kept none).
    /// - Each unread message stays unread, and an unread mention when it was notified as a
    ///   mention; which group its live notification is in, and whether it is pinned, is read
    ///   off the notification.
    /// - No cleared-history or dismissal marks (1.1 had neither).
    init(decodingFormer decoder: inout SnapshotDecoder, configuration: Projection.Configuration) throws(SnapshotError) {
        self.init(configuration: configuration)
        try decodeOptions(&decoder)
        try decodeDeletedEverywhere(&decoder)
        var previous: Int64 = 0
        let notificationIds: ClosedRange<Int64> = 0...(nextNotificationId - 1)
        for index in 0..<(try decoder.count()) {
            let name = try decoder.string()
            guard !name.isEmpty, chatIndex.intern(name).isNew else { throw decoder.malformed("empty or repeated chat name") }
            guard index < Int(Int32.max) else { throw decoder.malformed("too many chats") }
            var chat = Chat(name: name)
            let flags = try decoder.byte()
            guard flags < 16 else { throw decoder.malformed("unknown chat flags") }
            chat.mutedUntil = flags & 1 != 0 ? Event.ChatSettings.mutedForever : 0
            chat.disableMentions = flags & 2 != 0
            chat.disablePinned = flags & 4 != 0
            chat.readMaxId = try decoder.int(in: 0...Int64.max, "readMaxId")
            chat.pinnedNotificationId = try decoder.int(in: notificationIds, "pinned notification id")
            previous = chat.readMaxId
            for _ in 0..<(try decoder.count()) {
                previous = try decoder.id(after: previous, "unread id")
                let packed = try decoder.int(in: 0...Int64.max, "unread notification")
                guard notificationIds.contains(packed >> 1) else { throw decoder.malformed("unread notification id out of range") }
                chat.unread.append(UnreadMessage(id: previous, notificationId: packed >> 1, kind: packed & 1 != 0 ? .mention : .message))
                chat.unreadCount += 1
                if packed & 1 != 0 { chat.unreadMentions += 1 }
            }
            previous = chat.readMaxId
            for _ in 0..<(try decoder.count()) {
                previous = try decoder.id(after: previous, "deleted id")
                chat.deleted.insert(previous)
            }
            try Self.decodeObjects(&decoder, into: &chat, notificationIds: notificationIds)
            for (key, notificationId) in chat.objects.entries where key.objectClass == .secretChat && notificationId != 0 {
                chat.secretChatNotificationId = notificationId
            }
            unread += chat.unreadCount
            unreadMentions += chat.unreadMentions
            if chat.mutedUntil != 0 { mutedChats.append(Int32(index)) }
            chats.append(chat)
        }
        for index in 0..<(try decoder.count()) {
            guard let type = GroupType.at(Int(try decoder.byte())) else { throw decoder.malformed("bad group type") }
            guard !chats.isEmpty else { throw decoder.malformed("group without chats") }
            let chat = Int(try decoder.int(in: 0...Int64(chats.count - 1), "group chat"))
            guard chats[chat].group(type) == nil, index < Int(Int32.max) else { throw decoder.malformed("two groups of one type in a chat") }
            chats[chat].groupSlots[type.index] = Int32(index)
            var group = NotificationGroup(id: Int64(index) + 1, type: type, chat: Int32(chat))
            try decodeLists(&decoder, of: &group, index: index)
            for notification in group.active + group.dismissed {
                if notification.date > clock { clock = notification.date }
                if notification.kind == .reaction && type == .messages { chats[chat].hasReactionInMessages = true }
                if notification.kind.objectClass == .msg, let position = chats[chat].unreadIndex(of: notification.objectId),
                    chats[chat].unread[position].notificationId == notification.id
                {
                    chats[chat].unread[position] = UnreadMessage(
                        id: notification.objectId, notificationId: notification.id,
                        flags: chats[chat].unread[position].flags | (notification.kind == .pinned ? 2 : 0) | (type == .mentions ? 4 : 0))
                }
            }
            if type == .messages && !group.active.isEmpty && chats[chat].mutedUntil != 0 {
                throw decoder.malformed("a muted chat has active notifications in its messages group")
            }
            group.recomputeNewestDate()
            group.candidateDate = group.lastDate
            if let date = group.candidateDate { candidates.append(CandidateKey(date: date, group: Int32(index))) }
            groups.append(group)
        }
        showTopCandidates()
    }
}
