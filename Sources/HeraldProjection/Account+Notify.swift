import HeraldEvents

extension Account {
    /// Applies one event's payload and returns its updates (SEMANTICS §4–§9); with
    /// `computeUpdates` false, only the state changes, the result is empty, and the view is
    /// left for ``settleView(_:)`` to bring up to date (``viewIsStale``).
    /// `names` may give the chat's ``NameInterner`` id, which `chatIds` maps to the chat's
    /// index when it met it before (see ``ReplayBatch``). `scratch` is
    /// empty before and after.
    mutating func apply(
        _ payload: Event.Payload, computeUpdates: Bool = true, names: InternedNames = .none,
        chatIds: inout InternedIndexes, _ scratch: inout EventScratch
    ) -> [Update] {
        if computeUpdates && viewIsStale { settleView(&scratch) }
        scratch.savesShownBefore = computeUpdates
        defer { scratch.savesShownBefore = true }
        switch payload {
        case .notify(let notify):
            self.notify(notify, chat: intern(chat: notify.chat, names, &chatIds), &scratch)
        case .edit(let edit):
            self.edit(edit, chat: intern(chat: edit.chat, names, &chatIds), &scratch)
        case .read(let chat, let maxId):
            read(chat: intern(chat: chat, names, &chatIds), maxId: maxId, &scratch)
        case .readAll(let chat):
            if let chat {
                readAll(chat: intern(chat: chat, names, &chatIds), &scratch)
            } else {
                for chat in chats.indices { readAll(chat: chat, &scratch) }
            }
        case .readMentions(let chat, let ids):
            readMentions(ids, chat: intern(chat: chat, names, &chatIds), &scratch)
        case .clearHistory(let chat, let maxId):
            clearHistory(chat: intern(chat: chat, names, &chatIds), maxId: maxId, &scratch)
        case .tick(let now):
            advanceClock(to: now)
        case .delete(let ids, let chat):
            if let chat {
                delete(ids, chat: intern(chat: chat, names, &chatIds), &scratch)
            } else {
                deleteEverywhere(ids, &scratch)
            }
        case .readReactions(let chat, let ids):
            readReactions(ids, chat: intern(chat: chat, names, &chatIds), &scratch)
        case .endCall(let chat, let id):
            endCall(id, chat: intern(chat: chat, names, &chatIds), &scratch)
        case .dismiss(let notificationId):
            dismiss(notificationId, &scratch)
        case .dismissGroup(let groupId, let maxNotificationId):
            dismissGroup(groupId, upTo: maxNotificationId ?? .max, &scratch)
        case .options(let countMax, let sizeMax):
            setOptions(groupCountMax: countMax, groupSizeMax: sizeMax, &scratch)
        case .chatSettings(let settings):
            apply(settings, chat: intern(chat: settings.chat, names, &chatIds), &scratch)
        case .revoke:
            chatIds = InternedIndexes()
            return revoke(computeUpdates: computeUpdates, &scratch)
        case .note:
            return []
        }
        return computeUpdates ? finishEvent(&scratch) : deferView(&scratch)
    }

    /// Replays one event's payload: ``apply(_:computeUpdates:)`` without updates, keeping no
    /// lifecycle changes. Returns whether it made a current view stale (the caller lists the
    /// account for ``settleView(_:)``).
    @inline(__always)
    mutating func replay(
        _ payload: Event.Payload, names: InternedNames, chatIds: inout InternedIndexes, _ scratch: inout EventScratch
    ) -> Bool {
        let wasStale = viewIsStale
        _ = apply(payload, computeUpdates: false, names: names, chatIds: &chatIds, &scratch)
        if recording { scratch.changes.removeAll() }
        #if DEBUG
        checkInvariants()
        #endif
        return viewIsStale && !wasStale
    }

    /// The index of chat `name`, whose ``NameInterner`` id `names` may give: found by that
    /// id in `chatIds` when the chat was seen under it before, else by name (adding the chat
    /// when new, and recording its id in `chatIds`).
    @inline(__always)
    mutating func intern(chat name: String, _ names: InternedNames, _ chatIds: inout InternedIndexes) -> Int {
        let known = chatIds.index(of: names.chat, token: names.token)
        if known >= 0 { return known }
        let index = intern(chat: name)
        if names.token != 0 { chatIds.record(index, for: names.chat, token: names.token) }
        return index
    }

    /// `notify` (SEMANTICS 1.2 §4), of an ``Event/Notify`` or a ``PackedNotify``.
    mutating func notify<Notify: NotifyContent>(_ event: Notify, chat: Int, _ scratch: inout EventScratch) {
        advanceClock(to: event.date)
        let objectClass = event.kind.objectClass
        var unreadIndex = -1
        if objectClass == .msg {
            // Rule 1: a message still remembered was named before (see `Chat`).
            let position = chats[chat].unreadLowerBound(event.id)
            if position < chats[chat].unread.count && chats[chat].unread[position].id == event.id {
                upgrade(chats[chat].unread[position].notificationId, with: event, chat: chat, &scratch)
                return
            }
            // Rule 2: any other message named before is read, deleted or cleared, so it
            // ends here too.
            if event.id <= chats[chat].readMaxId {
                if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .alreadyRead)) }
                return
            }
            if event.id <= chats[chat].clearedMark {
                if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .historyCleared)) }
                return
            }
            if (!chats[chat].deleted.isEmpty && chats[chat].deleted.contains(event.id))
                || (!deletedEverywhere.isEmpty && deletedEverywhere.contains(event.id))
            {
                if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .deleted)) }
                return
            }
            // Rule 3: the chat's first message ends its secret chat notice.
            if chats[chat].secretChatNotificationId != 0 { clear(chats[chat].secretChatNotificationId, reason: .replaced, &scratch) }
            // Rule 4.
            touchTotal(.messages, of: chat, &scratch)
            if event.kind == .mention { touchTotal(.mentions, of: chat, &scratch) }
            let message = UnreadMessage(id: event.id, notificationId: 0, kind: event.kind)
            if position == chats[chat].unread.count {
                chats[chat].unread.append(message, reservingIfEmpty: 3)
            } else {
                chats[chat].unread.insert(message, at: position)
            }
            unread += 1
            chats[chat].unreadCount += 1
            if event.kind == .mention {
                chats[chat].unreadMentions += 1
                unreadMentions += 1
            }
            unreadIndex = position
            if recording { scratch.changes.append(.becameUnread(chat: chats[chat].name, objectId: event.id)) }
        } else {
            let key = ObjectKey(objectClass: objectClass, id: event.id)
            if let existing = chats[chat].objects[key] {
                upgrade(existing, with: event, chat: chat, &scratch)
                return
            }
            chats[chat].objects[key] = 0
        }
        // Rule 5.
        if event.unreadOnly {
            if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .unreadOnly)) }
            return
        }
        // Rule 6: the mute is compared with the message's date.
        let type = groupType(for: event.kind, chat: chat)
        if type == .messages && chats[chat].isMuted(at: event.date) {
            if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .muted)) }
            return
        }
        // Rule 7.
        if objectClass == .msg && event.id <= chats[chat].dismissalMark(type) {
            if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .belowDismissalMark)) }
            return
        }
        // Rule 8.
        if event.kind == .secretChat && chats[chat].secretChatNotificationId != 0 {
            if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .secretChatExists)) }
            return
        }
        if event.kind == .pinned {
            // SEMANTICS 1.1 §4: the previous pinned notification is replaced whether it is
            // active or dismissed (`clear` does nothing when it is already cleared).
            clear(chats[chat].pinnedNotificationId, reason: .replaced, &scratch)
        }
        let group = self.group(type, chat: chat, &scratch)
        let id = nextNotificationId
        nextNotificationId += 1
        touch(group, &scratch)
        groups[group].active.appendNewest(
            StoredNotification(
                id: id, kind: event.kind, objectId: event.id, date: event.date, silent: event.silent,
                partial: event.partial, textSlot: event.storeTexts(into: &texts)))
        if event.date > groups[group].newestDate { groups[group].newestDate = event.date }
        live[id] = Int32(group)
        scratch.createdId = id
        scratch.createdSilent = event.silent
        if scratch.savesShownBefore {
            scratch.createdTitle = event.title
            scratch.createdTexts = event.texts
        }
        switch event.kind {
        case .message, .mention, .pinned:
            chats[chat].unread[unreadIndex].notificationId = id
            if type == .mentions { chats[chat].unread[unreadIndex].inMentionsGroup = true }
            if event.kind == .pinned { chats[chat].pinnedNotificationId = id }
        case .reaction, .call, .secretChat:
            chats[chat].objects[ObjectKey(objectClass: objectClass, id: event.id)] = id
            if event.kind == .secretChat { chats[chat].secretChatNotificationId = id }
            if event.kind == .reaction && type == .messages { chats[chat].hasReactionInMessages = true }
        }
        if recording { scratch.changes.append(.created(notificationId: id, groupId: Int64(group) + 1, chat: chats[chat].name, kind: event.kind, objectId: event.id)) }
    }

    /// The group a new notification of `kind` goes to, from the chat's settings (SEMANTICS §3).
    @inline(__always)
    func groupType(for kind: NotificationKind, chat: Int) -> GroupType {
        switch kind {
        case .message: .messages
        case .call: .calls
        case .secretChat: .secretChat
        case .mention, .reaction: chats[chat].disableMentions ? .messages : .mentions
        case .pinned: chats[chat].disablePinned ? .messages : .mentions
        }
    }

    /// SEMANTICS §4 rule 1: a full `notify` upgrades an active partial notification in place;
    /// anything else about an object already named is a duplicate.
    mutating func upgrade<Notify: NotifyContent>(
        _ notificationId: Int64, with event: Notify, chat: Int, _ scratch: inout EventScratch
    ) {
        guard !event.partial, let (group, isActive, index) = locate(notificationId), isActive,
            groups[group].active[index].partial
        else {
            if recording { scratch.changes.append(.ignored(chat: chats[chat].name, kind: event.kind, objectId: event.id, reason: .duplicate)) }
            return
        }
        touch(group, &scratch)
        let before = groups[group].active[index]
        let slot = event.storeTexts(into: &texts)
        groups[group].active[index].textSlot = slot
        groups[group].active[index].date = event.date
        groups[group].active[index].partial = false
        if event.date > groups[group].newestDate {
            groups[group].newestDate = event.date
        } else if event.date < before.date {
            activeLeft(group, date: before.date)
        }
        if before != groups[group].active[index] || !texts.sameTexts(slot, as: texts, before.textSlot) {
            scratch.contentChangedId = notificationId
        }
        texts.release(before.textSlot)
        if recording { scratch.changes.append(.upgraded(notificationId: notificationId)) }
    }

    /// `edit` (SEMANTICS 1.2 §4): new title and body for an active notification whose
    /// `partial` is the edit's (a push's edit never touches a full message's notification,
    /// nor a full edit a push's).
    mutating func edit(_ event: Event.Edit, chat: Int, _ scratch: inout EventScratch) {
        let notificationId: Int64
        if event.kind.objectClass == .msg {
            guard let index = chats[chat].unreadIndex(of: event.id) else { return }
            notificationId = chats[chat].unread[index].notificationId
        } else {
            guard let id = chats[chat].objects[ObjectKey(objectClass: event.kind.objectClass, id: event.id)] else { return }
            notificationId = id
        }
        guard let (group, isActive, index) = locate(notificationId), isActive,
            groups[group].active[index].partial == event.partial
        else { return }
        touch(group, &scratch)
        let before = groups[group].active[index]
        if event.title != nil || event.body != nil {
            let title = event.title ?? texts.title(before.textSlot)
            let packed = event.body.map { texts.texts(before.textSlot).replacing(.body, with: $0) } ?? texts.texts(before.textSlot)
            groups[group].active[index].textSlot = texts.store(title: title, texts: packed)
        }
        let slot = groups[group].active[index].textSlot
        if before != groups[group].active[index] || !texts.sameTexts(slot, as: texts, before.textSlot) {
            scratch.contentChangedId = notificationId
        }
        if slot != before.textSlot { texts.release(before.textSlot) }
        if recording { scratch.changes.append(.edited(notificationId: notificationId)) }
    }
}
