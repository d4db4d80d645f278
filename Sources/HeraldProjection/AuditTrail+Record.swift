import HeraldEvents

extension AuditTrail {
    /// Feeds one event of the account and the outcome of applying it.
    public mutating func record(seq: UInt64, event: Event, outcome: Outcome) {
        guard event.account.isSameName(as: account) else { return }
        var effects: [Effect] = []
        var createdNow: Set<Int64> = []
        var changedStatus: Set<Int64> = []
        var reset = false

        switch event.payload {
        case .options(let count, let size):
            if let count { groupCountMax = count }
            if let size { groupSizeMax = size }
        case .chatSettings(let settings):
            if let until = settings.mutedUntil { mutedUntil[NameKey(settings.chat)] = until }
        default: break
        }

        for change in outcome.changes {
            switch change {
            case .groupCreated(let groupId, let type, let chat):
                groups[groupId] = (type, chat)
                if isTarget(group: groupId) {
                    effects.append(Effect(kind: "groupCreated", groupId: groupId, text: "group \(groupId) created for the \(type.rawValue) of \(chat)"))
                }
            case .created(let id, let groupId, let chat, let kind, let objectId):
                notifications[id] = (groupId, chat, objectId, kind, .active)
                createdNow.insert(id)
                if isTarget(notification: id) {
                    effects.append(Effect(kind: "created", notificationId: id, groupId: groupId,
                        text: "\(kind.rawValue) #\(objectId) created as notification \(id) in group \(groupId) (\(groups[groupId]?.type.rawValue ?? "group") of \(chat))"))
                }
            case .becameUnread(let chat, let objectId):
                if isTarget(chat: chat, objectId: objectId) {
                    effects.append(Effect(kind: "unread", text: "message #\(objectId) is now unread in \(chat)"))
                }
            case .ignored(let chat, let kind, let objectId, let reason):
                if isTarget(chat: chat, objectId: objectId) {
                    var why = Self.explain(reason)
                    if reason == .muted, let until = mutedUntil[NameKey(chat)] {
                        why = until == Event.ChatSettings.mutedForever
                            ? "the chat was muted for good (it still counts as unread)"
                            : "the chat was muted until \(ISO8601.string(seconds: until)) (it still counts as unread)"
                    }
                    effects.append(Effect(kind: "ignored", text: "\(kind.rawValue) #\(objectId) not shown: \(why)"))
                }
            case .upgraded(let id):
                if isTarget(notification: id) {
                    effects.append(Effect(kind: "upgraded", notificationId: id, groupId: notifications[id]?.groupId, text: "notification \(id) got the full message content (it had the push's text)"))
                }
            case .edited(let id):
                if isTarget(notification: id) {
                    effects.append(Effect(kind: "edited", notificationId: id, groupId: notifications[id]?.groupId, text: "notification \(id) content edited"))
                }
            case .dismissed(let id):
                notifications[id]?.status = .dismissed
                changedStatus.insert(id)
                if isTarget(notification: id) {
                    let how: String
                    if case .dismissGroup(let groupId, let max) = event.payload {
                        how = "dismissed by the user with group \(groupId)" + (max.map { " (up to notification \($0))" } ?? "")
                    } else {
                        how = "dismissed by the user"
                    }
                    // SEMANTICS §7: a messages or mentions group counts its dismissed
                    // notifications, a calls or secretChat group only its active ones.
                    let groupId = notifications[id]?.groupId
                    let count = groupId.flatMap { groups[$0]?.type.countsDismissed } == false
                        ? "it no longer counts in its group's total" : "it still counts in its group's total while unread"
                    effects.append(Effect(kind: "dismissed", notificationId: id, groupId: groupId, text: "notification \(id) \(how); \(count)"))
                }
            case .cleared(let id, let reason):
                notifications[id]?.status = .cleared
                changedStatus.insert(id)
                if isTarget(notification: id) {
                    effects.append(Effect(kind: "cleared", notificationId: id, groupId: notifications[id]?.groupId, text: "notification \(id) cleared: \(Self.explain(reason, event, kind: notifications[id]?.kind))"))
                }
            case .accountReset:
                // SEMANTICS §6: the account returns to the empty state. Of its notifications
                // the state holds the live ones, active and dismissed (a cleared one was
                // dropped when it cleared): the revoke wipes both kinds.
                for id in notifications.keys.sorted() where isTarget(notification: id) {
                    guard let (groupId, _, _, _, status) = notifications[id], status != .cleared else { continue }
                    var text = "notification \(id) wiped: the session was revoked and the account reset"
                    if status == .dismissed { text += "; it had been dismissed (out of view, but still part of the account's state)" }
                    effects.append(Effect(kind: "wiped", notificationId: id, groupId: groupId, text: text))
                }
                changedStatus.formUnion(notifications.keys)
                reset = true
            }
        }

        if case .read(let chat, let maxId) = event.payload {
            // SEMANTICS 1.2 §6: a history read leaves mention notifications be.
            for (id, info) in notifications.sorted(by: { $0.key < $1.key })
            where info.kind == .mention && info.status != .cleared && !changedStatus.contains(id) && info.objectId <= maxId
                && info.chat.isSameName(as: chat) && groups[info.groupId]?.type == .mentions && isTarget(notification: id)
            {
                effects.append(Effect(kind: "kept", notificationId: id, groupId: info.groupId,
                    text: "notification \(id) kept: a history read does not clear a mention (only reading the mention does)"))
            }
        }

        effects += visibilityEffects(outcome.updates, createdNow: createdNow, changedStatus: changedStatus, event: event)
        if reset {
            // Forgotten only now: the revoke's updates remove what the client was shown, and
            // those removals belong to the target (a group's or chat's notifications) only
            // while the trail still knows whose they were.
            notifications.removeAll()
            neverShown.removeAll()
            outOfViewAtBase.removeAll()
            groups.removeAll()
            mutedUntil.removeAll()
            groupCountMax = 10
            groupSizeMax = 10
        }

        if effects.isEmpty && names(event) {
            effects.append(Effect(kind: "noEffect", text: "no effect on the target"))
        }
        if !effects.isEmpty {
            entries.append(Entry(seq: seq, event: event, effects: effects))
        }
    }

    /// Shown, hidden and shown-again effects, reconstructed from the update diffs.
    mutating func visibilityEffects(
        _ updates: [Update], createdNow: Set<Int64>, changedStatus: Set<Int64>, event: Event
    ) -> [Effect] {
        var effects: [Effect] = []
        var wasVisible: [Int64: Bool] = [:]
        var appeared: [Int64] = []
        var left: [Int64] = []
        for case .group(let update) in updates {
            let before = visible[update.groupId] ?? []
            wasVisible[update.groupId] = !before.isEmpty
            var after = before.subtracting(update.removedIds)
            after.formUnion(update.added.map(\.id))
            visible[update.groupId] = after.isEmpty ? nil : after
            if before.isEmpty && !after.isEmpty { appeared.append(update.groupId) }
            if !before.isEmpty && after.isEmpty { left.append(update.groupId) }
        }
        func describe(_ ids: [Int64]) -> String {
            ids.map { id in "group \(id)" + (groups[id].map { " (\($0.chat))" } ?? "") }.joined(separator: ", ")
        }
        for case .group(let update) in updates {
            let groupLeft = left.contains(update.groupId)
            for id in update.removedIds where isTarget(notification: id) {
                if changedStatus.contains(id) || notifications[id].map({ $0.status != .active }) ?? false {
                    effects.append(Effect(kind: "hidden", notificationId: id, groupId: update.groupId, text: "notification \(id) removed from view"))
                } else if groupLeft {
                    var text = "notification \(id) hidden: group \(update.groupId) left the top groupCountMax=\(groupCountMax) groups"
                    let others = appeared.filter { $0 != update.groupId }
                    // Only a group that got a notification from this event "got a newer
                    // notification"; others moved ahead because this group's newest active
                    // notification left (dismissed, cleared) or an upgrade changed a date.
                    let gotNewer = others.filter { group in createdNow.contains { notifications[$0]?.groupId == group } }
                    if case .options = event.payload {
                        text += " after the view options changed"
                    } else if !gotNewer.isEmpty {
                        text += " when \(describe(gotNewer)) got a newer notification"
                    } else if !others.isEmpty {
                        text += " when \(describe(others)) moved ahead of it, ordered by the date of each group's newest active notification"
                    }
                    effects.append(Effect(kind: "hidden", notificationId: id, groupId: update.groupId, text: text))
                } else {
                    let newer = update.added.map(\.id).filter { $0 > id }
                    var text = "notification \(id) hidden: group \(update.groupId) shows only its groupSizeMax=\(groupSizeMax) newest active notifications"
                    if !newer.isEmpty { text += "; newer notification \(newer.map(String.init).joined(separator: ", ")) took its place" }
                    effects.append(Effect(kind: "hidden", notificationId: id, groupId: update.groupId, text: text))
                }
            }
            for notification in update.added where isTarget(notification: notification.id) {
                let id = notification.id
                if createdNow.contains(id) {
                    let sound = update.isSilent || notification.silent ? "silently" : "with sound"
                    effects.append(Effect(kind: "shown", notificationId: id, groupId: update.groupId, text: "notification \(id) shown \(sound) in group \(update.groupId)"))
                    continue
                }
                let appearance = self.appearance(of: id)
                var cause: String
                if wasVisible[update.groupId] == false {
                    cause = "group \(update.groupId) \(appearance.groupArrival) the top groupCountMax=\(groupCountMax)"
                    // A group that gets a newer notification comes back by itself (and may
                    // push another out): that is the cause, not the group that left.
                    let newer = createdNow.filter { notifications[$0]?.groupId == update.groupId }.sorted()
                    if case .options = event.payload {
                        cause += " after the view options changed"
                    } else if !newer.isEmpty {
                        cause += " when it got newer notification \(newer.map(String.init).joined(separator: ", "))"
                    } else if !left.isEmpty {
                        cause += " when \(describe(left)) left the view"
                    }
                } else if case .options = event.payload {
                    // Only a larger groupSizeMax brings back a notification of a group
                    // that stays in view; no notification left it.
                    cause = "group \(update.groupId) now shows its groupSizeMax=\(groupSizeMax) newest active notifications after the view options changed"
                } else {
                    cause = "newer notifications left group \(update.groupId), making room"
                }
                effects.append(Effect(kind: appearance.kind, notificationId: id, groupId: update.groupId,
                    text: "notification \(id) \(appearance.verb): \(cause) (silently)\(appearance.caveat)"))
            }
            if isTarget(group: update.groupId) && update.added.isEmpty && update.removedIds.isEmpty {
                effects.append(Effect(kind: "groupTotal", groupId: update.groupId, text: "group \(update.groupId) total is now \(update.totalCount)"))
            }
        }
        for case .notification(let update) in updates where isTarget(notification: update.notification.id) {
            effects.append(Effect(kind: "contentUpdate", notificationId: update.notification.id, groupId: update.groupId,
                text: "clients told the new content of notification \(update.notification.id)"))
        }
        // A notification created where the client does not see it (its group is not among
        // the top groupCountMax, SEMANTICS §8) says so, rather than leaving "created" to
        // read as shown.
        for id in createdNow.sorted() where isTarget(notification: id) {
            guard let groupId = notifications[id]?.groupId, visible[groupId]?.contains(id) != true else { continue }
            neverShown.insert(id)
            var text = "notification \(id) not shown: "
            if groupCountMax == 0 {
                text += "groupCountMax=0 shows no group"
            } else {
                text += "group \(groupId) is not among the top groupCountMax=\(groupCountMax) groups, ordered by the date of their newest notification"
                if case .notify(let notify) = event.payload { text += " (this one's is \(notify.date))" }
            }
            effects.append(Effect(kind: "notShown", notificationId: id, groupId: groupId, text: text))
        }
        return effects
    }

    static func explain(_ reason: IgnoredReason) -> String {
        switch reason {
        case .duplicate: "an earlier event already named this object (redelivery or push + full message)"
        case .alreadyRead: "the chat was already read past it"
        case .deleted: "it was deleted before it arrived"
        case .muted: "the chat was muted at the message's date (it still counts as unread)"
        case .secretChatExists: "the chat already has a secret chat notification"
        case .historyCleared: "the chat's history was cleared past it"
        case .unreadOnly: "counted only: the message was delivered as unread only (no notification)"
        case .belowDismissalMark: "counted only: below the group's dismissal mark (the user dismissed the group past it)"
        }
    }

    /// Why a notification of `kind` was cleared for `reason` by `event`.
    ///
    /// A `chatSettings` may turn mentions and pinned messages off at once; which of the two
    /// cleared the notification is told by its kind (a pinned notification is cleared only
    /// by `disablePinned`, a mention or reaction only by `disableMentions`), not by the event.
    static func explain(_ reason: ClearReason, _ event: Event, kind: NotificationKind?) -> String {
        switch (reason, event.payload) {
        case (.read, .read(_, let maxId)) where kind == .secretChat: "the secret chat was opened (read up to #\(maxId))"
        case (.read, .read(_, let maxId)): "the chat was read up to #\(maxId)"
        case (.read, .readReactions): "the reactions were seen"
        case (.read, .readAll(nil)): "everything in the account was read"
        case (.read, .readAll): "everything in the chat was read"
        case (.read, .readMentions): "the mention was read"
        case (.read, _): "read"
        case (.deleted, .delete(_, let chat)): chat == nil ? "the message was deleted (account-wide delete)" : "the message was deleted"
        case (.deleted, .clearHistory(_, let maxId)): "the chat's history was cleared up to #\(maxId)"
        case (.deleted, _): "deleted"
        case (.ended, _): "the call ended or was answered elsewhere"
        case (.muted, _): "the chat was muted"
        case (.settings, _) where kind == .pinned: "pinned-message notifications were turned off for the chat"
        case (.settings, _): "mention notifications were turned off for the chat"
        case (.replaced, _) where kind == .secretChat: "the secret chat's first message ended its notice"
        case (.replaced, _): "a newer pinned message replaced it"
        }
    }
}
